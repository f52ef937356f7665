import { completeSetup, setupInputSchema, setupOpen } from '@lib/setup';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { setupDone, setupState } from '@lib/api/console/session';

const status = defineRoute({
  method: 'GET',
  path: '/api/setup',
  summary: 'Whether the instance is configured and whether setup is open',
  access: 'anonymous',
  responses: { 200: setupState },
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
  openapi: { parameters: [{ name: 'X-Setup-Token', in: 'header', required: true, description: 'the one-time setup token the instance printed at its first start' }] },
  responses: { 200: setupDone },
  errors: {
    400: ['ca_contains_private_key', 'group_not_found', 'invalid_dc_url', 'laps_account_not_allowed', 'ldaps_port_refused', 'ldaps_required', 'no_dc_reachable', 'not_an_ou', 'ou_not_below_domain_root', 'ou_not_found', 'read_account_rejected', 'super_administrator_not_found', 'write_account_rejected'],
    403: ['setup_token_invalid'],
    409: ['settings_changed_concurrently', 'setup_closed'],
    502: ['directory_outcome_unknown'],
    503: ['directory_unavailable'],
  },
  async handle({ rt, body, header, sourceIp, correlationId }) {
    return { body: await completeSetup(rt, header('x-setup-token'), body, sourceIp, correlationId) };
  },
});

export const routes = [status, complete];
export const handler = consoleHandler(routes);
