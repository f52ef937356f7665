import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from 'ldapts';
import { consoleEnvironment, runAdminCommand } from '../../functions/admin/cli';
import { AuditChain } from '../../lib/audit';
import { setAuthenticator, getOperator } from '../../lib/auth/operators';
import { listDelegations, listRoles, putDelegation, putRole } from '../../lib/authz/rights';
import { loadConfig } from '../../lib/config';
import { loadMasterKey } from '../../lib/crypto/master-key';
import type { Directory } from '../../lib/directory';
import { guidFromBuffer } from '../../lib/directory/guid';
import { lapsDiagnostics } from '../../lib/laps/diagnostics';
import { callPasswordService } from '../../lib/password-service/console-side/client';
import { loadLinkKey, signRequest } from '../../lib/password-service/link';
import { PasswordService } from '../../lib/password-service/service-side/service';
import { createRuntime, type ConsoleRuntime } from '../../lib/runtime';
import { readSettings, type InstanceSettings } from '../../lib/setup/settings';
import { storeOfEnvironment, type Store } from '../../lib/store';
import { getRecord, putRecord } from '../../lib/store/records';
import { consoleAccessConfig, mintConsoleToken } from '../../local/access-platform';
import { httpEvent } from '../support/http-event';
import { asOperator, InProcess } from '../support/in-process-console';
import { account, auditMark, auditSince, newClient, profile, scratchStore, scratchStoreEnv, seedUser, stack, store } from '../support/stack';

// Rules that only another configuration, a reset or a fault shows (issue 31, console part). Each
// runs the real handlers in this process with a configuration of its own, against the stack's
// Samba directory and the stack's store (or a scratch store), or changes a setting the running
// stack reads from its store and puts it back. Nothing here restarts the shared stack.

const BASE = stack.directory.baseDn;
const consoleEnv = { ...process.env, ...consoleEnvironment(stack), ...consoleAccessConfig(profile), NODE_EXTRA_CA_CERTS: stack.directory.caFile, Helpdesk__Enabled: 'true', Helpdesk__LapsIdentityUpn: stack.directory.technicalAccounts.laps.upn };
const computer = (name: string) => stack.computers.find((c) => c.name === name)!;

const runtimeWith = (extra: Record<string, string | undefined>, s: Store = store) => createRuntime({ env: { ...consoleEnv, ...extra }, store: s });

// ---- the running stack's settings item, changed for one test and put back
const settingsNow = async () => (await getRecord<InstanceSettings>(store, 'INSTANCE', 'SETTINGS'))!;
async function withSettings(change: (s: InstanceSettings) => InstanceSettings, fn: () => Promise<void>) {
  const before = await settingsNow();
  expect(await putRecord(store, 'INSTANCE', 'SETTINGS', change(before.data), { expectVersion: before.version })).toBe(true);
  try {
    await fn();
  } finally {
    const now = await settingsNow();
    await putRecord(store, 'INSTANCE', 'SETTINGS', before.data, { expectVersion: now.version });
  }
}

// ---- the directory as Administrator (test objects)
const tls = () => ({ ca: [fs.readFileSync(stack.directory.caFile)] });
async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: tls() });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}
const guidOfDn = (dn: string) => admin(async (c) => guidFromBuffer((await c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0].objectGUID as Buffer));
const dnOfSam = (sam: string) => admin(async (c) => (await c.search(BASE, { filter: `(sAMAccountName=${sam})`, attributes: ['distinguishedName'] })).searchEntries[0]?.dn as string | undefined);
async function removeSam(sam: string) {
  const dn = await dnOfSam(sam);
  if (dn) await admin((c) => c.del(dn));
}

