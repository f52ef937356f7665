import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createStore, type Store } from '../../lib/store';
import { deleteRecord, getRecord, putRecord } from '../../lib/store/records';
import { isServiceItem } from '../../lib/password-service/link/service-chain';
import { PIN_KEY } from '../../lib/password-service/service-side/context';
import { ConsoleClient } from '../../local/console-client';
import { seedConsole } from '../../local/seed-app';
import { ensureDirectory } from '../../local/stack';
import { allItems, describeWithPodman, ensureImages, itemsOfCopy, mode, names, nextCode, podman, removeContainers, running, SCRIPTS, sh, TAG_A, TAG_B } from './support';

// A self-hosted console from the images, on the local Samba directory (docs/containers.md):
// install (two containers, each with its own SQLite file), sign in through the containerised
// console, reveal a LAPS password through the password-service container, upgrade from one image
// tag to another with a migration, back up (a point-in-time copy of each store), break something
// in both stores, restore, and refuse bad archives with exit 2 and nothing stopped.
// Host networking: the DCs listen on this host's loopback (isolation.test.ts runs the bridge networks).

const NAME = 'hdcct';
const PORT = 18443;

/** A store file of the instance, opened from the host as its container does (the console's keeps its group's read). */
function openStore(file: string, groupRead = false): Store {
  const store = createStore({ sqliteFile: file });
  if (groupRead) fs.chmodSync(file, 0o640);
  return store;
}

