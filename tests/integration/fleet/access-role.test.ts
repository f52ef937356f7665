import { parse } from 'yaml';
import { identityRole } from '../../../lib/fleet/identity-role';
import { adminAuth, auditRowOf, call, personaHeaders, tctl } from './support';

// Per-client access roles through the real HTTP stack and the fake cluster CLI: the YAML a viewer
// reads, and the administrators' create / refresh / refusal / overwrite, each audited
// `client.role.apply`, with the command lines the CLI was asked to run.

const roleIn = (name: string) => (tctl.readFixture('roles.json') as any[]).find((r) => r.metadata.name === name);

beforeEach(() => tctl.reset());
afterAll(() => tctl.reset());

it('GET: the role v7 YAML of the spec, for a viewer of the client', async () => {
  const r = await call('GET', '/api/clients/acme/access-role', await personaHeaders('viewer'));
  expect(r.status).toBe(200);
  expect(r.body.name).toBe('fleet-client-acme');
  expect(parse(r.body.yaml)).toEqual({
    kind: 'role',
    version: 'v7',
    metadata: { name: 'fleet-client-acme', description: 'Fleet technician scope: client acme (Acme Industries); RDP to its desktops and its apps only', labels: { 'fleet-managed': 'true', client_code: 'acme' } },
    spec: { allow: { app_labels: { client_code: 'acme' }, windows_desktop_labels: { client_code: 'acme' }, windows_desktop_logins: ['{{internal.windows_logins}}'] }, deny: {} },
  });
  expect((await call('GET', '/api/clients/ghost/access-role', await adminAuth())).status).toBe(404);
});

it('POST: creates a missing role (201), refreshes a managed one (200), audited', async () => {
  const admin = await adminAuth();
  let mark = tctl.mark();
  const c = await call('POST', '/api/clients/initech/access-role', { ...admin, body: {} });
  expect([c.status, c.body.outcome, c.body.name]).toEqual([201, 'created', 'fleet-client-initech']);
  expect(tctl.commandsSince(mark)).toEqual([['get', 'role/fleet-client-initech', '--format=json'], ['create']]);
  expect(roleIn('fleet-client-initech')).toMatchObject({ metadata: { labels: { 'fleet-managed': 'true', client_code: 'initech' } }, spec: { allow: { windows_desktop_labels: { client_code: 'initech' } } } });
  expect(await auditRowOf(c.correlationId)).toMatchObject({ event: 'client.role.apply', outcome: 'success', client: 'initech', target: { id: 'fleet-client-initech', kind: 'role' }, details: { outcome: 'created', overwrite: false } });
  mark = tctl.mark();
  const u = await call('POST', '/api/clients/acme/access-role', { ...admin, body: {} });
  expect([u.status, u.body.outcome]).toEqual([200, 'refreshed']);
  expect(tctl.commandsSince(mark)).toEqual([['get', 'role/fleet-client-acme', '--format=json'], ['create', '--force']]);
});

it('POST: refuses to replace a role the fleet did not create (409 would_overwrite, audited, nothing written); overwrite replaces it', async () => {
  const admin = await adminAuth();
  const roles = tctl.readFixture('roles.json') as any[];
  const theirs = { ...roles[0], metadata: { name: 'fleet-client-acme', labels: { owner: 'security-team' }, revision: 'theirs' }, spec: { ...roles[0].spec, allow: { logins: ['root'], node_labels: { '*': '*' } } } };
  tctl.writeFixture('roles.json', [theirs, ...roles.slice(1)]);
  const mark = tctl.mark();
  const r = await call('POST', '/api/clients/acme/access-role', { ...admin, body: {} });
  expect([r.status, r.body]).toEqual([409, { code: 'would_overwrite', name: 'fleet-client-acme' }]);
  expect(tctl.commandsSince(mark)).toEqual([['get', 'role/fleet-client-acme', '--format=json']]);
  expect(roleIn('fleet-client-acme')).toEqual(theirs);
  expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'client.role.apply', outcome: 'denied', reason: 'would_overwrite', client: 'acme' });
  expect((await call('POST', '/api/clients/acme/access-role', { ...admin, body: { overwrite: 'yes' } })).body.code).toBe('validation_failed');
  const o = await call('POST', '/api/clients/acme/access-role', { ...admin, body: { overwrite: true } });
  expect([o.status, o.body.outcome]).toEqual([200, 'replaced']);
  expect(roleIn('fleet-client-acme').metadata.labels).toEqual({ client_code: 'acme', 'fleet-managed': 'true' });
  expect(roleIn('fleet-client-acme').spec.allow.logins).toBeUndefined();
  expect(await auditRowOf(o.correlationId)).toMatchObject({ event: 'client.role.apply', outcome: 'success', details: { outcome: 'replaced', overwrite: true } });
});

it('POST: the identity role without role read or create answers 502 access_access_denied, audited error, nothing written', async () => {
  for (const verb of ['read', 'create']) {
    tctl.reset();
    const role = identityRole();
    role.spec.allow.rules = role.spec.allow.rules!.map((x) => (x.resources.includes('role') ? { ...x, verbs: x.verbs.filter((v) => v !== verb) } : x));
    tctl.control({ roles: [role] });
    const r = await call('POST', '/api/clients/initech/access-role', { ...(await adminAuth()), body: {} });
    expect([verb, r.status, r.body.code]).toEqual([verb, 502, 'access_access_denied']);
    expect(roleIn('fleet-client-initech')).toBeUndefined();
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'client.role.apply', outcome: 'error', reason: 'access_access_denied', client: 'initech' });
  }
});

it('POST: an operator of the client is refused (403 admin_required), the CLI never asked', async () => {
  const mark = tctl.mark();
  const r = await call('POST', '/api/clients/acme/access-role', { ...(await personaHeaders('operator')), body: { overwrite: true } });
  expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
  expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required', details: { route: 'POST /api/clients/{code}/access-role' } });
  expect(tctl.commandsSince(mark)).toEqual([]);
});
