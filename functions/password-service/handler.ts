import { loadConfig } from '@lib/config';
import { logger } from '@lib/log';
import { loadLinkKey } from '@lib/password-service/link';
import { PasswordService } from '@lib/password-service/service-side/service';
import { createStore } from '@lib/store';

// The password service: no HTTP route; invoked by the console over the signed internal link.
const { config, warnings } = loadConfig();
for (const w of warnings) logger.warn(w);
const service = new PasswordService(createStore(), config, process.env, () => loadLinkKey());

export const handler = async (event: unknown) => service.handle(event);
