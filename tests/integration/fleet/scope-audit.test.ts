import { identityRole, type IdentityRole } from '../../../lib/fleet/identity-role';
import { mintToken } from '../../../local/fleet/issuer';
import { AUTOUPDATE_READER } from '../../../local/fleet/fake-tctl';
import { adminAuth, auditRowOf, auditRowsOf, auditRows, call, NODE, personaHeaders, stack, tctl } from './support';

// Issue 8, "Fleet scope and its audit", over real HTTP against the fleet stack and its fake
// cluster CLI (which enforces the shipped identity role).

const ACME_CONSOLE = stack.consoles.find((c) => c.clientCode === 'acme')!.id;
const alice = () => personaHeaders('operator'); // operator of acme
const bob = () => personaHeaders('viewer'); // viewer of acme and globex
const gina = async () => ({ assertion: await mintToken('tech-gina', ['fleet-client-globex']) }); // viewer of globex only
const olga = async () => ({ assertion: await mintToken('tech-olga', ['fleet-technician']) }); // operator of acme and globex (assigned below)
const lockCommands = (mark: number) => tctl.commandsSince(mark).filter((c) => c[0] === 'lock' || c[0] === 'rm');

/** acme-gw01 also serves a desktop labelled for globex: a shared gateway */
function shareAcmeGw01() {
  const desktops = tctl.readFixture('windows_desktops.json');
  desktops.push({ ...desktops[0], metadata: { ...desktops[0].metadata, name: 'globex-finance01', labels: { client_code: 'globex' } }, spec: { ...desktops[0].spec, addr: '10.99.0.7:3389', domain: 'globex.local' } });
  tctl.writeFixture('windows_desktops.json', desktops);
}

beforeAll(async () => {
  const r = await call('PUT', '/api/technicians', { ...(await adminAuth()), body: { username: 'tech-olga', clients: [{ code: 'acme', level: 'operator' }, { code: 'globex', level: 'operator' }] } });
  expect([200, 201]).toContain(r.status);
});
afterAll(async () => {
  await call('DELETE', '/api/technicians/tech-olga', await adminAuth());
  tctl.reset();
});
beforeEach(() => tctl.reset());

