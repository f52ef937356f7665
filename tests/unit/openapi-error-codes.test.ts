import fs from 'node:fs';
import path from 'node:path';
import { consoleDocument } from '../../functions/console/openapi';
import { fleetDocument } from '../../functions/fleet/openapi';
import { reachableErrors } from '../support/reachable-errors';

// Every error code a route's own code can throw (read from the code: tests/support/
// reachable-errors.ts) is one its OpenAPI operation declares for that status (issue 30): a new
// refusal in lib/ that its route does not declare fails here, before any traffic meets it.
const ROOT = path.resolve(__dirname, '../..');
const files = ['console', 'fleet'].flatMap((app) =>
  fs
    .readdirSync(path.join(ROOT, 'functions', app))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `functions/${app}/${f}`),
);

/** Reachable in the code, never in an answer: what the route turns it into instead. */
const NOT_ANSWERED: Record<string, string> = {
  // the password service client's own failure, which a reset answers as reset_unavailable (lib/actions/index.ts)
  '503 laps_unavailable @ console POST /api/users/{id}/reset-password': 'reset_unavailable',
  '503 laps_unavailable @ console POST /api/users/{id}/unlock': 'no password service call',
  '503 laps_unavailable @ console POST /api/users/{id}/disable': 'no password service call',
  '503 laps_unavailable @ console POST /api/users/{id}/enable': 'no password service call',
  '503 laps_unavailable @ console PUT /api/users/{id}/attributes': 'no password service call',
  '503 laps_unavailable @ console POST /api/groups/{id}/members': 'no password service call',
  '503 laps_unavailable @ console DELETE /api/groups/{id}/members/{memberId}': 'no password service call',
  // the directory pool's outcome-unknown is a change's; the status only reads and binds
  '502 directory_outcome_unknown @ console GET /api/fleet/v1/status': 'reads only',
};

describe('the error codes in the OpenAPI documents', () => {
  const docs = { console: consoleDocument({ helpdeskEnabled: true }), fleet: fleetDocument() };
  const routes = reachableErrors(ROOT, files);

  it('found the routes in the code', () => {
    expect(routes.filter((r) => r.app === 'console').length).toBeGreaterThan(80);
    expect(routes.filter((r) => r.app === 'fleet').length).toBeGreaterThan(50);
    expect(routes.find((r) => r.path === '/api/users/{id}/unlock')).toBeDefined();
  });

  it('declare every code a route can throw, under its status', () => {
    const missing: string[] = [];
    for (const r of routes) {
      const op = (docs[r.app].paths as Record<string, Record<string, { responses: Record<string, any> }>>)[r.path]?.[r.method.toLowerCase()];
      if (!op) {
        missing.push(`${r.app} ${r.method} ${r.path}: no operation`);
        continue;
      }
      for (const [status, codes] of Object.entries(r.errors)) {
        const schema = op.responses[status]?.content?.['application/json']?.schema?.properties?.code;
        const exact = new Set<string>([...(schema?.enum ?? []), ...(schema?.anyOf ?? []).flatMap((a: { enum?: string[] }) => a.enum ?? [])]);
        const families = (schema?.anyOf ?? []).filter((a: { pattern?: string }) => a.pattern).map((a: { pattern: string }) => new RegExp(a.pattern));
        for (const code of codes) {
          const key = `${status} ${code} @ ${r.app} ${r.method} ${r.path}`;
          if (!exact.has(code) && !families.some((f: RegExp) => f.test(code)) && !NOT_ANSWERED[key]) missing.push(key);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
