import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { RUN_DIR } from '../../../local/processes';
import { adminAuth, auditRowOf, auditRows, auditRowsOf, call, personaHeaders, fleetStore, stack, tctl } from './support';

// Proxy deployments and join tokens through the real HTTP stack, DynamoDB Local and the fake
// tctl (tokens add/ls/rm with the identity role's token rule). Every token value answered here is
// collected and searched for at the end in the audit chain, the table and the fleet's process log.

const store = fleetStore();
const issued: string[] = [];
const tokensInCluster = (): any[] => tctl.readFixture('tokens.json');
const hasToken = (t: string) => tokensInCluster().some((x) => x.metadata.name === t);

/** the shipped identity role minus one verb on token (COMMANDS.md: the cluster's access-denied text) */
function roleWithoutTokenVerb(verb: string) {
  const YAML = require('yaml');
  const role = YAML.parse(fs.readFileSync(path.resolve(__dirname, '../../../lib/fleet/identity-role.yaml'), 'utf8'));
  for (const r of role.spec.allow.rules) if (r.resources.includes('token')) r.verbs = r.verbs.filter((v: string) => v !== verb);
  return [role];
}

/** The new proxy shows up in the cluster: an instance, its desktop service and one desktop (fixture time). */
function newProxyAppears(hostname: string, clientCode = 'acme') {
  const id = randomUUID();
  const t = '2026-11-21T11:59:30Z'; // 30 s before the fixtures' "now"
  tctl.writeFixture('inventory_ls.json', [...tctl.readFixture('inventory_ls.json'), { kind: 'instance', version: 'v1', metadata: { name: id, expires: '2026-11-21T12:59:30Z', revision: randomUUID() }, spec: { version: '18.4.2', services: ['WindowsDesktop'], hostname, auth_id: '0b6f3a9d-1e24-4c75-8d0f-92a6e3b4c5d7', last_seen: t } }]);
  tctl.writeFixture('windows_desktop_service.json', [...tctl.readFixture('windows_desktop_service.json'), { kind: 'windows_desktop_service', version: 'v3', metadata: { name: id, expires: '2026-11-21T12:09:30Z', revision: randomUUID() }, spec: { addr: '@local-windows-desktop', teleport_version: '18.4.2', hostname } }]);
  tctl.writeFixture('windows_desktops.json', [...tctl.readFixture('windows_desktops.json'), { kind: 'windows_desktop', version: 'v3', metadata: { name: `${hostname}-app`, labels: { client_code: clientCode }, expires: '2026-11-21T12:09:30Z', revision: randomUUID() }, spec: { addr: '10.20.0.77:3389', domain: 'acme.local', host_id: id, non_ad: false } }]);
  return id;
}

async function generate(hostname: string, extra: Record<string, unknown> = {}) {
  const r = await call('POST', '/api/deployment/generate', { ...(await adminAuth()), body: { clientCode: 'acme', hostname, domain: 'acme.local', ...extra } });
  expect(r.status).toBe(201);
  issued.push(r.body.joinToken.token);
  return r;
}

/** generated → validated → finished, as the client's operator */
async function toFinished(id: string) {
  const op = await personaHeaders('operator');
  expect((await call('POST', `/api/deployment/${id}/validate`, { ...op, body: {} })).body).toMatchObject({ valid: true });
  expect((await call('POST', `/api/deployment/${id}/finish`, { ...op, body: {} })).body.deployment.state).toBe('finished');
}

beforeEach(() => tctl.reset());

