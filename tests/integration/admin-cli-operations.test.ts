import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { consoleEnvironment, runAdminCommand } from '../../functions/admin/cli';
import { routes as authRoutes } from '../../functions/console/auth';
import { readSignInPolicy, setAccessOnly } from '../../lib/auth/access-only';
import { getOperator, setAuthenticator } from '../../lib/auth/operators';
import { AuditChain } from '../../lib/audit';
import { listRoles } from '../../lib/authz/rights';
import { loadMasterKey } from '../../lib/crypto/master-key';
import { createHttpHandler } from '../../lib/http/console';
import { readCopy, readSchema, SCHEMA_VERSION } from '../../lib/migrations';
import { createRuntime } from '../../lib/runtime';
import { storeOfEnvironment, type Store } from '../../lib/store';
import { deleteRecord, getRecord, putRecord } from '../../lib/store/records';
import { httpEvent } from '../support/http-event';
import { account, auditMark, auditSince, newClient, scratchStoreEnv, seedUser, stack, store } from '../support/stack';

// The admin command line's operations commands (console spec, Command-line operations) and the
// versioned store (Versioning 2-4), against the stack's DynamoDB Local and directory.

const env = { ...process.env, ...consoleEnvironment(stack) };
const actorCli = { name: 'admin-cli', provider: 'cli' };

describe('admin CLI: help, usage and exit codes', () => {
  it('prints every command with --help; an unknown command or a missing argument is a usage error (exit 2)', async () => {
    const all = await runAdminCommand(['--help'], env);
    expect(all.code).toBe(0);
    for (const c of ['allow-password-login --confirm', 'reset-totp <operator>', 'import-roles <file> [--replace]', 'migrate', 'reset-setup --confirm']) expect(all.out).toContain(c);
    for (const c of ['allow-password-login', 'reset-totp', 'import-roles', 'migrate', 'reset-setup', 'setup-token', 'verify-audit', 'purge-audit', 'issue-fleet-token', 'pin-password-service']) {
      const h = await runAdminCommand([c, '--help'], env);
      expect([c, h.code, h.out.startsWith(`usage: npm run admin -- ${c}`)]).toEqual([c, 0, true]);
    }
    expect((await runAdminCommand(['frobnicate'], env)).code).toBe(2);
    expect((await runAdminCommand([], env)).code).toBe(2);
    expect((await runAdminCommand(['reset-totp'], env)).code).toBe(2);
    expect((await runAdminCommand(['import-roles'], env)).code).toBe(2);
    expect((await runAdminCommand(['migrate', '--now'], env)).code).toBe(2);
  });
});

describe('access-platform only mode and allow-password-login --confirm', () => {
  const a = account('op-helpdesk');
  afterAll(async () => {
    await setAccessOnly({ store, audit: new AuditChain(store, 'console', { key: () => loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile }), lookups: true }) }, false, { actor: actorCli });
  });

  it('refuses password sign-in while on (403, audited); recovery needs --confirm; after it password sign-in works again within 5 s', async () => {
    const rt = createRuntime({ env, store });
    await setAccessOnly(rt, true, { actor: { name: 'test-setup' } });

    const mark = await auditMark();
    const refused = await newClient().login(a.username, a.password);
    expect([refused.status, refused.body.code]).toEqual([403, 'access_platform_only']);
    expect((await auditSince(mark)).find((r) => r.event === 'auth.login')).toMatchObject({ outcome: 'denied', reason: 'access_platform_only' });

    // without --confirm: usage error, nothing changed, nothing audited
    const m2 = await auditMark();
    const noConfirm = await runAdminCommand(['allow-password-login'], env);
    expect(noConfirm.code).toBe(2);
    expect((await readSignInPolicy(store)).accessOnly).toBe(true);
    expect((await auditSince(m2)).filter((r) => r.event === 'settings.teleport_only')).toEqual([]);

    const m3 = await auditMark();
    const t0 = Date.now();
    const r = await runAdminCommand(['allow-password-login', '--confirm'], env);
    expect(r.code).toBe(0);
    expect(r.out).toContain('switched off');
    // the password is accepted again: the next step asked is the authenticator code
    let again = await newClient().login(a.username, a.password);
    while (again.body.code === 'access_platform_only' && Date.now() - t0 < 5000) again = await newClient().login(a.username, a.password);
    expect([again.status, again.body.code]).toEqual([401, 'totp_required']);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await auditSince(m3)).find((x) => x.event === 'settings.teleport_only')).toMatchObject({ outcome: 'success', reason: 'off:recovery', actor: actorCli, details: { old: true, new: false } });

    // already off: nothing changed, no row
    const m4 = await auditMark();
    const twice = await runAdminCommand(['allow-password-login', '--confirm'], env);
    expect([twice.code, twice.out]).toEqual([0, expect.stringContaining('already off')]);
    expect((await auditSince(m4)).filter((x) => x.event === 'settings.teleport_only')).toEqual([]);
  });

  it('says so (exit 1) when this host does not allow password sign-in (Authentication:ActiveDirectory:Enabled=false)', async () => {
    const rt = createRuntime({ env, store });
    await setAccessOnly(rt, true, { actor: { name: 'test-setup' } });
    const r = await runAdminCommand(['allow-password-login', '--confirm'], { ...env, Authentication__ActiveDirectory__Enabled: 'false' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('Authentication:ActiveDirectory:Enabled=false');
    expect((await readSignInPolicy(store)).accessOnly).toBe(false);
  });
});

