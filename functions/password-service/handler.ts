import { loadConfig } from '@lib/config';
import { logger } from '@lib/log';
import { loadLinkKey } from '@lib/password-service/link';
import { PasswordService } from '@lib/password-service/service-side/service';
import { createStore } from '@lib/store';

// The password service: no HTTP route; invoked by the console over the signed internal link.
const { config, warnings } = loadConfig();
for (const w of warnings) logger.warn(w);
// its own store; on the embedded store the console's directory settings come from the console's
// file, opened read only (HDC_CONSOLE_SQLITE_FILE): the service reads them, the console never
// reaches the service's rows
const store = createStore();
const consoleFile = process.env.HDC_CONSOLE_SQLITE_FILE;
const settingsStore = consoleFile ? createStore({ sqliteFile: consoleFile, readOnly: true }) : store;
const service = new PasswordService(store, config, process.env, () => loadLinkKey(), settingsStore);

export const handler = async (event: unknown) => service.handle(event);