describe('a gateway serving desktops of several clients', () => {
  beforeEach(shareAcmeGw01);
  it("never shows a technician another client's desktop: detail, list, inventory CSV, gateways", async () => {
    const detail = await call('GET', `/api/nodes/${NODE.acmeGw01}`, await alice());
    expect(detail.status).toBe(200);
    expect(detail.body.desktops.map((d: any) => d.name).sort()).toEqual(['acme-app01', 'acme-dc01']);
    expect(detail.body).toMatchObject({ clientCode: 'acme', windowsServers: 2, shared: true });
    expect(detail.text).not.toMatch(/globex|10\.99\.0\.7/i);
    const list = await call('GET', '/api/nodes', await alice());
    expect(list.body.nodes.find((n: any) => n.id === NODE.acmeGw01)).toMatchObject({ windowsServers: 2, clientCodes: ['acme'] });
    expect(list.text).not.toMatch(/globex/i);
    const csv = await call('GET', '/api/nodes/inventory', await alice());
    expect(csv.text).not.toMatch(/globex|10\.99\.0\.7/i);
    const gateways = await call('GET', '/api/access/gateways', await alice());
    expect(gateways.text).not.toMatch(/globex/i);
  });
  it("shows a technician of the other client his desktop only, and a technician of both all of it", async () => {
    const g = await call('GET', `/api/nodes/${NODE.acmeGw01}`, await gina());
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ clientCode: 'globex', windowsServers: 1, desktops: [expect.objectContaining({ name: 'globex-finance01' })] });
    expect(g.text).not.toMatch(/acme-dc01|acme-app01/);
    const b = await call('GET', `/api/nodes/${NODE.acmeGw01}`, await bob());
    expect(b.body.desktops).toHaveLength(3);
    const admin = await call('GET', `/api/nodes/${NODE.acmeGw01}`, await adminAuth());
    expect(admin.body).toMatchObject({ clientCode: null, clientCodes: ['acme', 'globex'], windowsServers: 3 });
  });
  it('refuses a lock by an operator of only one of its clients: 403 client_scope, audited under his scope, CLI untouched', async () => {
    const mark = tctl.mark();
    for (const path of ['lock', 'unlock']) {
      const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/${path}`, { ...(await alice()), body: {} });
      expect([r.status, r.body]).toEqual([403, { code: 'client_scope' }]);
      expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'client_scope', client: 'acme', actor: { name: 'tech-alice' }, details: { requiredLevel: 'operator', clients: ['acme', 'globex'] } });
    }
    expect(lockCommands(mark)).toEqual([]);
    expect((await call('GET', `/api/nodes/${NODE.acmeGw01}`, await adminAuth())).body.locked).toBe(false);
    // a viewer of the other client: insufficient level, not a lock either
    const v = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await gina()), body: {} });
    expect([v.status, v.body.code]).toEqual([403, 'insufficient_level']);
  });
  it('lets an operator of every client it serves lock it, filed under each client', async () => {
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await olga()), body: { duration: 1, message: 'shared incident' } });
    expect(r.status).toBe(200);
    expect(await auditRowsOf(r.correlationId)).toEqual([
      expect.objectContaining({ event: 'node.lock', outcome: 'success', client: 'acme', actor: expect.objectContaining({ name: 'tech-olga' }) }),
      expect.objectContaining({ event: 'node.lock', outcome: 'success', client: 'globex' }),
    ]);
    const u = await call('POST', `/api/nodes/${NODE.acmeGw01}/unlock`, { ...(await adminAuth()), body: {} });
    expect((await auditRowsOf(u.correlationId)).map((x) => [x.event, x.client])).toEqual([['node.unlock', 'acme'], ['node.unlock', 'globex']]);
  });
  it('treats an unlabelled desktop beside labelled ones as a client that cannot be determined', async () => {
    const desktops = tctl.readFixture('windows_desktops.json').filter((d: any) => d.metadata.name !== 'globex-finance01');
    desktops.push({ ...desktops[0], metadata: { name: 'mystery01' }, spec: { ...desktops[0].spec, addr: '10.99.0.8:3389' } });
    tctl.writeFixture('windows_desktops.json', desktops);
    const d = await call('GET', `/api/nodes/${NODE.acmeGw01}`, await alice());
    expect(d.text).not.toContain('mystery01');
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await alice()), body: {} });
    expect([r.status, r.body.code]).toEqual([403, 'client_scope']);
  });
});

describe("refusals: filed under the caller's scope, read alike by technicians", () => {
  it('an out-of-scope id and an unknown id read the same in his audit view; the target client never sees the probe', async () => {
    const hidden = await call('GET', `/api/nodes/${NODE.globexGw01}`, await alice());
    const unknown = await call('GET', '/api/nodes/00000000-0000-4000-8000-00000000dead', await alice());
    expect([hidden.status, hidden.body]).toEqual([unknown.status, unknown.body]);
    // administrators tell them apart; both are filed under acme (alice's scope), not globex
    const [h, u] = [await auditRowOf(hidden.correlationId), await auditRowOf(unknown.correlationId)];
    expect([h.reason, h.client, h.details.client]).toEqual(['out_of_scope', 'acme', 'globex']);
    expect([u.reason, u.client, u.details.client]).toEqual(['not_found', 'acme', null]);
    // alice's own view: identical but for ids and times
    const mine = (await call('GET', '/api/audit?limit=50', await alice())).body.entries;
    const strip = (e: any) => (({ seq, at, id, correlationId, ...rest }) => rest)(e);
    const [mh, mu] = [mine.find((e: any) => e.correlationId === hidden.correlationId), mine.find((e: any) => e.correlationId === unknown.correlationId)];
    expect(mh).toBeDefined();
    expect(strip(mh)).toEqual(strip(mu));
    expect(JSON.stringify(mh)).not.toMatch(/globex|out_of_scope/);
    // globex's technicians do not see acme's technician probing them
    const globexView = (await call('GET', '/api/audit?limit=200', await gina())).body.entries;
    expect(globexView.some((e: any) => [hidden.correlationId, unknown.correlationId].includes(e.correlationId))).toBe(false);
  });
  it('a technician of several clients: a refusal outside them is filed under none of his clients, nor the target', async () => {
    const r = await call('GET', '/api/clients/initech', await bob());
    expect(r.status).toBe(404);
    const row = await auditRowOf(r.correlationId);
    expect(row).toMatchObject({ reason: 'out_of_scope', details: { client: 'initech' } });
    expect(row.client).toBeUndefined();
    const carol = (await call('GET', '/api/audit?limit=200', await personaHeaders('outsider'))).body.entries;
    expect(carol.some((e: any) => e.correlationId === r.correlationId)).toBe(false);
  });
});

describe('inventory export of several clients', () => {
  it("is filed under each client, each row with that client's lines; each client's viewers see theirs", async () => {
    const r = await call('GET', '/api/nodes/inventory', await bob());
    const rows = await auditRowsOf(r.correlationId);
    expect(rows.map((x) => [x.client, x.details.lines, x.details.proxies])).toEqual([['acme', 3, 2], ['globex', 1, 1]]);
    const aliceView = (await call('GET', '/api/audit?limit=100', await alice())).body.entries.filter((e: any) => e.correlationId === r.correlationId);
    expect(aliceView.map((e: any) => e.client)).toEqual(['acme']);
    const ginaView = (await call('GET', '/api/audit?limit=100', await gina())).body.entries.filter((e: any) => e.correlationId === r.correlationId);
    expect(ginaView.map((e: any) => e.client)).toEqual(['globex']);
  });
});

describe('auto-update view', () => {
  const ROLLOUT_GROUPS = ['canary', 'client-acme', 'client-globex', 'client-initech'];
  it('with the shipped identity role: 200 with access_denied warnings, nothing else', async () => {
    const r = await call('GET', '/api/access/autoupdate', await bob());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: null, targetVersion: null, rollout: null, notScheduled: null }); // no claim without the rollout
    expect(r.body.warnings.map((w: any) => [w.code, w.resource])).toEqual([
      ['access_denied', 'autoupdate_agent_rollout'],
      ['access_denied', 'autoupdate_config'],
      ['access_denied', 'autoupdate_version'],
    ]);
  });
  it("shows a technician only his clients' groups, never shared ones with fleet-wide counts", async () => {
    tctl.control({ roles: [identityRole(), AUTOUPDATE_READER] });
    const rollout = tctl.readFixture('autoupdate_agent_rollout.json');
    rollout[0].status.groups = ROLLOUT_GROUPS.map((name, i) => ({ ...rollout[0].status.groups[0], name, present_count: String(10 + i) }));
    tctl.writeFixture('autoupdate_agent_rollout.json', rollout);
    const names = async (who: { assertion?: string; token?: string }) => (await call('GET', '/api/access/autoupdate', who)).body.rollout.groups.map((g: any) => g.name);
    expect(await names(await alice())).toEqual(['client-acme']);
    expect(await names(await bob())).toEqual(['client-acme', 'client-globex']);
    expect(await names(await adminAuth())).toEqual(ROLLOUT_GROUPS);
  });
  it("shows each client's group the rollout does not hold as not scheduled, within the caller's scope (issue 31)", async () => {
    tctl.control({ roles: [identityRole(), AUTOUPDATE_READER] });
    const rollout = tctl.readFixture('autoupdate_agent_rollout.json');
    rollout[0].status.groups = ['canary', 'client-acme'].map((name) => ({ ...rollout[0].status.groups[0], name }));
    tctl.writeFixture('autoupdate_agent_rollout.json', rollout);
    const notScheduled = async (who: { assertion?: string; token?: string }) => (await call('GET', '/api/access/autoupdate', who)).body.notScheduled.map((g: any) => g.name);
    expect(await notScheduled(await alice())).toEqual([]);
    expect(await notScheduled(await bob())).toEqual(['client-globex']);
    const all = await notScheduled(await adminAuth());
    expect(all).toEqual(expect.arrayContaining(['client-globex', 'client-initech']));
    expect(all).not.toContain('client-acme');
  });
});

describe('a missing permission of the identity role fails, as in the cluster', () => {
  const without = (resource: string, verb: string): IdentityRole => {
    const role = identityRole();
    role.spec.allow.rules = role.spec.allow.rules!.map((r) => (r.resources.includes(resource) ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r));
    return role;
  };
  it('without instance list: the proxies answer 502 access_access_denied', async () => {
    tctl.control({ roles: [without('instance', 'list')] });
    const r = await call('GET', '/api/nodes', await adminAuth());
    expect([r.status, r.body]).toEqual([502, { code: 'access_access_denied' }]);
  });
  it('without lock update: a lock answers 502 lock_failed, audited error, no lock written', async () => {
    tctl.control({ roles: [without('lock', 'update')] });
    const before = tctl.readFixture('locks.json');
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await adminAuth()), body: {} });
    expect([r.status, r.body]).toEqual([502, { code: 'lock_failed' }]);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'node.lock', outcome: 'error', reason: 'lock_failed', client: 'acme' });
    expect(tctl.readFixture('locks.json')).toEqual(before);
  });
});

describe('inputs that answered 500 or slipped through', () => {
  it.each([
    ['an empty URL', { url: '' }],
    ['a blank URL', { url: '   ' }],
    ['a lone surrogate URL', { url: '\ud800' }],
    ['an http URL', { url: 'http://acme-hdc.clients.example' }],
  ])('PUT /api/consoles/{id} with %s answers 400 validation_failed, nothing changed', async (_n, body) => {
    const before = (await call('GET', `/api/consoles/${ACME_CONSOLE}`, await adminAuth())).body;
    const r = await call('PUT', `/api/consoles/${ACME_CONSOLE}`, { ...(await adminAuth()), body });
    expect([r.status, r.body.code]).toEqual([400, 'validation_failed']);
    expect((await call('GET', `/api/consoles/${ACME_CONSOLE}`, await adminAuth())).body).toEqual(before);
  });
  it.each([
    ['a lone high surrogate', '{"username":"tech-\\ud800","clients":[]}'],
    ['a lone low surrogate', '{"username":"\\udc00","clients":[]}'],
    ['an empty name', '{"username":"","clients":[]}'],
    ['a whitespace-only name', '{"username":"   ","clients":[]}'],
    ['a right-to-left override', '{"username":"tech-\\u202eecila","clients":[]}'],
  ])('refuses a technician name with %s (400), so none exists that cannot be deleted', async (_n, raw) => {
    const r = await call('PUT', '/api/technicians', { ...(await adminAuth()), body: raw });
    expect([r.status, r.body.code]).toEqual([400, 'validation_failed']);
  });
  it('creates and deletes a technician whose name has a surrogate pair and accents', async () => {
    const admin = await adminAuth();
    const username = 'tech-😀-José';
    expect((await call('PUT', '/api/technicians', { ...admin, body: { username, clients: [{ code: 'initech', level: 'viewer' }] } })).status).toBe(201);
    expect((await call('DELETE', `/api/technicians/${encodeURIComponent(username)}`, admin)).status).toBe(204);
    expect((await call('GET', '/api/technicians', admin)).body.technicians.map((t: any) => t.username)).not.toContain(username);
  });
  it('answers a technician a malformed name on an administrator route with 403 admin_required, audited', async () => {
    const r = await call('DELETE', '/api/technicians/tech-%E2%80%AEx', await alice());
    expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required', client: 'acme' });
  });
});

it('leaves the chain verifiable', async () => {
  expect((await call('GET', '/api/audit/verify', await adminAuth())).body).toMatchObject({ ok: true });
  expect((await auditRows(5)).length).toBeGreaterThan(0);
});