describe('reset-totp <operator>', () => {
  const target = seedUser('op-branch');
  const restore = async () => setAuthenticator(store, await loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile }), target.guid, 'op-branch', account('op-branch').totpSecret);
  afterEach(restore);

  it.each([
    ['its operator id (objectGUID)', () => target.guid.toUpperCase()],
    ['its sign-in name', () => 'OP-BRANCH'],
    ['its unique display name', () => 'Ophelia Banks'],
  ])('finds the operator by %s: cleared, audited operators.totp_reset (reason recovery)', async (_how, arg) => {
    await restore();
    const mark = await auditMark();
    const r = await runAdminCommand(['reset-totp', arg()], env);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining(`authenticator of op-branch (${target.guid}) cleared`)]);
    expect((await getOperator(store, target.guid))?.data.totpSealed).toBeUndefined();
    expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'success', reason: 'recovery', actor: actorCli, target: { id: target.guid, name: 'op-branch' } });
  });

  it('refuses an unknown and an ambiguous name (exit 1, nothing changed) and an operator with no authenticator (audited)', async () => {
    const sealed = (await getOperator(store, target.guid))?.data.totpSealed;
    expect(sealed).toBeDefined();
    const unknown = await runAdminCommand(['reset-totp', 'Nobody Atall'], env);
    expect([unknown.code, unknown.out]).toEqual([1, expect.stringContaining('no operator')]);

    // a second operator entry with the same display name makes the name ambiguous
    const twin = '00000000-0000-4000-8000-0000000abc01';
    await putRecord(store, 'OPERATORS', twin, { guid: twin, username: 'twin-of-ophelia', displayName: 'Ophelia Banks' });
    try {
      const ambiguous = await runAdminCommand(['reset-totp', 'Ophelia Banks'], env);
      expect([ambiguous.code, ambiguous.out]).toEqual([1, expect.stringContaining('names 2 operators')]);
      expect(ambiguous.out).toContain(target.guid);
    } finally {
      await deleteRecord(store, 'OPERATORS', twin);
    }
    expect((await getOperator(store, target.guid))?.data.totpSealed).toBe(sealed);

    expect((await runAdminCommand(['reset-totp', target.guid], env)).code).toBe(0);
    const mark = await auditMark();
    const none = await runAdminCommand(['reset-totp', target.guid], env);
    expect([none.code, none.out]).toEqual([1, expect.stringContaining('no authenticator')]);
    expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'denied', reason: 'no_authenticator', target: { id: target.guid } });
  });
});