describe('Authentication:ActiveDirectory:Enabled=false', () => {
  const rt = runtimeWith({ Authentication__ActiveDirectory__Enabled: 'false' });

  it('refuses directory password sign-in (403 password_signin_disabled, audited), no session; access-platform sign-in still works', async () => {
    const a = account('op-helpdesk');
    const c = new InProcess(rt);
    await c.antiforgery();
    const mark = await auditMark();
    const refused = await c.post('/api/auth/login', { username: a.username, password: a.password });
    expect([refused.status, refused.body]).toEqual([403, { code: 'password_signin_disabled' }]);
    expect((await c.get('/api/auth/me')).status).toBe(401);
    const rows = await auditSince(mark);
    expect(rows.filter((r) => r.event === 'auth.login').map((r) => [r.outcome, r.reason, r.actor?.name, r.actor?.provider])).toEqual([['denied', 'password_signin_disabled', 'op-helpdesk', 'ad']]);
    expect(JSON.stringify(rows)).not.toContain(a.password);

    // the same host: sign-in through the access platform opens a session
    const p = new InProcess(rt);
    await p.antiforgery();
    const m2 = await auditMark();
    const ok = await p.post('/api/auth/access', {}, { 'teleport-jwt-assertion': await mintConsoleToken('ap-oscar') });
    expect([ok.status, ok.body.operator?.username]).toEqual([200, 'op-helpdesk']);
    p.csrf = ok.body.csrfToken;
    expect((await p.get('/api/auth/me')).body).toMatchObject({ username: 'op-helpdesk', provider: 'access' });
    expect((await auditSince(m2)).find((r) => r.event === 'auth.login')).toMatchObject({ outcome: 'success', reason: 'access_platform' });
  });

  it('the running stack (the default, true) takes the same password', async () => {
    const a = account('op-auditor');
    const r = await newClient().login(a.username, a.password);
    // the password is accepted: the next step asked is the authenticator code
    expect([r.status, r.body.code]).toEqual([401, 'totp_required']);
  });
});

