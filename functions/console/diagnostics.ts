import { lapsDiagnostics } from '@lib/laps/diagnostics';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';

const laps = defineRoute({
  method: 'GET',
  path: '/api/diagnostics/laps',
  summary: 'LAPS diagnostics: schema, identity, and the LAPS account’s rights on a sample computer per scope (the password is never fetched)',
  access: 'operator',
  permission: 'settings.manage',
  async handle({ rt }) {
    return { body: await lapsDiagnostics(rt) };
  },
});

export const routes = [laps];
export const handler = consoleHandler(routes);