describe('POST /api/deployment/generate', () => {
  it('creates the deployment and a labelled join token (shown once), audited without the secret', async () => {
    const mark = tctl.mark();
    const r = await generate(`dep-gw-${Date.now() % 100000}`);
    const { deployment, joinToken } = r.body;
    expect(deployment).toMatchObject({ clientCode: 'acme', state: 'generated', revocation: 'pending', ldapAddress: 'acme.local:636', tokenId: joinToken.tokenId });
    expect(deployment).not.toHaveProperty('tokenHash');
    expect(joinToken).toMatchObject({ token: expect.stringMatching(/^[0-9a-f]{32}$/), roles: ['WindowsDesktop'], file: '/var/lib/teleport/join-token' });
    expect(tctl.commandsSince(mark)).toEqual([['tokens', 'add', '--type=windowsdesktop', `--labels=client_code=acme,fleet-deployment=${deployment.id},fleet-managed=true`, '--ttl=4h', '--format=json']]);
    expect(hasToken(joinToken.token)).toBe(true);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'deployment.generate', outcome: 'success', client: 'acme', target: { id: deployment.id, kind: 'deployment' }, details: { joinHandle: joinToken.tokenId, ttlHours: 4 } });
    // the status is the client's viewers' to see, without the token
    const v = await call('GET', `/api/deployment/${deployment.id}`, await personaHeaders('viewer'));
    expect(v.status).toBe(200);
    expect(v.text).not.toContain(joinToken.token);
    expect((await call('GET', '/api/deployment', await personaHeaders('outsider'))).body.deployments.some((d: any) => d.id === deployment.id)).toBe(false);
  });
  it('refuses an operator (403 admin_required, audited): no token, no deployment', async () => {
    const before = (await call('GET', '/api/deployment', await adminAuth())).body.deployments.length;
    const tokens = tokensInCluster().length;
    const mark = tctl.mark();
    const r = await call('POST', '/api/deployment/generate', { ...(await personaHeaders('operator')), body: { clientCode: 'acme', hostname: 'sneaky-gw', domain: 'acme.local' } });
    expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required', details: { route: 'POST /api/deployment/generate' } });
    expect(tctl.commandsSince(mark)).toEqual([]);
    expect(tokensInCluster()).toHaveLength(tokens);
    expect((await call('GET', '/api/deployment', await adminAuth())).body.deployments.length).toBe(before);
  });
  it('refuses an unregistered client (400 unknown_client) before any token', async () => {
    const mark = tctl.mark();
    const r = await call('POST', '/api/deployment/generate', { ...(await adminAuth()), body: { clientCode: 'ghost', hostname: 'g-gw', domain: 'ghost.local' } });
    expect([r.status, r.body.code]).toEqual([400, 'unknown_client']);
    expect(tctl.commandsSince(mark)).toEqual([]);
  });
  it('without token create in the cluster: 502 access_access_denied, audited error, no deployment', async () => {
    tctl.control({ roles: roleWithoutTokenVerb('create') });
    const before = (await call('GET', '/api/deployment', await adminAuth())).body.deployments.length;
    const r = await call('POST', '/api/deployment/generate', { ...(await adminAuth()), body: { clientCode: 'acme', hostname: 'denied-gw', domain: 'acme.local' } });
    expect([r.status, r.body.code]).toEqual([502, 'access_access_denied']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'deployment.generate', outcome: 'error', reason: 'access_access_denied', client: 'acme' });
    expect((await call('GET', '/api/deployment', await adminAuth())).body.deployments.length).toBe(before);
  });
});

