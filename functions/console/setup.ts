import { completeSetup, setupInputSchema, setupOpen } from '@lib/setup';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';

const status = defineRoute({
  method: 'GET',
  path: '/api/setup',
  summary: 'Whether the instance is configured and whether setup is open',
  access: 'anonymous',
  async handle({ rt }) {
    return { body: { configured: !!(await rt.settings()), setupOpen: await setupOpen(rt.store) } };
  },
});

const complete = defineRoute({
  method: 'POST',
  path: '/api/setup',
  summary: 'First-run setup with the one-time setup token (header X-Setup-Token)',
  access: 'presession',
  body: setupInputSchema,
  async handle({ rt, body, header, sourceIp, correlationId }) {
    return { body: await completeSetup(rt, header('x-setup-token'), body, sourceIp, correlationId) };
  },
});

export const routes = [status, complete];
export const handler = consoleHandler(routes);
