import { runDiagnostics } from '@lib/diagnostics';
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

const all = defineRoute({
  method: 'GET',
  path: '/api/diagnostics',
  summary:
    'Every diagnostics check with its code, severity and remedy: each DC now, fewer than two DCs, the CA, the password service pin, step-up mode warnings, enrolment pending, the delegation export, and the LAPS section',
  access: 'operator',
  permission: 'settings.manage',
  async handle({ rt }) {
    return { body: await runDiagnostics(rt) };
  },
});

export const routes = [all, laps];
export const handler = consoleHandler(routes);