describe('the guided install, as the client operator', () => {
  it('validates (problems listed, then corrected), previews, gives the directory steps, finishes, and the desktop check revokes the token', async () => {
    const op = await personaHeaders('operator');
    const host = `dep-walk-${Date.now() % 100000}`;
    const { deployment, joinToken } = (await generate('acme-gw01')).body; // a host name already in the cluster
    const id = deployment.id;
    // not validated yet: no directory steps, no finish
    expect((await call('POST', `/api/deployment/${id}/finish`, { ...op, body: {} })).body.code).toBe('deployment_not_validated');
    const bad = await call('POST', `/api/deployment/${id}/validate`, { ...op, body: { ldapAddress: 'dc01.other.example' } });
    expect(bad.body).toMatchObject({ valid: false, problems: ['hostname_in_use', 'ldap_outside_domain'], deployment: { state: 'generated' } });
    expect(await auditRowOf(bad.correlationId)).toMatchObject({ event: 'deployment.validate', outcome: 'failure', client: 'acme', actor: { name: 'tech-alice' } });
    const good = await call('POST', `/api/deployment/${id}/validate`, { ...op, body: { hostname: host, ldapAddress: 'dc01.acme.local' } });
    expect(good.body).toMatchObject({ valid: true, problems: [], deployment: { state: 'validated', hostname: host, ldapAddress: 'dc01.acme.local:636' } });

    const preview = await call('GET', `/api/deployment/${id}/preview`, op);
    expect(preview.status).toBe(200);
    const yaml = require('yaml').parse(preview.body.files[0].content);
    expect(yaml.teleport).toMatchObject({ nodename: host, proxy_server: 'teleport.hdc-local.test:443', join_params: { method: 'token', token_name: '/var/lib/teleport/join-token' } });
    expect(yaml.windows_desktop_service.labels).toEqual({ client_code: 'acme' });
    expect(preview.text).not.toContain(joinToken.token);

    const dir = await call('POST', `/api/deployment/${id}/directory`, { ...op, body: {} });
    expect(dir.status).toBe(200);
    expect(dir.body.script).toContain('New-ADUser');
    expect(dir.body.script).toContain('certutil -dspublish -f user-ca.cer NTAuthCA');
    expect(await auditRowOf(dir.correlationId)).toMatchObject({ event: 'deployment.directory_output', client: 'acme' });

    const fin = await call('POST', `/api/deployment/${id}/finish`, { ...op, body: {} });
    expect(fin.body.deployment).toMatchObject({ state: 'finished', finishedAt: expect.any(String) });
    expect(await auditRowOf(fin.correlationId)).toMatchObject({ event: 'deployment.finish' });
    expect((await call('POST', `/api/deployment/${id}/validate`, { ...op, body: {} })).body.code).toBe('deployment_finished');

    // nothing seen yet: nothing changes, the token stays
    const mark = tctl.mark();
    const none = await call('POST', `/api/deployment/${id}/desktop-check`, { ...op, body: {} });
    expect(none.body).toMatchObject({ seen: false, revoked: false, deployment: { state: 'finished' } });
    expect(tctl.commandsSince(mark).filter((c) => c[0] === 'tokens')).toEqual([]);
    expect(hasToken(joinToken.token)).toBe(true);

    const agent = newProxyAppears(host);
    const seen = await call('POST', `/api/deployment/${id}/desktop-check`, { ...op, body: {} });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ seen: true, revoked: true, deployment: { state: 'completed', revocation: 'revoked', agent: { id: agent, hostname: host, desktops: 1 } } });
    expect(hasToken(joinToken.token)).toBe(false);
    const rows = (await auditRows(50)).filter((r) => r.correlationId === seen.correlationId);
    expect(rows.find((r) => r.event === 'token.revoke')).toMatchObject({ outcome: 'ok', client: 'acme', target: { id: joinToken.tokenId, kind: 'token' }, details: { deployment: id } });
    expect(rows.find((r) => r.event === 'deployment.complete')).toMatchObject({ outcome: 'success', details: { agent } });
    // completed: checks are idempotent, other steps refused
    expect((await call('POST', `/api/deployment/${id}/desktop-check`, { ...op, body: {} })).body).toMatchObject({ seen: true, revoked: true });
    expect((await call('POST', `/api/deployment/${id}/finish`, { ...op, body: {} })).body.code).toBe('deployment_completed');
  });

  it('without token delete: 502 token_revoke_failed with the manual command, audited token.revoke error; the next check retries', async () => {
    const host = `dep-norm-${Date.now() % 100000}`;
    const { deployment, joinToken } = (await generate(host)).body;
    await toFinished(deployment.id);
    newProxyAppears(host);
    tctl.control({ roles: roleWithoutTokenVerb('delete') });
    const op = await call('POST', `/api/deployment/${deployment.id}/desktop-check`, { ...(await personaHeaders('operator')), body: {} });
    expect(op.status).toBe(502);
    expect(op.body).toMatchObject({ code: 'token_revoke_failed', cause: 'access_access_denied', tokenId: joinToken.tokenId, expires: joinToken.expires });
    // an operator never sees the token: the command says how to find it
    expect(op.body.manualCommand).toContain(`fleet-deployment=${deployment.id}`);
    expect(op.text).not.toContain(joinToken.token);
    expect(await auditRowOf(op.correlationId)).toMatchObject({ event: 'token.revoke', outcome: 'error', reason: 'access_access_denied', client: 'acme', target: { id: joinToken.tokenId } });
    expect(hasToken(joinToken.token)).toBe(true); // lives until its TTL
    const st = (await call('GET', `/api/deployment/${deployment.id}`, await adminAuth())).body;
    expect(st).toMatchObject({ state: 'finished', revocation: 'failed', desktopSeenAt: expect.any(String) });
    // an administrator gets the command itself
    const adm = await call('POST', `/api/deployment/${deployment.id}/desktop-check`, { ...(await adminAuth()), body: {} });
    expect([adm.status, adm.body.manualCommand]).toEqual([502, `tctl tokens rm ${joinToken.token}`]);
    // the role is fixed: the next check revokes and completes
    tctl.control({});
    const again = await call('POST', `/api/deployment/${deployment.id}/desktop-check`, { ...(await personaHeaders('operator')), body: {} });
    expect(again.body).toMatchObject({ seen: true, revoked: true, deployment: { state: 'completed', revocation: 'revoked' } });
    expect(hasToken(joinToken.token)).toBe(false);
  });

  it('refuses the viewer (403 insufficient_level) and another client\'s technician (404), audited, nothing changed', async () => {
    const { deployment, joinToken } = (await generate(`dep-ref-${Date.now() % 100000}`)).body;
    await toFinished(deployment.id);
    newProxyAppears(deployment.hostname);
    for (const [persona, status, code] of [['viewer', 403, 'insufficient_level'], ['outsider', 404, 'not_found']] as const) {
      const mark = tctl.mark();
      const r = await call('POST', `/api/deployment/${deployment.id}/desktop-check`, { ...(await personaHeaders(persona)), body: {} });
      expect([r.status, r.body.code]).toEqual([status, code]);
      expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', details: { route: 'POST /api/deployment/{id}/desktop-check', requiredLevel: 'operator', client: 'acme' } });
      expect(tctl.commandsSince(mark)).toEqual([]);
    }
    expect(hasToken(joinToken.token)).toBe(true);
    expect((await call('GET', `/api/deployment/${deployment.id}`, await adminAuth())).body).toMatchObject({ state: 'finished', revocation: 'pending' });
    expect((await call('GET', `/api/deployment/${randomUUID()}`, await personaHeaders('operator'))).status).toBe(404);
  });
});