describeWithPodman('a self-hosted instance from the images', () => {
  const seed = ensureDirectory();
  const t = seed.technicalAccounts;
  let dir: string;
  let secretsIn: string;
  let store: Store;
  let serviceStore: Store;
  const consoleUrl = `http://127.0.0.1:${PORT}`;
  let accounts: Awaited<ReturnType<typeof seedConsole>>;
  const install = (...extra: string[]) =>
    sh('bash', [
      path.join(SCRIPTS, 'install.sh'),
      '--instance', dir, '--name', NAME, '--port', String(PORT), '--network', 'host', '--bind', '127.0.0.1',
      '--domain', seed.domain, '--laps-upn', t.laps.upn, '--laps-password-file', path.join(secretsIn, 'laps'),
      '--reset-upn', t.reset.upn, '--reset-password-file', path.join(secretsIn, 'reset'), '--write-upn', t.write.upn,
      ...extra,
    ]);
  const reveal = async () => {
    const a = accounts.find((x) => x.username === 'op-helpdesk')!;
    const c = new ConsoleClient(consoleUrl);
    expect((await c.login(a.username, a.password, await nextCode(a.username, a.totpSecret!))).status).toBe(200);
    expect((await c.post('/api/auth/reauth', { code: await nextCode(a.username, a.totpSecret!) })).status).toBe(200);
    const pc = seed.computers.find((x) => x.name === 'WS-STD-01') as { guid: string; lapsPassword?: string };
    return { r: await c.post(`/api/computers/${pc.guid}/laps`, { confirm: true, ticket: 'INC-7001' }), password: pc.lapsPassword };
  };

  beforeAll(() => {
    ensureImages();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-instance-'));
    secretsIn = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-install-secrets-'));
    fs.writeFileSync(path.join(secretsIn, 'laps'), `${t.laps.password}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(secretsIn, 'reset'), t.reset.password, { mode: 0o600 });
    // the access platform's join credentials, as it hands them (several lines)
    fs.writeFileSync(path.join(secretsIn, 'tunnel'), 'join-token: tunnel-canary-51c7\nca-pin: sha256:00\n', { mode: 0o600 });
    removeContainers(NAME, 'console', 'password-service');
  }, 600_000);
  afterAll(() => {
    // a failure's evidence: the containers' last lines (no secret is ever logged: asserted below)
    for (const c of ['console', 'password-service']) console.log(`--- podman logs ${NAME}-${c}\n${podman('logs', '--tail', '15', `${NAME}-${c}`).out}`);
    store?.close();
    serviceStore?.close();
    if (process.env.HDC_KEEP_INSTANCE === '1') return;
    removeContainers(NAME, 'console', 'password-service');
    fs.rmSync(secretsIn, { recursive: true, force: true });
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a LAPS account that is also the read account, before anything is created', () => {
    const r = install('--version', TAG_A, '--read-upn', t.laps.upn.toUpperCase());
    expect(r.code).toBe(2);
    expect(r.out).toContain('must not be the read, write or reset account');
    expect(fs.existsSync(path.join(dir, 'hdc.env'))).toBe(false);
    expect(running(NAME)).toEqual([]);
  });

  it('installs: two containers, no store container, each store and secret its own container user\'s', () => {
    const r = install('--version', TAG_A, '--read-upn', t.read.upn, '--tunnel-credentials-file', path.join(secretsIn, 'tunnel'));
    expect(r.out).toContain('console healthy');
    expect(r.code).toBe(0);
    // the host's credentials: the whole file, root's, 0600, in a folder no container mounts
    expect(mode(path.join(dir, 'secrets/host'))).toEqual(['700', 0]);
    expect(mode(path.join(dir, 'secrets/host/tunnel-credentials'))).toEqual(['600', 0]);
    expect(fs.readFileSync(path.join(dir, 'secrets/host/tunnel-credentials'), 'utf8')).toBe(fs.readFileSync(path.join(secretsIn, 'tunnel'), 'utf8'));
    for (const n of ['console', 'password-service']) expect(podman('inspect', `${NAME}-${n}`, '--format', '{{range .Mounts}}{{.Source}} {{end}}').out).not.toContain('secrets/host');
    expect(names(NAME)).toEqual([`${NAME}-console`, `${NAME}-password-service`]);
    expect(mode(path.join(dir, 'secrets/password-service/laps.password'))).toEqual(['600', 10002]);
    expect(mode(path.join(dir, 'secrets/password-service/reset.password'))).toEqual(['600', 10002]);
    expect(mode(path.join(dir, 'secrets/console/master.key'))).toEqual(['600', 10001]);
    expect(mode(path.join(dir, 'hdc.env'))[0]).toBe('600');
    expect(fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8')).toContain('HDC_STORE=sqlite');
    // each container's SQLite file in its own volume: the service's its own only; the console's
    // readable by its group, which the service's container joins to read the directory settings
    expect(mode(path.join(dir, 'data/password-service/password-service.sqlite'))).toEqual(['600', 10002]);
    expect(mode(path.join(dir, 'data/password-service'))).toEqual(['700', 10002]);
    expect(mode(path.join(dir, 'data/console/console.sqlite'))).toEqual(['640', 10001]);
    expect(mode(path.join(dir, 'data/console'))).toEqual(['750', 10001]);
    expect(fs.readFileSync(path.join(dir, 'secrets/password-service/laps.password'), 'utf8')).toBe(t.laps.password);
    // no secret on any container's command line or environment
    const inspect = podman('inspect', `${NAME}-console`, `${NAME}-password-service`).out;
    expect(inspect).not.toContain(t.laps.password);
    expect(inspect).not.toContain(t.reset.password);
    // no JVM, no DynamoDB Local in the images: no such folder, and no Java binary, JVM library or jar anywhere in them
    const look =
      "const fs=require('fs'),p=require('path');const found=['/opt','/usr/lib/jvm','/opt/java','/opt/dynamodb'].filter((d)=>fs.existsSync(d));let files=0;" +
      "const walk=(d)=>{let es;try{es=fs.readdirSync(d,{withFileTypes:true})}catch{return}for(const e of es){const f=p.join(d,e.name);if(['/proc','/sys','/dev'].includes(f))continue;" +
      "if(e.isDirectory())walk(f);else{files++;if(/^(java|libjvm\\.so)$|\\.jar$|dynamodb/i.test(e.name))found.push(f)}}};walk('/');console.log(files>5?found.join(',')||'none':'only '+files+' files')";
    for (const i of ['hdc-console', 'hdc-password-service', 'hdc-fleet']) {
      const files = podman('run', '--rm', '--network', 'none', '--entrypoint', '/usr/local/bin/node', `localhost/${i}:${TAG_A}`, '-e', look).out.trim();
      expect([i, files]).toEqual([i, 'none']);
    }
    // the password service's container runs its own audit chain's retention (the console cannot see that chain)
    expect(podman('logs', `${NAME}-password-service`).out).toMatch(/"message":"scheduler started".*"jobs":\["hdc-password-service-auditRetention rate\(1 day\)"\]/);
    store = openStore(path.join(dir, 'data/console/console.sqlite'), true);
    serviceStore = openStore(path.join(dir, 'data/password-service/password-service.sqlite'));
  });

  it('the console container cannot read the password service\'s secrets or store, even when handed the folders', () => {
    const mounts = podman('inspect', `${NAME}-console`, '--format', '{{range .Mounts}}{{.Source}} {{end}}').out;
    expect(mounts).not.toContain('secrets/password-service');
    expect(mounts).not.toContain('data/password-service');
    for (const [folder, file] of [['secrets/password-service', 'laps.password'], ['data/password-service', 'password-service.sqlite']]) {
      const r = podman('run', '--rm', '--network', 'none', '-v', `${dir}/${folder}:/s:ro`, '--entrypoint', '/usr/local/bin/node', `localhost/hdc-console:${TAG_A}`, '-e', `require('fs').readFileSync('/s/${file}')`);
      expect(r.code).not.toBe(0);
      expect(r.out).toContain('EACCES');
      expect(r.out).not.toContain(t.laps.password);
    }
  });

  it('signs in through the containerised console and reveals a LAPS password through the password-service container', async () => {
    const masterKey = Buffer.from(fs.readFileSync(path.join(dir, 'secrets/console/master.key'), 'utf8').trim(), 'base64');
    accounts = await seedConsole(store, masterKey, consoleUrl, seed);
    const pin = podman('exec', `${NAME}-console`, '/usr/local/bin/node', '/app/main.js', 'admin', 'pin-password-service');
    expect(pin.out).toContain('pinned');
    const { r, password } = await reveal();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ password, source: 'windows' });
    // the service's own rows (its pin, its audit chain) are in its own file, none in the console's
    expect(await getRecord(serviceStore, PIN_KEY.pk, PIN_KEY.sk)).toBeDefined();
    expect((await allItems(store)).filter((it) => isServiceItem(it.pk))).toEqual([]);
    // the password never reaches the containers' logs
    for (const n of ['console', 'password-service']) expect(podman('logs', `${NAME}-${n}`).out).not.toContain(password);
  }, 180_000);

  it('upgrades to another tag with a migration: backup first, the new image pinned, the store migrated after its copy', async () => {
    // the store as the previous version wrote it: no schema version, a custom role named like the built-in one
    await deleteRecord(store, 'SCHEMA', 'VERSION');
    await putRecord(store, 'ROLES', 'legacy-super', { id: 'legacy-super', name: 'Super administrator', permissions: ['computers.read'] });
    const before = fs.readdirSync(path.join(dir, 'backups'));
    const r = sh('bash', [path.join(dir, 'upgrade.sh'), `localhost:${TAG_B}`]);
    expect(r.out).toContain(`upgraded to localhost:${TAG_B}`);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8')).toContain(`HDC_IMAGE_TAG=${TAG_B}`);
    expect(running(NAME).every((l) => l.endsWith(`:${TAG_B}`))).toBe(true);
    // the kept-alive sockets of this process led to the containers upgrade.sh replaced
    http.globalAgent.destroy();
    // the first request of the new version runs the pending migration after its own copy
    expect((await new ConsoleClient(consoleUrl).get('/api/auth/me')).status).toBe(401);
    const role = await getRecord<{ name: string }>(store, 'ROLES', 'legacy-super');
    expect(role?.data.name).toBe('Super administrator (custom)');
    const added = fs.readdirSync(path.join(dir, 'backups')).filter((f) => !before.includes(f));
    expect(added.some((f) => /^console-backup-.+\.sqlite$/.test(f))).toBe(true); // upgrade.sh's copy, before anything changed
    expect(added.some((f) => /^console-pre-migration-.+\.sqlite$/.test(f))).toBe(true); // the migration's own copy
  }, 300_000);

  it('backs up both stores, and restores after both broke; bad archives are refused with exit 2 and nothing stopped', async () => {
    const b = sh('bash', [path.join(dir, 'backup.sh')]);
    expect(b.code).toBe(0);
    const archive = b.out.trim().split('\n').pop()!;
    expect((fs.statSync(archive).mode & 0o777).toString(8)).toBe('600');
    const named = fs.readFileSync(`${archive}.database`, 'utf8').trim();
    expect(named).toMatch(/^backups\/console-backup-.+\.sqlite$/);
    const listing = sh('tar', ['-tzf', archive]).stdout.split('\n');
    expect(listing.filter((l) => /^service-backups\/password-service-backup-.+\.sqlite$/.test(l))).toHaveLength(1);
    // every file the console spec names (Backup and restore 1): the database, the master key, the
    // environment file, the configuration, the helpdesk link key, the reset and LAPS passwords, the
    // tunnel credentials (the DNS credentials and the certificate: tests/containers/console-tls)
    for (const f of [named, 'hdc.env', 'config/appsettings.json', 'secrets/console/master.key', 'secrets/console/link.key', 'secrets/password-service/link.key', 'secrets/password-service/reset.password', 'secrets/password-service/laps.password', 'secrets/host/tunnel-credentials']) {
      expect([f, listing.includes(f)]).toEqual([f, true]);
    }
    // both copies are SQLite databases of the product, each of its own store
    expect(itemsOfCopy(path.join(dir, named)).length).toBeGreaterThan(10);

    // break something in each store: a role deleted behind the console's back, the service's pin lost
    expect(await getRecord(store, 'ROLES', 'helpdesk')).toBeDefined();
    await deleteRecord(store, 'ROLES', 'helpdesk');
    await deleteRecord(serviceStore, PIN_KEY.pk, PIN_KEY.sk);

    const up = running(NAME);
    const refused = (archivePath: string, message: string) => {
      const r = sh('bash', [path.join(dir, 'restore.sh'), archivePath]);
      expect([r.code, r.out]).toEqual([2, expect.stringContaining(message)]);
      expect(running(NAME)).toEqual(up);
    };
    const bad = path.join(dir, 'archives', 'bad.tar.gz');
    fs.copyFileSync(archive, bad);
    // a companion naming two files
    fs.writeFileSync(`${bad}.database`, `${named}\nbackups/other.sqlite\n`);
    refused(bad, 'exactly one database file');
    // a companion naming a file the archive does not hold
    fs.writeFileSync(`${bad}.database`, 'backups/missing.sqlite\n');
    refused(bad, 'does not hold backups/missing.sqlite');
    // an archive whose database file is not a SQLite database, and one whose console copy is the service's
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-bad-archive-'));
    sh('tar', ['-C', src, '-xzf', archive]);
    const serviceCopy = listing.find((l) => l.startsWith('service-backups/'))!;
    const forge = (dbContent: Buffer | string) => {
      fs.writeFileSync(path.join(src, named), dbContent);
      sh('tar', ['-C', src, '-czf', bad, 'hdc.env', 'config', 'secrets', named, serviceCopy]);
      fs.writeFileSync(`${bad}.database`, `${named}\n`);
    };
    forge('not a database at all, only text that names itself .sqlite\n');
    refused(bad, 'is not a copy of the console');
    forge(fs.readFileSync(path.join(src, serviceCopy)));
    refused(bad, "a copy of another service's store");
    fs.rmSync(src, { recursive: true, force: true });

    // and the password service's container gone (removed by hand, or never created by a failed start):
    // the restore still replaces both (podman 4.3 removes nothing when one of several names is missing)
    removeContainers(NAME, 'password-service');
    serviceStore.close();
    const r = sh('bash', [path.join(dir, 'restore.sh'), archive]);
    expect(r.out).toContain('restored from');
    expect(r.code).toBe(0);
    expect(names(NAME)).toEqual([`${NAME}-console`, `${NAME}-password-service`]);
    http.globalAgent.destroy();
    expect(await getRecord(store, 'ROLES', 'helpdesk')).toBeDefined();
    serviceStore = openStore(path.join(dir, 'data/password-service/password-service.sqlite'));
    expect(await getRecord(serviceStore, PIN_KEY.pk, PIN_KEY.sk)).toBeDefined();
    expect(fs.readdirSync(path.join(dir, 'archives')).some((f) => /^before-restore-.*\.tar\.gz$/.test(f))).toBe(true);
    // the restored pin holds: a reveal works again without pinning anew
    const { r: again, password } = await reveal();
    expect([again.status, again.body?.password]).toEqual([200, password]);
  }, 300_000);

  it('re-running install.sh (console spec, Backup and restore 3; Versioning 2): a lost link key is generated anew for both containers, a new reset-password file replaces the password, another version upgrades as upgrade.sh does', async () => {
    const keyOf = (who: string) => fs.readFileSync(path.join(dir, `secrets/${who}/link.key`), 'utf8');
    const oldKey = keyOf('console');
    // the link key lost: deleted, then the installer re-run (nothing else given: the rest is kept)
    fs.rmSync(path.join(dir, 'secrets/console/link.key'));
    fs.rmSync(path.join(dir, 'secrets/password-service/link.key'));
    fs.writeFileSync(path.join(secretsIn, 'reset-new'), `${t.reset.password}\n`, { mode: 0o600 });
    const r = sh('bash', [path.join(SCRIPTS, 'install.sh'), '--instance', dir, '--reset-password-file', path.join(secretsIn, 'reset-new')]);
    expect(r.out).toContain('console healthy');
    expect(r.code).toBe(0);
    expect(keyOf('console')).not.toBe(oldKey);
    expect(keyOf('password-service')).toBe(keyOf('console'));
    expect(mode(path.join(dir, 'secrets/password-service/link.key'))).toEqual(['600', 10002]);
    // the newline of the file is not part of the password
    expect(fs.readFileSync(path.join(dir, 'secrets/password-service/reset.password'), 'utf8')).toBe(t.reset.password);
    // the host's credentials kept from the first run
    expect(fs.readFileSync(path.join(dir, 'secrets/host/tunnel-credentials'), 'utf8')).toContain('tunnel-canary-51c7');
    http.globalAgent.destroy();
    // both containers sealed with the new key: a reveal works
    const { r: after, password } = await reveal();
    expect([after.status, after.body?.password]).toEqual([200, password]);

    // another version given to the installer: the upgrade path (a copy first, the new image pinned)
    const before = fs.readdirSync(path.join(dir, 'backups'));
    const u = sh('bash', [path.join(SCRIPTS, 'install.sh'), '--instance', dir, '--version', TAG_A]);
    expect(u.out).toContain(`upgraded to localhost:${TAG_A}`);
    expect(u.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8')).toContain(`HDC_IMAGE_TAG=${TAG_A}`);
    expect(running(NAME).every((l) => l.endsWith(`:${TAG_A}`))).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'backups')).filter((f) => !before.includes(f)).some((f) => /^console-backup-.+\.sqlite$/.test(f))).toBe(true);
    http.globalAgent.destroy();
  }, 300_000);
});