describe('import-roles <file> [--replace]', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-roles-'));
  const file = (name: string, body: unknown) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body));
    return p;
  };
  const id = `cli-${randomBytes(3).toString('hex')}`;

  it('imports, refuses to overwrite without --replace, overwrites with it, reports refused roles (exit 1), audited', async () => {
    const first = file('a.json', { roles: [{ id, name: `CLI ${id}`, permissions: ['users.read'] }] });
    expect((await runAdminCommand(['import-roles', first], env)).code).toBe(0);
    const second = file('b.json', { roles: [{ id, name: `CLI ${id}`, permissions: ['users.read', 'groups.read'] }] });
    const noReplace = await runAdminCommand(['import-roles', second], env);
    expect(noReplace.code).toBe(1);
    expect((await listRoles(store)).find((r) => r.id === id)?.permissions).toEqual(['users.read']);
    const mark = await auditMark();
    const replaced = await runAdminCommand(['import-roles', second, '--replace'], env);
    expect(replaced.code).toBe(0);
    expect((await listRoles(store)).find((r) => r.id === id)?.permissions).toEqual(['users.read', 'groups.read']);
    expect((await auditSince(mark)).length).toBeGreaterThan(0);
    // a LAPS permission without computers.read is refused; the valid one next to it is imported
    const mixed = file('c.json', { roles: [{ id: `${id}-bad`, name: `CLI ${id} bad`, permissions: ['computers.laps.read'] }, { id: `${id}-ok`, name: `CLI ${id} ok`, permissions: ['audit.read'] }] });
    const m = await runAdminCommand(['import-roles', mixed], env);
    expect([m.code, m.out]).toEqual([1, expect.stringContaining('computers_read_required')]);
    const ids = (await listRoles(store)).map((r) => r.id);
    expect(ids).toContain(`${id}-ok`);
    expect(ids).not.toContain(`${id}-bad`);
    expect((await runAdminCommand(['import-roles', file('d.json', '{not json')], env)).code).toBe(2);
    expect((await runAdminCommand(['import-roles', path.join(dir, 'missing.json')], env)).code).toBe(2);
  });
});