describe('scope edges (issue 25 #4)', () => {
  it("validate naming another client's clientCode: 403 client_scope, audited, nothing validated (was 200, the field ignored)", async () => {
    const { deployment } = (await generate(`dep-cs-${Date.now() % 100000}`)).body;
    for (const persona of ['operator', 'admin'] as const) {
      const mark = tctl.mark();
      const r = await call('POST', `/api/deployment/${deployment.id}/validate`, { ...(await personaHeaders(persona)), body: { clientCode: 'globex' } });
      expect([r.status, r.body.code]).toEqual([403, 'client_scope']);
      expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'client_scope', details: { route: 'POST /api/deployment/{id}/validate', requiredLevel: 'operator', client: 'globex' } });
      expect((await auditRowsOf(r.correlationId)).map((x) => x.event)).toEqual(['auth.forbidden']);
      expect(tctl.commandsSince(mark)).toEqual([]);
    }
    expect((await call('GET', `/api/deployment/${deployment.id}`, await adminAuth())).body).toMatchObject({ state: 'generated', clientCode: 'acme' });
    // its own client named: accepted
    const ok = await call('POST', `/api/deployment/${deployment.id}/validate`, { ...(await personaHeaders('operator')), body: { clientCode: 'acme' } });
    expect([ok.status, ok.body.valid]).toEqual([200, true]);
  });

  it('a console instance bundle without clientCode: 403 client_scope for an operator and an administrator, audited, no bundle (was 400)', async () => {
    for (const auth of [await personaHeaders('operator'), await adminAuth()]) {
      const r = await call('POST', '/api/bundles/console-instance', { ...auth, body: { host: 'hdc.acme.example' } });
      expect([r.status, r.body.code]).toEqual([403, 'client_scope']);
      expect(r.body).not.toHaveProperty('files');
      expect((await auditRowsOf(r.correlationId)).map((x) => [x.event, x.reason, x.details?.client])).toEqual([['auth.forbidden', 'client_scope', null]]);
    }
  });

  it('removing a client revokes the join tokens of its open deployments and removes the records, audited', async () => {
    const admin = await adminAuth();
    await call('DELETE', '/api/clients/dep-gone', admin); // a clean start on a reused stack
    expect((await call('POST', '/api/clients', { ...admin, body: { code: 'dep-gone', name: 'Gone' } })).status).toBe(201);
    const { deployment, joinToken } = (await generate(`dep-gone-${Date.now() % 100000}`, { clientCode: 'dep-gone' })).body;
    expect(hasToken(joinToken.token)).toBe(true);
    // the revocation fails: nothing is removed
    tctl.control({ roles: roleWithoutTokenVerb('delete') });
    const refused = await call('DELETE', '/api/clients/dep-gone', admin);
    expect([refused.status, refused.body.code]).toEqual([502, 'token_revoke_failed']);
    expect(await auditRowOf(refused.correlationId)).toMatchObject({ event: 'token.revoke', outcome: 'error', client: 'dep-gone', target: { id: joinToken.tokenId } });
    expect((await call('GET', '/api/clients/dep-gone', admin)).status).toBe(200);
    expect((await call('GET', `/api/deployment/${deployment.id}`, admin)).status).toBe(200);
    expect(hasToken(joinToken.token)).toBe(true);
    tctl.control({}); // the shipped role again (a reset would also drop the token fixture)
    const d = await call('DELETE', '/api/clients/dep-gone', admin);
    expect(d.status).toBe(204);
    expect(hasToken(joinToken.token)).toBe(false);
    expect((await call('GET', `/api/deployment/${deployment.id}`, admin)).status).toBe(404);
    expect((await call('GET', '/api/deployment', admin)).body.deployments.some((x: any) => x.clientCode === 'dep-gone')).toBe(false);
    const rows = await auditRowsOf(d.correlationId);
    expect(rows.map((x) => x.event)).toEqual(['token.revoke', 'deployment.delete', 'client.delete']);
    expect(rows[1]).toMatchObject({ outcome: 'success', client: 'dep-gone', target: { id: deployment.id, kind: 'deployment' }, details: { state: 'generated', clientRemoval: true } });
    expect(rows[2]).toMatchObject({ details: { deployments: 1 } });
  });
});