describe('reset-setup --confirm (admin CLI), on a store of its own', () => {
  // a configured instance in a scratch store: the stack's settings, a role, a delegation, an
  // operator with an authenticator, a second Super administrator, and audit rows before the reset
  const storeEnv = scratchStoreEnv('hdc-reset-setup');
  const env = { ...consoleEnv, ...storeEnv };
  let own: Store;
  let rt: ConsoleRuntime;
  const superGuid = seedUser('op-super').guid;
  const secondSuper = seedUser('op-auditor').guid;
  const setupInput = () => ({
    domain: stack.directory.domain,
    dcs: stack.directory.dcs.map((d) => ({ name: d.name, url: d.url })),
    caPem: fs.readFileSync(stack.directory.caFile, 'utf8'),
    readAccount: { user: stack.directory.technicalAccounts.read.upn, password: stack.directory.technicalAccounts.read.password },
    writeAccount: { user: stack.directory.technicalAccounts.write.upn, password: stack.directory.technicalAccounts.write.password },
    lapsIdentityUpn: stack.directory.technicalAccounts.laps.upn,
    managedOus: stack.directory.managedOus,
    tierOus: stack.directory.tier0Ous,
    protectedGroups: stack.directory.protectedGroups,
    superAdministrator: 'op-super',
  });

  beforeAll(async () => {
    own = storeOfEnvironment(storeEnv);
    await own.ensure();
    const settings = (await readSettings(store))!.settings;
    await putRecord(own, 'INSTANCE', 'SETTINGS', { ...settings, superAdministrators: [superGuid, secondSuper], upnSuffixes: ['corp.example.test', 'kept.example.test'] });
    const helpdesk = (await listRoles(store)).find((r) => r.id === 'helpdesk')!;
    await putRole(own, { ...helpdesk, name: 'Helpdesk (kept through reset-setup)' });
    const delegation = (await listDelegations(store)).find((d) => d.id === 'helpdesk-managed')!;
    await putDelegation(own, delegation);
    await setAuthenticator(own, await loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile }), seedUser('op-branch').guid, 'op-branch', account('op-branch').totpSecret);
    rt = createRuntime({ env, store: own });
    for (let i = 0; i < 3; i++) await rt.audit.append({ event: 'test.before_reset', outcome: 'success', actor: { name: 'test' } });
  });

  it('re-opens setup with a new token (an older one no longer works), keeps roles, delegations, operators and the audit chain, audits setup.reset', async () => {
    const c = new InProcess(rt);
    expect((await c.get('/api/setup')).body).toEqual({ configured: true, setupOpen: false });
    const headBefore = (await rt.audit.extent()).headSeq;

    const first = await runAdminCommand(['reset-setup', '--confirm'], env);
    expect(first.code).toBe(0);
    const second = await runAdminCommand(['reset-setup', '--confirm'], env);
    expect(second.code).toBe(0);
    const tokenOf = (out: string) => /setup token: (\S+)/.exec(out)![1];
    expect(tokenOf(first.out)).not.toBe(tokenOf(second.out));
    expect((await c.get('/api/setup')).body).toEqual({ configured: true, setupOpen: true });

    // both resets audited as the CLI's, after the rows that were there
    const rows: Array<{ seq: number; event: string; actor?: unknown; reason?: string }> = [];
    for await (const r of rt.audit.rows({ afterSeq: headBefore })) rows.push(r);
    expect(rows.filter((r) => r.event === 'setup.reset').map((r) => [r.actor, r.reason])).toEqual([
      [{ name: 'admin-cli', provider: 'cli' }, 'recovery'],
      [{ name: 'admin-cli', provider: 'cli' }, 'recovery'],
    ]);

    // the wizard with the first token: refused (audited); with the new one: done
    await c.antiforgery();
    const stale = await c.post('/api/setup', setupInput(), { 'x-setup-token': tokenOf(first.out) });
    expect([stale.status, stale.body.code]).toEqual([403, 'setup_token_invalid']);
    const done = await c.post('/api/setup', setupInput(), { 'x-setup-token': tokenOf(second.out) });
    expect(done.status).toBe(200);
    expect((await c.get('/api/setup')).body).toEqual({ configured: true, setupOpen: false });
    const again = await c.post('/api/setup', setupInput(), { 'x-setup-token': tokenOf(second.out) });
    expect([again.status, again.body.code]).toEqual([409, 'setup_closed']);

    // the data is kept: roles, delegations, operators, the Super administrators and other settings
    expect((await listRoles(own)).find((r) => r.id === 'helpdesk')?.name).toBe('Helpdesk (kept through reset-setup)');
    expect((await listDelegations(own)).map((d) => d.id)).toContain('helpdesk-managed');
    expect((await getOperator(own, seedUser('op-branch').guid))?.data.totpSealed).toBeDefined();
    const after = (await readSettings(own))!.settings;
    expect(after.superAdministrators.map((g) => g.toLowerCase()).sort()).toEqual([superGuid, secondSuper].map((g) => g.toLowerCase()).sort());
    expect(after.upnSuffixes).toEqual(['corp.example.test', 'kept.example.test']);
    // the audit chain: the rows before the reset are there, and it verifies
    const all: string[] = [];
    for await (const r of rt.audit.rows({})) all.push(r.event);
    expect(all.filter((e) => e === 'test.before_reset')).toHaveLength(3);
    expect(all).toEqual(expect.arrayContaining(['setup.reset', 'setup.completed']));
    expect(await rt.audit.verify()).toMatchObject({ ok: true });
    const verify = await runAdminCommand(['verify-audit'], env);
    expect(verify.code).toBe(0);
  });

  it('without --confirm changes nothing (exit 2, no row)', async () => {
    const head = (await rt.audit.extent()).headSeq;
    expect((await runAdminCommand(['reset-setup'], env)).code).toBe(2);
    expect((await new InProcess(rt).get('/api/setup')).body).toEqual({ configured: true, setupOpen: false });
    expect((await rt.audit.extent()).headSeq).toBe(head);
  });
});

