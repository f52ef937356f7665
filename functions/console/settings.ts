import { z } from 'zod';
import { updateStepUpMode } from '@lib/setup/step-up-mode';
import { STEP_UP_MODES } from '@lib/setup/settings';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';

const stepUpMode = defineRoute({
  method: 'PUT',
  path: '/api/settings/step-up-mode',
  summary: "Change the step-up mode (needs the current mode's step-up; audited settings.step_up_mode)",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ mode: z.enum(STEP_UP_MODES) }),
  async handle({ rt, body, operator, sourceIp, correlationId }) {
    return { body: await updateStepUpMode(rt, body.mode, { id: operator!.guid, name: operator!.username, ip: sourceIp }, correlationId) };
  },
});

export const routes = [stepUpMode];
export const handler = consoleHandler(routes);