describe('/api/bundles/proxy-token*', () => {
  it('creates, lists (no secrets) and revokes, audited token.create / token.revoke ok', async () => {
    const admin = await adminAuth();
    const c = await call('POST', '/api/bundles/proxy-token', { ...admin, body: { clientCode: 'globex', ttlHours: 2 } });
    expect(c.status).toBe(201);
    issued.push(c.body.token);
    expect(c.body).toMatchObject({ type: 'windowsdesktop', clientCode: 'globex', roles: ['WindowsDesktop'] });
    expect(await auditRowOf(c.correlationId)).toMatchObject({ event: 'token.create', outcome: 'success', client: 'globex', target: { id: c.body.tokenId, kind: 'token' } });
    const l = await call('GET', '/api/bundles/proxy-tokens', admin);
    expect(l.body.tokens.find((t: any) => t.tokenId === c.body.tokenId)).toMatchObject({ clientCode: 'globex', roles: ['WindowsDesktop'] });
    expect(l.body.tokens.some((t: any) => t.roles.includes('Bot'))).toBe(false);
    for (const t of tokensInCluster()) expect(l.text).not.toContain(t.metadata.name);
    const d = await call('DELETE', `/api/bundles/proxy-token/${c.body.tokenId}`, admin);
    expect(d.status).toBe(204);
    expect(await auditRowOf(d.correlationId)).toMatchObject({ event: 'token.revoke', outcome: 'ok', client: 'globex', target: { id: c.body.tokenId } });
    expect(hasToken(c.body.token)).toBe(false);
    expect((await call('DELETE', `/api/bundles/proxy-token/${c.body.tokenId}`, admin)).status).toBe(404);
  });
  it('refuses every technician, operators included (403 admin_required, audited, no token)', async () => {
    const tokens = tokensInCluster().length;
    for (const persona of ['operator', 'viewer'] as const) {
      const mark = tctl.mark();
      const r = await call('POST', '/api/bundles/proxy-token', { ...(await personaHeaders(persona)), body: { clientCode: 'acme' } });
      expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
      expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required' });
      expect(tctl.commandsSince(mark)).toEqual([]);
    }
    expect(tokensInCluster()).toHaveLength(tokens);
  });
  it('without token delete: 502 token_revoke_failed with the manual command, audited error, the token stays', async () => {
    const admin = await adminAuth();
    const c = await call('POST', '/api/bundles/proxy-token', { ...admin, body: { ttlHours: 1 } });
    issued.push(c.body.token);
    tctl.control({ roles: roleWithoutTokenVerb('delete') });
    const d = await call('DELETE', `/api/bundles/proxy-token/${c.body.tokenId}`, admin);
    expect(d.status).toBe(502);
    expect(d.body).toMatchObject({ code: 'token_revoke_failed', manualCommand: `tctl tokens rm ${c.body.token}` });
    expect(await auditRowOf(d.correlationId)).toMatchObject({ event: 'token.revoke', outcome: 'error', reason: 'access_access_denied' });
    expect(hasToken(c.body.token)).toBe(true);
  });
});

