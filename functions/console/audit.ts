import { consoleHandler } from '@lib/http/lambda';
import { defineRoute } from '@lib/http/route';

const verify = defineRoute({
  method: 'GET',
  path: '/api/audit/verify',
  summary: 'Whether the audit hash chain verifies; if not, the first bad row',
  access: 'operator',
  permission: 'audit.read',
  async handle({ rt }) {
    return { body: await rt.audit.verify() };
  },
});

export const routes = [verify];
export const handler = consoleHandler(routes);