describe('step-up mode none (the settings item the running stack reads, changed and put back)', () => {
  it('an ordinary guarded change goes through without a step-up; a LAPS reveal still asks its strict step-up (403, audited)', async () => {
    const a = account('op-super');
    const rt = runtimeWith({});
    await withSettings(
      (s) => ({ ...s, stepUpMode: 'none' }),
      async () => {
        const c = new InProcess(rt);
        await c.antiforgery();
        // mode none: the directory password alone opens the session, with no step-up in it
        const login = await c.post('/api/auth/login', { username: a.username, password: a.password });
        expect(login.status).toBe(200);
        c.csrf = login.body.csrfToken;
        expect((await c.get('/api/auth/me')).body).toMatchObject({ stepUpMode: 'none', stepUpAt: null });
        const mark = await auditMark();
        const alice = seedUser('alice');
        const unlock = await c.post(`/api/users/${alice.guid}/unlock`, { ticket: 'INC-NONE-1' });
        expect([unlock.status, unlock.body.code]).toEqual([200, undefined]);
        const laps = await c.post(`/api/computers/${computer('WS-STD-01').guid}/laps`, { confirm: true, ticket: 'INC-NONE-2' });
        expect([laps.status, laps.body]).toEqual([403, { code: 'strict_reauth_required', proof: 'authenticator' }]);
        const rows = await auditSince(mark);
        expect(rows.find((r) => r.event === 'users.unlock')).toMatchObject({ outcome: 'success', target: { id: alice.guid } });
        expect(rows.find((r) => r.event === 'computers.laps.read')).toMatchObject({ outcome: 'denied', reason: 'strict_reauth_required' });
      },
    );
    // the default mode again (authenticator): the same change without a step-up is refused
    const c = new InProcess(rt);
    await c.antiforgery();
    const login = await c.post('/api/auth/login', { username: a.username, password: a.password });
    expect([login.status, login.body.code]).toEqual([401, 'totp_required']);
  });
});

