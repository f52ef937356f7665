import { identityRole } from '../../../lib/fleet/identity-role';
import { AUTOUPDATE_READER } from '../../../local/fleet/fake-tctl';
import { adminAuth, auditRowOf, auditRowsOf, call, NODE, personaHeaders, tctl } from './support';

// Proxies through the fake cluster CLI: statuses, scope, lock/unlock and their audit rows, CLI
// failures, the inventory CSV.

beforeEach(() => tctl.reset());

const as = async (p: 'admin' | 'operator' | 'viewer' | 'outsider') => personaHeaders(p);

describe('GET /api/nodes', () => {
  it('lists client proxies with statuses and counts for the administrator', async () => {
    const r = await call('GET', '/api/nodes', await as('admin'));
    expect(r.status).toBe(200);
    expect(r.body.nodes.map((n: any) => [n.hostname, n.status])).toEqual([
      ['acme-gw01', 'online'],
      ['acme-gw02', 'locked'],
      ['globex-gw01', 'online'],
      ['globex-gw02', 'unreachable'],
    ]);
    expect(r.body.summary).toEqual({ total: 4, online: 2, slow: 0, unreachable: 1, locked: 1, outdated: 3 });
    expect(r.body.clusterVersion).toBe('18.4.2');
    const all = await call('GET', '/api/nodes?all=1&kind=auth', await as('admin'));
    expect(all.body.nodes.map((n: any) => n.hostname)).toEqual(['teleport-main']);
  });
  it('filters by scope, counts included: a technician never sees another client or the master', async () => {
    const r = await call('GET', '/api/nodes?all=1', await as('outsider'));
    expect(r.body.nodes).toEqual([]);
    expect(r.body.summary.total).toBe(0);
    const op = await call('GET', '/api/nodes?all=1', await as('operator'));
    expect(op.body.nodes.map((n: any) => n.hostname)).toEqual(['acme-gw01', 'acme-gw02']);
    expect(op.body.summary).toMatchObject({ total: 2, locked: 1 });
    expect((await call('GET', `/api/nodes/${NODE.master}`, await as('operator'))).status).toBe(404);
    expect((await call('GET', `/api/nodes/${NODE.globexGw01}`, await as('operator'))).status).toBe(404);
  });
  it('answers an out-of-scope id exactly like an unknown one', async () => {
    const out = await call('GET', `/api/nodes/${NODE.globexGw01}`, await as('operator'));
    const unknown = await call('GET', '/api/nodes/00000000-0000-0000-0000-000000000000', await as('operator'));
    expect([out.status, out.body]).toEqual([unknown.status, unknown.body]);
  });
  it('applies the deep-link filters and refuses unknown values with 400', async () => {
    expect((await call('GET', '/api/nodes?status=down', await as('admin'))).body.nodes.map((n: any) => n.hostname)).toEqual(['globex-gw02']);
    expect((await call('GET', '/api/nodes?q=Acme%20Industries', await as('admin'))).body.nodes).toHaveLength(2);
    expect((await call('GET', '/api/nodes?group=client', await as('admin'))).body.groups.map((g: any) => g.clientCode)).toEqual(['acme', 'globex', null]);
    const bad = await call('GET', '/api/nodes?status=sleepy', await as('admin'));
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
  it('shows a proxy with its desktops, locks and Connect links', async () => {
    const r = await call('GET', `/api/nodes/${NODE.acmeGw01}`, await as('viewer'));
    expect(r.body).toMatchObject({ hostname: 'acme-gw01', clientName: 'Acme Industries', windowsServers: 2, locks: [] });
    expect(r.body.desktops.map((d: any) => d.name).sort()).toEqual(['acme-app01', 'acme-dc01']);
    expect(r.body.desktops[0].connectUrl).toMatch(/^https:\/\/teleport\.hdc-local\.test:443\/web\/cluster\/hdc-local\//);
  });
  it.each([
    ['expired', 'access_credentials_expired'],
    ['denied', 'access_access_denied'],
    ['unavailable', 'access_unavailable'],
  ] as const)('maps a CLI failure (%s) to 502 %s', async (error, code) => {
    tctl.control({ fail: [{ match: 'inventory', error }] });
    const r = await call('GET', '/api/nodes', await as('admin'));
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ code });
  });
});

describe('lock and unlock', () => {
  it('locks with the exact command line, audited node.lock under the client', async () => {
    const mark = tctl.mark();
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await as('operator')), body: { duration: 12, message: 'Incident INC-9' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ locked: true, lockName: expect.any(String) });
    expect(r.body.pending).toBeUndefined();
    expect(tctl.commandsSince(mark).filter((c) => c[0] === 'lock')).toEqual([['lock', `--server-id=${NODE.acmeGw01}`, '--message=Incident INC-9', '--ttl=12h']]);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'node.lock', outcome: 'success', client: 'acme', actor: { name: 'tech-alice' }, target: { id: NODE.acmeGw01 } });
    expect((await call('GET', `/api/nodes/${NODE.acmeGw01}`, await as('viewer'))).body.status).toBe('locked');
  });
  it('says pending: true when the cluster cache lags', async () => {
    tctl.control({ lockPending: 1 });
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await as('admin')), body: {} });
    expect(r.body).toMatchObject({ locked: true, pending: true });
  });
  it.each([
    ['the master (Auth/Proxy)', NODE.master, 'protected_service'],
  ])('refuses %s with 409 protected_node, audited denied, never reaching the CLI', async (_n, id, reason) => {
    const mark = tctl.mark();
    const r = await call('POST', `/api/nodes/${id}/lock`, { ...(await as('admin')), body: {} });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ code: 'protected_node', reason });
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'node.lock', outcome: 'denied', reason: 'protected_node', details: { reason } });
    expect(tctl.commandsSince(mark).filter((c) => c[0] === 'lock')).toEqual([]);
  });
  it('refuses an unsupported kind (Kubernetes agent) with unsupported_kind', async () => {
    const inv = tctl.readFixture('inventory_ls.json');
    inv.push({ kind: 'instance', version: 'v1', metadata: { name: 'kube-1' }, spec: { version: '18.4.2', services: ['Kube'], hostname: 'acme-kube', last_seen: '2026-11-21T11:59:00Z' } });
    tctl.writeFixture('inventory_ls.json', inv);
    const mark = tctl.mark();
    const r = await call('POST', '/api/nodes/kube-1/lock', { ...(await as('admin')), body: {} });
    expect(r.body).toEqual({ code: 'protected_node', reason: 'unsupported_kind' });
    expect(tctl.commandsSince(mark).filter((c) => c[0] === 'lock')).toEqual([]);
  });
  it('answers 502 lock_failed when the fleet role cannot create locks, audited error', async () => {
    tctl.control({ fail: [{ match: 'lock', error: 'denied' }] });
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await as('admin')), body: {} });
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ code: 'lock_failed' });
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'node.lock', outcome: 'error', reason: 'lock_failed' });
  });
  it('refuses a bad body with 400 before touching the CLI', async () => {
    const mark = tctl.mark();
    for (const body of [{ duration: 2 }, { message: 'x'.repeat(201) }]) {
      const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await as('admin')), body });
      expect(r.status).toBe(400);
    }
    const r = await call('POST', `/api/nodes/${NODE.acmeGw01}/lock`, { ...(await as('admin')), body: '{}', headers: { 'content-type': 'text/plain' } });
    expect([r.status, r.body.code]).toEqual([415, 'json_required']);
    expect(tctl.commandsSince(mark).filter((c) => c[0] === 'lock')).toEqual([]);
  });
  it('unlock removes every active lock, audited node.unlock', async () => {
    const mark = tctl.mark();
    const r = await call('POST', `/api/nodes/${NODE.acmeGw02}/unlock`, { ...(await as('operator')), body: {} });
    expect(r.status).toBe(200);
    expect(r.body.removed.sort()).toEqual(['7d3e1b5a-9c42-4f08-b6d1-25e8a0c94f17', 'acme-gw02-decommission']);
    expect(tctl.commandsSince(mark).filter((c) => c[0] === 'rm').map((c) => c[1]).sort()).toEqual(['lock/7d3e1b5a-9c42-4f08-b6d1-25e8a0c94f17', 'lock/acme-gw02-decommission']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'node.unlock', outcome: 'success', client: 'acme' });
    expect((await call('GET', `/api/nodes/${NODE.acmeGw02}`, await as('viewer'))).body.status).toBe('slow');
  });
});