describe('versioned store: migrations (Database:AutoMigrate, migrate)', () => {
  // a store as the previous version wrote it: configured (instance settings), no schema version,
  // a custom role named 'Super administrator' (the built-in role's name)
  async function previousVersionStore(): Promise<{ store: Store; env: NodeJS.ProcessEnv; folder: string }> {
    const storeEnv = scratchStoreEnv('hdc-mig');
    const s = storeOfEnvironment(storeEnv);
    await s.ensure();
    const settings = await getRecord(store, 'INSTANCE', 'SETTINGS');
    await putRecord(s, 'INSTANCE', 'SETTINGS', settings!.data);
    await putRecord(s, 'ROLES', 'legacy-super', { id: 'legacy-super', name: 'Super administrator', permissions: ['users.read'] });
    await putRecord(s, 'ROLES', 'helpdesk', { id: 'helpdesk', name: 'Helpdesk', permissions: ['users.read'] });
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-backups-'));
    return { store: s, folder, env: { ...env, ...storeEnv, Database__BackupFolder: folder } };
  }
  const roleName = async (s: Store, id: string) => (await listRoles(s)).find((r) => r.id === id)?.name;

  it('with Database:AutoMigrate=false the console answers 503 migration_pending and changes nothing; `migrate` copies the data, then migrates (audited)', async () => {
    const old = await previousVersionStore();
    const offEnv = { ...old.env, Database__AutoMigrate: 'false' };
    const rt = createRuntime({ env: offEnv, store: old.store });
    const handler = createHttpHandler(authRoutes, () => rt);
    const r = await handler(httpEvent('GET', '/api/auth/me'));
    expect([r.statusCode, JSON.parse(r.body!).code]).toEqual([503, 'migration_pending']);
    expect((await readSchema(old.store)).state.version).toBe(0);
    expect(await roleName(old.store, 'legacy-super')).toBe('Super administrator');
    expect(fs.readdirSync(old.folder)).toEqual([]);

    const m = await runAdminCommand(['migrate'], offEnv);
    expect(m.code).toBe(0);
    expect(m.out).toContain(`from schema version 0 to ${SCHEMA_VERSION}`);
    expect(await roleName(old.store, 'legacy-super')).toBe('Super administrator (custom)');
    expect(await roleName(old.store, 'helpdesk')).toBe('Helpdesk');
    const { state } = await readSchema(old.store);
    expect(state.version).toBe(SCHEMA_VERSION);
    expect(state.history.map((h) => h.name)).toContain('custom-super-administrator-role-renamed');
    // the copy was taken before: it holds the role under its old name, mode 0600
    const [copy] = fs.readdirSync(old.folder);
    const copyFile = path.join(old.folder, copy);
    expect(fs.statSync(copyFile).mode & 0o777).toBe(0o600);
    expect(m.out).toContain(copyFile);
    expect(readCopy(copyFile).find((i) => i.pk === 'ROLES' && i.sk === 'legacy-super')).toMatchObject({ data: { name: 'Super administrator' } });
    const rows: Array<{ event: string; details?: Record<string, unknown>; actor?: unknown }> = [];
    for await (const row of new AuditChain(old.store, 'console').rows({})) rows.push(row);
    expect(rows.find((x) => x.event === 'database.migrated')).toMatchObject({ actor: actorCli, details: { from: 0, to: SCHEMA_VERSION, copy: copyFile } });

    // now the console serves; a second migrate has nothing to do and copies nothing
    const after = await handler(httpEvent('GET', '/api/auth/me'));
    expect(after.statusCode).toBe(401);
    const again = await runAdminCommand(['migrate'], offEnv);
    expect([again.code, again.out]).toEqual([0, expect.stringContaining('no pending migration')]);
    expect(fs.readdirSync(old.folder)).toHaveLength(1);
  });

  it('with Database:AutoMigrate=true (default) the first request migrates after the copy, audited as the console', async () => {
    const old = await previousVersionStore();
    const rt = createRuntime({ env: old.env, store: old.store });
    const handler = createHttpHandler(authRoutes, () => rt);
    const r = await handler(httpEvent('GET', '/api/auth/me'));
    expect(r.statusCode).toBe(401);
    expect(await roleName(old.store, 'legacy-super')).toBe('Super administrator (custom)');
    expect((await readSchema(old.store)).state.version).toBe(SCHEMA_VERSION);
    expect(fs.readdirSync(old.folder)).toHaveLength(1);
    const rows: Array<{ event: string; actor?: unknown }> = [];
    for await (const row of new AuditChain(old.store, 'console').rows({})) rows.push(row);
    expect(rows.find((x) => x.event === 'database.migrated')).toMatchObject({ actor: { name: 'console', provider: 'system' } });
  });

  it('refuses while another instance holds the migration lock, and a store newer than the code (exit 1, nothing changed)', async () => {
    const old = await previousVersionStore();
    await putRecord(old.store, 'SCHEMA', 'MIGRATION_LOCK', { since: new Date().toISOString() }, { ttl: Math.floor(Date.now() / 1000) + 600 });
    const locked = await runAdminCommand(['migrate'], old.env);
    expect([locked.code, locked.out]).toEqual([1, expect.stringContaining('migration_in_progress')]);
    expect(await roleName(old.store, 'legacy-super')).toBe('Super administrator');
    expect(fs.readdirSync(old.folder)).toEqual([]);

    await putRecord(old.store, 'SCHEMA', 'VERSION', { version: SCHEMA_VERSION + 1, history: [] });
    const newer = await runAdminCommand(['migrate'], old.env);
    expect([newer.code, newer.out]).toEqual([1, expect.stringContaining('newer than this version')]);
    const rt = createRuntime({ env: old.env, store: old.store });
    const r = await createHttpHandler(authRoutes, () => rt)(httpEvent('GET', '/api/auth/me'));
    expect([r.statusCode, JSON.parse(r.body!).code]).toEqual([503, 'schema_newer_than_code']);
  });

  it('the stack store was stamped with the current version at its first request (a fresh install migrates nothing)', async () => {
    expect((await readSchema(store)).state).toMatchObject({ version: SCHEMA_VERSION, history: [] });
  });
});
