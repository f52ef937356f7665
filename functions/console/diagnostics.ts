import { runDiagnostics } from '@lib/diagnostics';
import { lapsDiagnostics as runLapsDiagnostics } from '@lib/laps/diagnostics';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { diagnostics, lapsDiagnostics } from '@lib/api/console/settings';

const laps = defineRoute({
  method: 'GET',
  path: '/api/diagnostics/laps',
  longRead: true,
  summary: 'LAPS diagnostics: schema, identity, and the LAPS account’s rights on a sample computer per scope (the password is never fetched)',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: lapsDiagnostics },
  errors: { 503: ['directory_unavailable', 'laps_unavailable', 'not_configured'] },
  async handle({ rt }) {
    return { body: await runLapsDiagnostics(rt) };
  },
});

const all = defineRoute({
  method: 'GET',
  path: '/api/diagnostics',
  longRead: true,
  summary:
    'Every diagnostics check with its code, severity and remedy: each DC now, fewer than two DCs, the CA, the password service pin, step-up mode warnings, enrolment pending, the delegation export, and the LAPS section',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: diagnostics },
  errors: { 400: ['laps_identity_upn_missing', 'laps_right_refused', 'bitlocker_right_refused'], 409: ['delegation_identity_not_found', 'schema_name_unknown'], 503: ['directory_unavailable', 'laps_unavailable', 'not_configured'] },
  async handle({ rt }) {
    return { body: await runDiagnostics(rt) };
  },
});

export const routes = [all, laps];
export const handler = consoleHandler(routes);
