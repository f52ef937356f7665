import { logger } from '../../../lib/log';
import { fleetInProcess } from './in-process';

// Issue 31, item 3: the console integration routes (/api/hdc/*) and the cluster bundle,
// administrators only (fleet spec, Levels), in the shapes docs/decisions.md gives them.

let f: Awaited<ReturnType<typeof fleetInProcess>>;
let consoleId = '';
const TOKEN = 'console-status-token-0123456789abcdef';

beforeAll(async () => {
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true); // the audit stream
  f = await fleetInProcess();
  expect((await f.call('POST', '/api/clients', f.admin, { code: 'acme', name: 'Acme' })).status).toBe(201);
  const c = await f.call('POST', '/api/consoles', f.admin, { clientCode: 'acme', url: 'https://hdc.acme.example', token: TOKEN });
  expect(c.status).toBe(201);
  consoleId = c.body.id;
  expect((await f.call('PUT', '/api/technicians', f.admin, { username: 'tech-alice', clients: [{ code: 'acme', level: 'operator' }] })).status).toBe(201);
});
afterAll(() => jest.restoreAllMocks());

describe('the console integration routes', () => {
  it("answer an administrator each console's registration, never its token", async () => {
    const all = await f.call('GET', '/api/hdc/consoles', f.admin);
    expect(all.status).toBe(200);
    expect(all.body.consoles).toEqual([
      expect.objectContaining({ id: consoleId, clientCode: 'acme', clientName: 'Acme', consoleUrl: 'https://hdc.acme.example', statusUrl: 'https://hdc.acme.example/api/fleet/v1/status', appName: 'acme-hdc', clientRole: 'fleet-client-acme', tokenSet: true, ca: null }),
    ]);
    const one = await f.call('GET', `/api/hdc/consoles/${consoleId}/registration`, f.admin);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all.body.consoles[0]);
    expect(all.text + one.text).not.toContain(TOKEN);
  });

  it('answer 404 for an unknown console, like any unknown id', async () => {
    const r = await f.call('GET', '/api/hdc/consoles/00000000-0000-4000-8000-000000000000/registration', f.admin);
    expect([r.status, r.body.code]).toEqual([404, 'not_found']);
  });

  it('refuse an operator of the client with 403 admin_required, audited auth.forbidden', async () => {
    const op = await f.platform('tech-alice', ['fleet-technician']);
    for (const path of ['/api/hdc/consoles', `/api/hdc/consoles/${consoleId}/registration`]) {
      const r = await f.call('GET', path, op);
      expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
      expect(r.text).not.toContain('hdc.acme.example');
    }
    const refusals = (await f.auditRows()).filter((x) => x.event === 'auth.forbidden');
    expect(refusals.map((x) => x.details?.route)).toEqual(expect.arrayContaining(['GET /api/hdc/consoles', 'GET /api/hdc/consoles/{id}/registration']));
    expect(refusals.every((x) => x.reason === 'admin_required' && x.actor?.name === 'tech-alice')).toBe(true);
  });

  it('refuse a caller without a token with 401', async () => {
    expect((await f.call('GET', '/api/hdc/consoles')).status).toBe(401);
  });
});

describe('the cluster bundle', () => {
  it("gives an administrator the new client's role, update group and steps, audited bundle.cluster", async () => {
    const r = await f.call('POST', '/api/bundles/cluster', f.admin, { clientCode: 'acme' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ clientCode: 'acme', role: 'fleet-client-acme', updateGroup: 'client-acme', appName: 'acme-hdc' });
    expect(r.body.files.map((x: any) => x.path)).toEqual(['fleet-client-acme.yaml', 'autoupdate-group.yaml', 'README.md']);
    const role = await f.call('GET', '/api/clients/acme/access-role', f.admin);
    expect(r.body.files[0].content).toBe(role.body.yaml); // the same role as the access-role route
    expect(r.body.files[1].content).toContain('name: "client-acme"');
    const rows = await f.auditRows();
    expect(rows.at(-1)).toMatchObject({ event: 'bundle.cluster', outcome: 'success', client: 'acme', actor: { name: 'admin' } });
  });

  it('answers 400 unknown_client for an unregistered client, and 400 for a malformed code', async () => {
    const ghost = await f.call('POST', '/api/bundles/cluster', f.admin, { clientCode: 'ghost' });
    expect([ghost.status, ghost.body.code]).toEqual([400, 'unknown_client']);
    expect((await f.call('POST', '/api/bundles/cluster', f.admin, { clientCode: 'Not A Code' })).status).toBe(400);
  });

  it('refuses an operator of the client with 403 admin_required, and writes no bundle row', async () => {
    const before = (await f.auditRows()).filter((x) => x.event === 'bundle.cluster').length;
    const r = await f.call('POST', '/api/bundles/cluster', await f.platform('tech-alice', ['fleet-technician']), { clientCode: 'acme' });
    expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
    const rows = await f.auditRows();
    expect(rows.filter((x) => x.event === 'bundle.cluster').length).toBe(before);
    expect(rows.at(-1)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required', details: { route: 'POST /api/bundles/cluster' } });
  });
});