/** A stand-in of the Lambda invoke endpoint in front of a password service run in this process (or nothing: it counts the calls). */
function lambdaStandIn(serve: () => PasswordService | undefined) {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      calls.push(req.url ?? '');
      const service = serve();
      if (!service) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"no password service here"}');
        return;
      }
      const out = await service.handle(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  return {
    calls,
    start: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
/** The console side reads where the password service is from its process environment: pointed at `endpoint` for a block. */
function consoleSideTalksTo(endpoint: () => string) {
  const keys = ['HDC_LAMBDA_ENDPOINT', 'HDC_PASSWORD_SERVICE_FUNCTION', 'HDC_LINK_KEY_FILE'] as const;
  const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  beforeAll(() => {
    process.env.HDC_LAMBDA_ENDPOINT = endpoint();
    process.env.HDC_PASSWORD_SERVICE_FUNCTION = 'hdc-password-service-stand-in';
    process.env.HDC_LINK_KEY_FILE = stack.linkKeyFile;
  });
  afterAll(() => {
    for (const k of keys) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
}

describe('Helpdesk:Enabled=false', () => {
  const standIn = lambdaStandIn(() => undefined);
  let endpoint = '';
  beforeAll(async () => {
    endpoint = await standIn.start();
  });
  consoleSideTalksTo(() => endpoint);
  afterAll(async () => {
    await standIn.stop();
    for (const sam of ['hd-user1', 'hd-group1']) await removeSam(sam).catch(() => undefined);
  });
  const rt = runtimeWith({ Helpdesk__Enabled: 'false' });
  const M_USERS = `OU=Users,OU=Managed,${BASE}`;
  const B_USERS = `OU=Users,OU=Branch,${BASE}`;
  const M_GROUPS = `OU=Groups,OU=Managed,${BASE}`;

  it('refuses every helpdesk route, LAPS and non-LAPS (404 not_found, as routes that do not exist), with no call to the password service', async () => {
    const c = await asOperator(rt, 'op-super', { stepUp: true });
    const ws = computer('WS-STD-01').guid;
    const alice = seedUser('alice').guid;
    for (const [p, body] of [
      [`/api/computers/${ws}/laps`, { confirm: true, ticket: 'INC-HD-1' }],
      [`/api/computers/${ws}/laps/expire`, { confirm: true, ticket: 'INC-HD-2' }],
      [`/api/users/${alice}/reset-password`, { ticket: 'INC-HD-3' }],
    ] as const) {
      const r = await c.post(p, body);
      expect([p, r.status, r.body]).toEqual([p, 404, { code: 'not_found' }]);
    }
    // the reads that need no password service still answer, and offer none of those actions
    const detail = await c.get(`/api/computers/${ws}`);
    expect([detail.status, detail.body.actions]).toEqual([200, { revealLaps: false, expireLaps: false, revealBitlocker: false }]);
    const user = await c.get(`/api/users/${alice}`);
    expect([user.status, user.body.actions['users.password.reset'], user.body.actions['users.unlock']]).toEqual([200, 'no', 'direct']);
    // with the helpdesk on, the same operator is offered them
    const on = await asOperator(runtimeWith({}), 'op-super');
    expect((await on.get(`/api/computers/${ws}`)).body.actions).toEqual({ revealLaps: true, expireLaps: true, revealBitlocker: true });
    expect((await on.get(`/api/users/${alice}`)).body.actions['users.password.reset']).toBe('direct');
    expect(standIn.calls).toEqual([]);
  });

  it('a password reset cannot be filed for approval, single or bulk (400 action_not_available, audited helpdesk_disabled): it could never be executed', async () => {
    const c = await asOperator(rt, 'op-super', { stepUp: true });
    const alice = seedUser('alice').guid;
    const bob = seedUser('bob').guid;
    const mark = await auditMark();
    const single = await c.post('/api/approvals', { kind: 'action', action: 'users.password.reset', target: alice, ticket: 'INC-HD-8', reason: 'helpdesk off' });
    expect([single.status, single.body.code]).toEqual([400, 'action_not_available']);
    const bulk = await c.post('/api/approvals', { kind: 'bulk', action: 'users.password.reset', targets: [alice, bob], ticket: 'INC-HD-9', reason: 'helpdesk off' });
    expect([bulk.status, bulk.body.code]).toEqual([400, 'action_not_available']);
    const rows = (await auditSince(mark)).filter((r) => r.event === 'request.created');
    expect(rows.map((r) => [r.outcome, r.reason])).toEqual([
      ['denied', 'helpdesk_disabled'],
      ['denied', 'helpdesk_disabled'],
    ]);
    expect(standIn.calls).toEqual([]);
  });

  it('moves, renames and groups still work, with no call to the password service', async () => {
    await removeSam('hd-user1');
    await removeSam('hd-group1');
    await admin((l) => l.add(`CN=hd-user1,${M_USERS}`, { objectClass: ['top', 'person', 'organizationalPerson', 'user'], sAMAccountName: 'hd-user1', userPrincipalName: `hd-user1@${stack.directory.domain}`, displayName: 'hd-user1', userAccountControl: '514' }));
    const id = await guidOfDn(`CN=hd-user1,${M_USERS}`);
    const [mUsers, bUsers, mGroups] = await Promise.all([guidOfDn(M_USERS), guidOfDn(B_USERS), guidOfDn(M_GROUPS)]);
    const c = await asOperator(rt, 'op-super', { stepUp: true });
    const mark = await auditMark();

    const renamed = await c.post(`/api/users/${id}/rename`, { displayName: 'Helpdesk Off', ticket: 'INC-HD-4' });
    expect([renamed.status, renamed.body.outcome]).toEqual([200, 'succeeded']);
    const moved = await c.post(`/api/users/${id}/move`, { destination: bUsers, ticket: 'INC-HD-5' });
    expect([moved.status, moved.body.outcome]).toEqual([200, 'succeeded']);
    expect(await dnOfSam('hd-user1')).toBe(`CN=hd-user1,${B_USERS}`);
    expect((await c.post(`/api/users/${id}/move`, { destination: mUsers, ticket: 'INC-HD-6' })).status).toBe(200);

    const group = await c.post('/api/groups', { ou: mGroups, name: 'hd-group1', description: 'helpdesk off' });
    expect(group.status).toBe(201);
    const deleted = await c.request('DELETE', `/api/groups/${group.body.id}`, { ticket: 'INC-HD-7' });
    expect([deleted.status, deleted.body]).toEqual([200, { outcome: 'succeeded' }]);
    expect(await dnOfSam('hd-group1')).toBeUndefined();

    const rows = await auditSince(mark);
    expect(['users.rename', 'users.move', 'groups.create', 'groups.delete'].map((e) => [e, rows.find((r) => r.event === e)?.outcome])).toEqual([
      ['users.rename', 'success'],
      ['users.move', 'success'],
      ['groups.create', 'success'],
      ['groups.delete', 'success'],
    ]);
    expect(standIn.calls).toEqual([]);
  });
});

describe('/health/ready while the store is unreachable', () => {
  const saved = process.env.HDC_SQLITE_FILE;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-ready-'));
  const file = path.join(dir, 'console.sqlite');
  afterAll(() => {
    if (saved === undefined) delete process.env.HDC_SQLITE_FILE;
    else process.env.HDC_SQLITE_FILE = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 not_ready (no detail) while the store cannot be opened, 200 again once it can; /health/live and the password service answer meanwhile', async () => {
    // the store's file cannot be opened: a directory stands where it should be (a volume not mounted)
    fs.mkdirSync(file);
    process.env.HDC_SQLITE_FILE = file;
    const { handler } = await import('../../functions/console/health');
    const probe = async (p: string) => {
      const r = await handler(httpEvent('GET', p));
      return { status: r.statusCode, body: JSON.parse(r.body!) };
    };
    const down = await probe('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ code: 'not_ready' });
    expect(await probe('/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    expect((await probe('/health/ready')).status).toBe(503);
    // the password service answers its health on its own (its own process and store)
    const svc = await callPasswordService({ op: 'health' }, { ...consoleEnvironment(stack) });
    expect(svc).toEqual({ ok: true, laps: 'configured', bitlocker: 'configured' });

    // the store is back
    fs.rmdirSync(file);
    expect(await probe('/health/ready')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});

describe('LAPS diagnostics on broken setups', () => {
  // the password service run in this process behind a stand-in of its invoke endpoint, with the
  // environment each case gives it; its own scratch store (pinned to the stack's domain)
  let service: PasswordService | undefined;
  const standIn = lambdaStandIn(() => service);
  let endpoint = '';
  const serviceStore = scratchStore('hdc-diag-service');
  const tech = stack.directory.technicalAccounts;
  const lapsFile = path.join(stack.linkKeyFile, '..', 'laps.password');
  const wrongFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-diag-')), 'laps.password');
  fs.writeFileSync(wrongFile, 'not-the-LAPS-password-1!', { mode: 0o600 });
  const serviceEnv = (extra: Record<string, string | undefined>) => ({ HDC_LINK_KEY_FILE: stack.linkKeyFile, HDC_PWD_DOMAIN: stack.directory.domain, NODE_EXTRA_CA_CERTS: stack.directory.caFile, HDC_LAPS_UPN: tech.laps.upn, HDC_LAPS_PASSWORD_FILE: lapsFile, ...extra });
  const serviceWith = async (extra: Record<string, string | undefined>) => {
    const env = serviceEnv(extra);
    service = new PasswordService(serviceStore, loadConfig(env).config, env, () => loadLinkKey(env), store);
    return service;
  };
  beforeAll(async () => {
    endpoint = await standIn.start();
    await serviceStore.ensure();
    const s = await serviceWith({});
    expect(await s.handle(signRequest(await loadLinkKey({ HDC_LINK_KEY_FILE: stack.linkKeyFile }), { op: 'pin' }))).toMatchObject({ ok: true });
  });
  consoleSideTalksTo(() => endpoint);
  afterAll(() => standIn.stop());

  const checksOf = async (rt: ConsoleRuntime) => (await lapsDiagnostics(rt)).checks;
  /** The runtime with a directory whose schema lacks some LAPS attributes (Samba here holds both schemas). */
  const withoutSchema = (rt: ConsoleRuntime, hidden: string[]): ConsoleRuntime => {
    const wrap = (d: Directory): Directory =>
      new Proxy(d, {
        get(target, prop, receiver) {
          if (prop === 'schemaAttributes') return async (names: string[]) => (await target.schemaAttributes(names)).filter((n) => !hidden.includes(n.toLowerCase()));
          const v = Reflect.get(target, prop, receiver);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    return { ...rt, directory: async () => wrap(await rt.directory()) };
  };

  it('the stand-in serves like the stack: schema windows, identity ok, rights per scope', async () => {
    await serviceWith({});
    const r = await lapsDiagnostics(runtimeWith({}));
    expect(r.checks).toEqual(['laps_schema_windows', 'laps_identity_ok']);
    expect(r.scopes.length).toBeGreaterThan(0);
  });

  it('only the legacy LAPS schema: laps_schema_legacy_only; no LAPS schema: laps_schema_missing', async () => {
    await serviceWith({});
    expect(await checksOf(withoutSchema(runtimeWith({}), ['mslaps-password']))).toEqual(['laps_schema_legacy_only', 'laps_identity_ok']);
    expect(await checksOf(withoutSchema(runtimeWith({}), ['mslaps-password', 'ms-mcs-admpwd']))).toEqual(['laps_schema_missing', 'laps_identity_ok']);
  });

  it('no LAPS UPN on the console: laps_identity_upn_missing', async () => {
    await serviceWith({});
    expect(await checksOf(runtimeWith({ Helpdesk__LapsIdentityUpn: undefined }))).toEqual(['laps_schema_windows', 'laps_identity_upn_missing', 'laps_identity_ok']);
  });

  it('no LAPS account on the password service: laps_identity_not_configured', async () => {
    await serviceWith({ HDC_LAPS_UPN: undefined, HDC_LAPS_PASSWORD_FILE: undefined });
    expect(await checksOf(runtimeWith({}))).toEqual(['laps_schema_windows', 'laps_identity_not_configured']);
  });

  it('a wrong LAPS password: laps_bind_failed (the password never in the answer)', async () => {
    await serviceWith({ HDC_LAPS_PASSWORD_FILE: wrongFile });
    const r = await lapsDiagnostics(runtimeWith({}));
    expect(r).toEqual({ checks: ['laps_schema_windows', 'laps_bind_failed'], scopes: [] });
  });

  it('the password service unreachable: laps_service_unreachable', async () => {
    service = undefined; // the stand-in answers 500, as a dead function would
    expect(await checksOf(runtimeWith({}))).toEqual(['laps_schema_windows', 'laps_service_unreachable']);
    const saved = process.env.HDC_LAMBDA_ENDPOINT;
    process.env.HDC_LAMBDA_ENDPOINT = 'http://127.0.0.1:9'; // nothing listens
    try {
      expect(await checksOf(runtimeWith({}))).toEqual(['laps_schema_windows', 'laps_service_unreachable']);
    } finally {
      process.env.HDC_LAMBDA_ENDPOINT = saved;
    }
  });

  it('the helpdesk disabled while delegations name LAPS actions: laps_needs_password_service (an error), the service not asked', async () => {
    await serviceWith({});
    const before = standIn.calls.length;
    const rt = runtimeWith({ Helpdesk__Enabled: 'false' });
    expect(await checksOf(rt)).toEqual(['laps_schema_windows', 'laps_needs_password_service']);
    expect(standIn.calls.length).toBe(before);
    // in the whole report: an error, with its remedy
    const c = await asOperator(rt, 'op-super');
    const report = await c.get('/api/diagnostics');
    expect(report.status).toBe(200);
    expect(report.body.checks.find((x: any) => x.code === 'laps_needs_password_service')).toMatchObject({ section: 'laps', severity: 'error', remedy: expect.stringContaining('Helpdesk:Enabled') });
  });
});
