import { fleetRoutes } from '../../../functions/fleet/all-routes';
import { fireAlert, resolveAlert } from '../../../lib/fleet/alerts/store';
import { adminAuth, auditRowOf, call, fleetStore, NODE, personaHeaders, stack, tctl, type Persona } from './support';

// The central guard, route by route: every route called as administrator, operator (tech-alice,
// acme), viewer (tech-bob, acme), out-of-scope technician (tech-carol, initech only) and
// anonymous. A refusal answers its status and code, is audited auth.forbidden (route, required
// level, client), and changes nothing: the register, assignments and consoles read the same
// afterwards and the cluster CLI was never asked to lock or remove anything.

const NO_CHANNEL = '00000000-0000-4000-8000-0000000000cc';
const ACME_CONSOLE = stack.consoles.find((c) => c.clientCode === 'acme')!.id;
// an active acme alert no rule decides about (its key matches no rule), planted for the acknowledge row
const GUARD_ALERT = `console:${ACME_CONSOLE}:guard-table`;
const SILENCE = { clientCode: 'acme', endsAt: new Date(Date.now() + 86_400_000).toISOString(), comment: 'guard table' };

/** audit.client: the target's client (details); audit.filed: the client the row is filed under (the caller's scope) */
type Outcome = { status: number; code?: string; audit?: { reason: string; requiredLevel: string; client: string | null; filed?: string } };
const ok = (status = 200): Outcome => ({ status });
const anon: Outcome = { status: 401, code: 'unauthenticated' };
// filed under the caller's scope: his one client (alice: acme, carol: initech), none for bob (two clients)
const adminOnly = (filed?: string): Outcome => ({ status: 403, code: 'admin_required', audit: { reason: 'admin_required', requiredLevel: 'admin', client: null, filed } });
// tech-carol's only client is initech: her probe of acme is filed under initech, never under acme
const hidden = (level: string): Outcome => ({ status: 404, code: 'not_found', audit: { reason: 'out_of_scope', requiredLevel: level, client: 'acme', filed: 'initech' } });
const tooLow = (level: string): Outcome => ({ status: 403, code: 'insufficient_level', audit: { reason: 'insufficient_level', requiredLevel: level, client: 'acme', filed: 'acme' } });

interface Row {
  route: string; // "METHOD /template" as the route declares it
  path: string;
  body?: unknown;
  expect: Record<Exclude<Persona, 'admin'>, Outcome>;
  /** the administrator's call, on a disposable target where the route changes something */
  admin: { path?: string; body?: unknown; status: number };
}

const signedIn = { operator: ok(), viewer: ok(), outsider: ok(), anonymous: anon };
const adminRoute = { operator: adminOnly('acme'), viewer: adminOnly(), outsider: adminOnly('initech'), anonymous: anon };