describe('POST /api/bundles/console-instance', () => {
  it("gives the client's operator the bundle, audited under the client", async () => {
    const r = await call('POST', '/api/bundles/console-instance', { ...(await personaHeaders('operator')), body: { clientCode: 'acme', host: 'hdc.acme.example' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ appName: 'acme-hdc', consoleUrl: 'https://hdc.acme.example' });
    expect(require('yaml').parse(r.body.files[0].content.split('\n').slice(1).join('\n')).app_service.apps[0]).toMatchObject({ name: 'acme-hdc', labels: { client_code: 'acme' } });
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'bundle.console_instance', client: 'acme', actor: { name: 'tech-alice' } });
  });
  it('refuses a client outside the scope with 403 client_scope (audited)', async () => {
    const r = await call('POST', '/api/bundles/console-instance', { ...(await personaHeaders('operator')), body: { clientCode: 'globex', host: 'hdc.globex.example' } });
    expect([r.status, r.body.code]).toEqual([403, 'client_scope']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'client_scope', client: 'acme', details: { client: 'globex', requiredLevel: 'operator' } });
  });
});

describe('join token secrets', () => {
  it('appear in no audit row, no table item and no line of the fleet process log', async () => {
    expect(issued.length).toBeGreaterThanOrEqual(5);
    const audit = JSON.stringify(await auditRows(500));
    const scan = JSON.stringify((await store.scan()).Items);
    const log = fs.readFileSync(path.join(RUN_DIR, `${process.env.HDC_STACK_PROFILE === 'dev' ? 'dev' : 'test'}-fleet-offline.log`), 'utf8');
    for (const t of issued) {
      expect(audit.includes(t)).toBe(false);
      expect(scan.includes(t)).toBe(false);
      expect(log.includes(t)).toBe(false);
    }
  });
});