describe('GET /api/nodes/inventory', () => {
  it('answers CSV, one line per desktop, neutralised cells, audited nodes.export', async () => {
    const desktops = tctl.readFixture('windows_desktops.json');
    const evil = ['=cmd|calc', '+1', '-2', '@SUM(1)', '\tx', '\rx'];
    for (const [i, name] of evil.entries()) desktops.push({ ...desktops[0], metadata: { ...desktops[0].metadata, name } , spec: { ...desktops[0].spec, addr: `10.0.0.${i}:3389` } });
    tctl.writeFixture('windows_desktops.json', desktops);
    const r = await call('GET', '/api/nodes/inventory', await as('viewer'));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/csv/);
    const lines = r.text.trimEnd().split('\r\n');
    expect(lines[0].startsWith('client_code,client_name,proxy_id')).toBe(true);
    // tech-bob sees acme-gw01 (2 + 6 desktops), acme-gw02 (1), globex-gw01 (1)
    expect(lines).toHaveLength(1 + 8 + 1 + 1);
    for (const v of evil) expect(r.text).toContain(`'${v}`);
    expect(r.text).not.toMatch(/(^|,)[=+\-@]/m);
    // filed under each client it covers, with that client's lines (an export of several clients used to be filed under none)
    expect(await auditRowsOf(r.correlationId)).toEqual([
      expect.objectContaining({ event: 'nodes.export', outcome: 'success', client: 'acme', actor: expect.objectContaining({ name: 'tech-bob' }), details: expect.objectContaining({ lines: 9, proxies: 2 }) }),
      expect.objectContaining({ event: 'nodes.export', outcome: 'success', client: 'globex', details: expect.objectContaining({ lines: 1, proxies: 1 }) }),
    ]);
  });
  it('gives a proxy without desktops one line', async () => {
    const r = await call('GET', '/api/nodes/inventory?all=1&kind=auth', await adminAuth());
    expect(r.text.trimEnd().split('\r\n').slice(1)).toEqual([expect.stringMatching(/^,,0b6f3a9d-1e24-4c75-8d0f-92a6e3b4c5d7,teleport-main,auth,18.4.2,online,[^,]+,false,,,$/)]);
    expect(await auditRowsOf(r.correlationId)).toEqual([expect.objectContaining({ event: 'nodes.export', details: expect.objectContaining({ lines: 1, proxies: 1 }) })]);
    expect((await auditRowOf(r.correlationId)).client).toBeUndefined();
  });
});

describe('access views', () => {
  it('lists gateways in scope', async () => {
    const r = await call('GET', '/api/access/gateways', await as('viewer'));
    expect(r.body.gateways.map((g: any) => g.hostname)).toEqual(['acme-gw01', 'acme-gw02', 'globex-gw01']);
  });
  it('reads the auto-update rollout; a missing resource is a warning', async () => {
    tctl.control({ roles: [identityRole(), AUTOUPDATE_READER] }); // beyond the spec's identity role
    const r = await call('GET', '/api/access/autoupdate', await as('viewer'));
    expect(r.body).toMatchObject({ mode: 'enabled', targetVersion: '18.4.2', warnings: [] });
    tctl.control({ roles: [identityRole(), AUTOUPDATE_READER], fail: [{ match: 'get autoupdate_version', error: 'missing' }] });
    const w = await call('GET', '/api/access/autoupdate', await as('viewer'));
    expect(w.status).toBe(200);
    expect(w.body.warnings).toEqual([{ code: 'resource_missing', resource: 'autoupdate_version' }]);
  });
});