const TABLE: Row[] = [
  { route: 'GET /health/live', path: '/health/live', expect: { operator: ok(), viewer: ok(), outsider: ok(), anonymous: ok() }, admin: { status: 200 } },
  { route: 'GET /api/auth/me', path: '/api/auth/me', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/technicians', path: '/api/technicians', expect: adminRoute, admin: { status: 200 } },
  { route: 'PUT /api/technicians', path: '/api/technicians', body: { username: 'tech-alice', clients: [{ code: 'globex', level: 'operator' }] }, expect: adminRoute, admin: { body: { username: 'guard-temp', clients: [{ code: 'initech', level: 'viewer' }] }, status: 201 } },
  { route: 'DELETE /api/technicians/{username}', path: '/api/technicians/tech-bob', expect: adminRoute, admin: { path: '/api/technicians/guard-temp', status: 204 } },
  { route: 'GET /api/clients', path: '/api/clients', expect: signedIn, admin: { status: 200 } },
  { route: 'POST /api/clients', path: '/api/clients', body: { code: 'rogue', name: 'Rogue' }, expect: adminRoute, admin: { body: { code: 'guard-temp', name: 'Guard temp' }, status: 201 } },
  { route: 'GET /api/clients/{code}', path: '/api/clients/acme', expect: { operator: ok(), viewer: ok(), outsider: hidden('viewer'), anonymous: anon }, admin: { status: 200 } },
  { route: 'PUT /api/clients/{code}', path: '/api/clients/acme', body: { notes: 'Two gateways in Lyon' }, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  { route: 'DELETE /api/clients/{code}', path: '/api/clients/acme', expect: adminRoute, admin: { path: '/api/clients/guard-temp', status: 204 } },
  { route: 'GET /api/clients/{code}/access-role', path: '/api/clients/acme/access-role', expect: { operator: ok(), viewer: ok(), outsider: hidden('viewer'), anonymous: anon }, admin: { status: 200 } },
  // initech has no role in the fixtures: the administrator creates it (201)
  { route: 'POST /api/clients/{code}/access-role', path: '/api/clients/acme/access-role', body: {}, expect: adminRoute, admin: { path: '/api/clients/initech/access-role', status: 201 } },
  { route: 'GET /api/upgrades', path: '/api/upgrades', expect: signedIn, admin: { status: 200 } },
  { route: 'PUT /api/upgrades/settings', path: '/api/upgrades/settings', body: { targetTag: '' }, expect: adminRoute, admin: { status: 200 } },
  // no target set (beforeAll): an operator of the console's client passes the guard and gets 409 target_not_set
  { route: 'POST /api/upgrades/pack', path: '/api/upgrades/pack', body: { consoleIds: [ACME_CONSOLE], format: 'json' }, expect: { operator: { status: 409, code: 'target_not_set' }, viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 409 } },
  { route: 'GET /api/consoles', path: '/api/consoles', expect: signedIn, admin: { status: 200 } },
  { route: 'POST /api/consoles', path: '/api/consoles', body: { clientCode: 'acme', url: 'https://evil.example', token: 'x'.repeat(32) }, expect: adminRoute, admin: { body: { clientCode: 'initech', url: 'https://initech-hdc.clients.example', token: 'guard-temp-token-0123456789' }, status: 201 } },
  { route: 'GET /api/consoles/{id}', path: `/api/consoles/${ACME_CONSOLE}`, expect: { operator: ok(), viewer: ok(), outsider: hidden('viewer'), anonymous: anon }, admin: { status: 200 } },
  { route: 'PUT /api/consoles/{id}', path: `/api/consoles/${ACME_CONSOLE}`, body: { token: 'rotated-token-0123456789abcdef' }, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  { route: 'DELETE /api/consoles/{id}', path: `/api/consoles/${ACME_CONSOLE}`, expect: adminRoute, admin: { path: '/api/consoles/{created}', status: 204 } },
  { route: 'GET /api/audit', path: '/api/audit', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/audit/verify', path: '/api/audit/verify', expect: adminRoute, admin: { status: 200 } },
  { route: 'GET /api/nodes', path: '/api/nodes', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/nodes/inventory', path: '/api/nodes/inventory', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/nodes/{id}', path: `/api/nodes/${NODE.acmeGw01}`, expect: { operator: ok(), viewer: ok(), outsider: hidden('viewer'), anonymous: anon }, admin: { status: 200 } },
  { route: 'POST /api/nodes/{id}/lock', path: `/api/nodes/${NODE.acmeGw01}/lock`, body: { duration: 1 }, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  { route: 'POST /api/nodes/{id}/unlock', path: `/api/nodes/${NODE.acmeGw01}/unlock`, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  { route: 'GET /api/access/gateways', path: '/api/access/gateways', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/access/autoupdate', path: '/api/access/autoupdate', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/consoles/{id}/status', path: `/api/consoles/${ACME_CONSOLE}/status`, expect: { operator: ok(), viewer: ok(), outsider: hidden('viewer'), anonymous: anon }, admin: { status: 200 } },
  { route: 'POST /api/consoles/{id}/poll', path: `/api/consoles/${ACME_CONSOLE}/poll`, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  { route: 'GET /api/alerts', path: '/api/alerts', expect: signedIn, admin: { status: 200 } },
  { route: 'GET /api/alerts/settings', path: '/api/alerts/settings', expect: adminRoute, admin: { status: 200 } },
  { route: 'PUT /api/alerts/settings', path: '/api/alerts/settings', body: { failedLoginsThreshold: 20 }, expect: adminRoute, admin: { status: 200 } },
  { route: 'GET /api/alerts/channels', path: '/api/alerts/channels', expect: adminRoute, admin: { status: 200 } },
  { route: 'POST /api/alerts/channels', path: '/api/alerts/channels', body: { name: 'guard', type: 'chat', url: 'https://chat.example.test/hook/guard' }, expect: adminRoute, admin: { status: 201 } },
  // an unknown channel: administrators get 404, everyone else the admin refusal first
  { route: 'PUT /api/alerts/channels/{id}', path: `/api/alerts/channels/${NO_CHANNEL}`, body: { enabled: false }, expect: adminRoute, admin: { status: 404 } },
  { route: 'DELETE /api/alerts/channels/{id}', path: `/api/alerts/channels/${NO_CHANNEL}`, expect: adminRoute, admin: { status: 404 } },
  { route: 'POST /api/alerts/channels/{id}/test', path: `/api/alerts/channels/${NO_CHANNEL}/test`, expect: adminRoute, admin: { status: 404 } },
  // acting on alerts: operators of the alert's client (issue 29)
  { route: 'POST /api/alerts/{key}/acknowledge', path: `/api/alerts/${encodeURIComponent(GUARD_ALERT)}/acknowledge`, body: { comment: 'looking into it' }, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  {
    route: 'POST /api/alerts/silences',
    path: '/api/alerts/silences',
    body: SILENCE,
    expect: { operator: ok(201), viewer: tooLow('operator'), outsider: { status: 403, code: 'client_scope', audit: { reason: 'client_scope', requiredLevel: 'operator', client: 'acme', filed: 'initech' } }, anonymous: anon },
    admin: { status: 201 },
  },
  { route: 'DELETE /api/alerts/silences/{id}', path: '/api/alerts/silences/{silence}', expect: { operator: ok(204), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { path: '/api/alerts/silences/{adminSilence}', status: 204 } },
  // proxy deployments (an acme deployment made in beforeAll; the administrator acts on his own)
  { route: 'GET /api/deployment', path: '/api/deployment', expect: signedIn, admin: { status: 200 } },
  { route: 'POST /api/deployment/generate', path: '/api/deployment/generate', body: { clientCode: 'acme', hostname: 'rogue-gw', domain: 'acme.local' }, expect: adminRoute, admin: { body: { clientCode: 'acme', hostname: 'guard-gw-admin2', domain: 'acme.local' }, status: 201 } },
  { route: 'GET /api/deployment/{id}', path: '/api/deployment/{deployment}', expect: { operator: ok(), viewer: ok(), outsider: hidden('viewer'), anonymous: anon }, admin: { status: 200 } },
  { route: 'POST /api/deployment/{id}/validate', path: '/api/deployment/{deployment}/validate', body: {}, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { path: '/api/deployment/{adminDeployment}/validate', status: 200 } },
  { route: 'GET /api/deployment/{id}/preview', path: '/api/deployment/{deployment}/preview', expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { status: 200 } },
  { route: 'POST /api/deployment/{id}/directory', path: '/api/deployment/{deployment}/directory', body: {}, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { path: '/api/deployment/{adminDeployment}/directory', status: 200 } },
  { route: 'POST /api/deployment/{id}/finish', path: '/api/deployment/{deployment}/finish', body: {}, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { path: '/api/deployment/{adminDeployment}/finish', status: 200 } },
  { route: 'POST /api/deployment/{id}/desktop-check', path: '/api/deployment/{deployment}/desktop-check', body: {}, expect: { operator: ok(), viewer: tooLow('operator'), outsider: hidden('operator'), anonymous: anon }, admin: { path: '/api/deployment/{adminDeployment}/desktop-check', status: 200 } },
  // join tokens: administrators only, always; the console instance bundle: operators of the client named
  { route: 'POST /api/bundles/proxy-token', path: '/api/bundles/proxy-token', body: { clientCode: 'acme' }, expect: adminRoute, admin: { status: 201 } },
  { route: 'GET /api/bundles/proxy-tokens', path: '/api/bundles/proxy-tokens', expect: adminRoute, admin: { status: 200 } },
  { route: 'DELETE /api/bundles/proxy-token/{tokenId}', path: `/api/bundles/proxy-token/${'0'.repeat(24)}`, expect: adminRoute, admin: { status: 404 } },
  {
    route: 'POST /api/bundles/console-instance',
    path: '/api/bundles/console-instance',
    body: { clientCode: 'acme', host: 'hdc.acme.example' },
    expect: { operator: ok(), viewer: tooLow('operator'), outsider: { status: 403, code: 'client_scope', audit: { reason: 'client_scope', requiredLevel: 'operator', client: 'acme', filed: 'initech' } }, anonymous: anon },
    admin: { status: 200 },
  },
  // issue 31: the cluster bundle and the console integration routes, administrators only (an operator used to get 404)
  { route: 'POST /api/bundles/cluster', path: '/api/bundles/cluster', body: { clientCode: 'acme' }, expect: adminRoute, admin: { status: 200 } },
  { route: 'GET /api/hdc/consoles', path: '/api/hdc/consoles', expect: adminRoute, admin: { status: 200 } },
  { route: 'GET /api/hdc/consoles/{id}/registration', path: `/api/hdc/consoles/${ACME_CONSOLE}/registration`, expect: adminRoute, admin: { status: 200 } },
];
// The local login is anonymous by design (it is how the administrator signs in): tests in auth.test.ts.
const ANONYMOUS_BY_DESIGN = ['POST /api/auth/login'];

const METHOD = (route: string) => route.split(' ')[0];

async function state() {
  const auth = await adminAuth();
  const [clients, technicians, consoles, deployments, tokens, alerts] = await Promise.all(['/api/clients', '/api/technicians', '/api/consoles', '/api/deployment', '/api/bundles/proxy-tokens', '/api/alerts'].map((p) => call('GET', p, auth)));
  // join tokens by handle (the fake shifts their expiry to the clock at each read); consoles
  // without their last poll (the scheduled poll may run meanwhile); alerts: silences and acknowledges only
  return {
    clients: clients.body,
    technicians: technicians.body,
    consoles: consoles.body?.consoles?.map(({ poll: _p, ...c }: any) => c),
    deployments: deployments.body,
    tokens: tokens.body?.tokens?.map((t: any) => t.tokenId).sort(),
    silences: alerts.body?.silences?.map((x: any) => x.id).sort(),
    acknowledged: alerts.body?.active?.filter((a: any) => a.acknowledged).map((a: any) => `${a.key} ${a.acknowledged.at}`).sort(),
  };
}

const made = { deployment: '', adminDeployment: '', silence: '', adminSilence: '' };
const fill = (p: string) => p.replace('{deployment}', made.deployment).replace('{adminDeployment}', made.adminDeployment).replace('{silence}', made.silence).replace('{adminSilence}', made.adminSilence);

beforeAll(async () => {
  tctl.reset();
  const auth = await adminAuth();
  // no upgrade target: the pack row's outcome does not depend on what other files planned
  expect((await call('PUT', '/api/upgrades/settings', { ...auth, body: { targetTag: '' } })).status).toBe(200);
  for (const [key, hostname] of [['deployment', 'guard-gw-op'], ['adminDeployment', 'guard-gw-admin']] as const) {
    const r = await call('POST', '/api/deployment/generate', { ...auth, body: { clientCode: 'acme', hostname, domain: 'acme.local' } });
    if (r.status !== 201) throw new Error(`deployment generate: ${r.status} ${r.text.slice(0, 200)}`);
    made[key] = r.body.deployment.id;
  }
  const at = new Date().toISOString();
  await fireAlert(fleetStore(), { key: GUARD_ALERT, kind: 'console_dc_down', severity: 'warning', clientCode: 'acme', subject: 'Guard table alert', params: {}, link: `/consoles/${ACME_CONSOLE}`, consoleId: ACME_CONSOLE, firedAt: at, updatedAt: at });
  for (const key of ['silence', 'adminSilence'] as const) {
    const r = await call('POST', '/api/alerts/silences', { ...auth, body: SILENCE });
    if (r.status !== 201) throw new Error(`silence: ${r.status} ${r.text.slice(0, 200)}`);
    made[key] = r.body.id;
  }
});
afterAll(async () => {
  await resolveAlert(fleetStore(), GUARD_ALERT);
  const auth = await adminAuth();
  for (const s of (await call('GET', '/api/alerts', auth)).body.silences ?? []) if (s.comment === SILENCE.comment) await call('DELETE', `/api/alerts/silences/${s.id}`, auth);
});

it('covers every route the fleet plane declares', () => {
  const declared = Object.values(fleetRoutes)
    .flat()
    .map((r) => `${r.method} ${r.path}`)
    .filter((r) => !ANONYMOUS_BY_DESIGN.includes(r))
    .sort();
  expect(TABLE.map((r) => r.route).sort()).toEqual(declared);
});

describe.each(['anonymous', 'outsider', 'viewer', 'operator'] as const)('as %s', (persona) => {
  it.each(TABLE.map((r) => [r.route, r] as const))('%s', async (_name, row) => {
    const expected = row.expect[persona];
    const before = await state();
    const mark = tctl.mark();
    const r = await call(METHOD(row.route), fill(row.path), { ...(await personaHeaders(persona)), body: row.body });
    expect({ status: r.status, code: r.body?.code }).toEqual({ status: expected.status, code: expected.code ?? r.body?.code });
    const row_ = await auditRowOf(r.correlationId);
    if (expected.audit) {
      expect(row_).toMatchObject({ event: 'auth.forbidden', outcome: 'denied', reason: expected.audit.reason, details: { route: row.route, requiredLevel: expected.audit.requiredLevel, client: expected.audit.client } });
      expect(row_.actor.name).toBe({ operator: 'tech-alice', viewer: 'tech-bob', outsider: 'tech-carol' }[persona as 'operator']);
      expect(row_.client).toBe(expected.audit.filed);
    }
    if (expected.status >= 400) {
      if (!expected.audit) expect(row_).toBeUndefined(); // anonymous calls are not audited (docs/decisions-fleet.md)
      expect(await state()).toEqual(before);
      // never reached the cluster CLI with a change
      expect(tctl.commandsSince(mark).filter((c) => c[0] === 'lock' || c[0] === 'rm' || c[0] === 'create' || (c[0] === 'tokens' && c[1] !== 'ls'))).toEqual([]);
    }
  });
});

describe('as administrator', () => {
  let createdConsole = '';
  it.each(TABLE.map((r) => [r.route, r] as const))('%s', async (_name, row) => {
    let path = fill(row.admin.path ?? row.path);
    if (path.includes('{created}')) path = path.replace('{created}', createdConsole);
    const r = await call(METHOD(row.route), path, { ...(await personaHeaders('admin')), body: row.admin.body ?? row.body });
    expect(r.status).toBe(row.admin.status);
    if (row.route === 'POST /api/consoles') createdConsole = r.body.id;
    expect((await auditRowOf(r.correlationId))?.event).not.toBe('auth.forbidden');
  });
});
