import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { applyClientRole, clientRole, clientRoleYaml } from '../../../lib/fleet/client-role';
import { Tctl } from '../../../lib/fleet/cluster-cli';
import { identityRole, type IdentityRole } from '../../../lib/fleet/identity-role';
import { commandOf, FAKE_TCTL_PATH, fakeTctlEnv, readCommandLog, resetFakeTctl, setFakeTctlControl } from '../../../local/fleet/fake-tctl';

// Per-client access roles: the role v7 shape of the spec (and of the reference's tctl input), and
// creating / refreshing it through the (fake) cluster CLI as real tctl does, with the identity
// role's rules enforced.

const ROOT = path.resolve(__dirname, '../../..');
const REFERENCE = '/work/shared/reference/teleport/fixtures/role_fleet-client-acme.yaml';
const acme = { code: 'acme', name: 'Acme Industries' };

describe('the role shape', () => {
  it('is the spec table: role v7, fleet-client-<code>, managed labels, app and desktop labels, the windows_logins trait', () => {
    const role = parse(clientRoleYaml(acme));
    expect(role).toEqual({
      kind: 'role',
      version: 'v7',
      metadata: {
        name: 'fleet-client-acme',
        description: 'Fleet technician scope: client acme (Acme Industries); RDP to its desktops and its apps only',
        labels: { 'fleet-managed': 'true', client_code: 'acme' },
      },
      spec: { allow: { app_labels: { client_code: 'acme' }, windows_desktop_labels: { client_code: 'acme' }, windows_desktop_logins: ['{{internal.windows_logins}}'] }, deny: {} },
    });
    expect(clientRoleYaml(acme)).toContain(`fleet-managed: "true"`); // a string label, not a YAML boolean
  });
  (fs.existsSync(REFERENCE) ? it : it.skip)("equals the reference's tctl create input for acme", () => {
    expect(parse(clientRoleYaml(acme))).toEqual(parse(fs.readFileSync(REFERENCE, 'utf8')));
  });
  it('grants nothing else (no node, no rules, no other label), whatever the client name holds', () => {
    const role = parse(clientRoleYaml({ code: 'x-1', name: 'Evil: "x" \n {{internal.logins}} *: *' }));
    expect(Object.keys(role.spec.allow).sort()).toEqual(['app_labels', 'windows_desktop_labels', 'windows_desktop_logins']);
    expect(role.spec.allow.app_labels).toEqual({ client_code: 'x-1' });
    expect(role.metadata.description).toContain('Evil: "x" \n {{internal.logins}} *: *');
  });
});

describe('creating it through the cluster CLI', () => {
  let dir: string;
  let log: string;
  const saved = { ...process.env };
  const tctl = () => new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 5000, ACCESS_AUTH_SERVER: 'teleport.msp.test:443', ACCESS_IDENTITY_FILE: '/var/lib/fleet/identity', ACCESS_MACHINE_ID_IDENTITY: undefined });
  const roles = () => JSON.parse(fs.readFileSync(path.join(dir, 'roles.json'), 'utf8'));
  const stored = (name: string) => roles().find((r: any) => r.metadata.name === name);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-tctl-client-role-'));
    log = path.join(dir, 'commands.log');
    resetFakeTctl(dir);
    Object.assign(process.env, fakeTctlEnv(dir, log));
  });
  afterEach(() => {
    process.env = { ...saved };
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const without = (verb: string): IdentityRole => {
    const role = identityRole();
    role.spec.allow.rules = role.spec.allow.rules!.map((r) => (r.resources.includes('role') ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r));
    return role;
  };

  it('creates a new role (tctl create, YAML on stdin), stored with the server defaults', async () => {
    const r = await applyClientRole(tctl(), { code: 'initech', name: 'Initech' }, false);
    expect(r.outcome).toBe('created');
    expect(readCommandLog(log).map(commandOf)).toEqual([['get', 'role/fleet-client-initech', '--format=json'], ['create']]);
    expect(stored('fleet-client-initech')).toMatchObject({ kind: 'role', version: 'v7', metadata: { labels: { 'fleet-managed': 'true', client_code: 'initech' } }, spec: { allow: clientRole({ code: 'initech', name: 'Initech' }).spec.allow, options: { max_session_ttl: '30h0m0s' } } });
    expect(readCommandLog(log).flatMap((c) => c.argv).join(' ')).not.toContain('windows_logins'); // never on a command line
  });
  it('refreshes a role it manages (create --force)', async () => {
    const before = stored('fleet-client-acme').metadata.revision;
    const r = await applyClientRole(tctl(), acme, false);
    expect(r.outcome).toBe('refreshed');
    expect(readCommandLog(log).map(commandOf)[1]).toEqual(['create', '--force']);
    expect(stored('fleet-client-acme').metadata.revision).not.toBe(before);
  });
  it('refuses to replace a role it did not create: 409 would_overwrite, nothing written; overwrite replaces it', async () => {
    const all = roles();
    const theirs = { ...all[0], metadata: { name: 'fleet-client-acme', labels: { team: 'sec' } }, spec: { ...all[0].spec, allow: { logins: ['root'] } } };
    fs.writeFileSync(path.join(dir, 'roles.json'), JSON.stringify([theirs, ...all.slice(1)], null, 4));
    await expect(applyClientRole(tctl(), acme, false)).rejects.toMatchObject({ status: 409, code: 'would_overwrite' });
    expect(stored('fleet-client-acme')).toEqual(theirs);
    expect(readCommandLog(log).map(commandOf)).toEqual([['get', 'role/fleet-client-acme', '--format=json']]);
    const r = await applyClientRole(tctl(), acme, true);
    expect(r.outcome).toBe('replaced');
    expect(stored('fleet-client-acme').metadata.labels).toEqual({ client_code: 'acme', 'fleet-managed': 'true' });
  });
  it.each(['read', 'create', 'update'])('an identity role without role %s: 502 access_access_denied, nothing written', async (verb) => {
    setFakeTctlControl(dir, { roles: [without(verb)] });
    await expect(applyClientRole(tctl(), { code: 'initech', name: 'Initech' }, false)).rejects.toMatchObject({ status: 502, code: 'access_access_denied' });
    expect(stored('fleet-client-initech')).toBeUndefined();
  });
  it('the fake refuses an existing role without --force with the cluster text', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(FAKE_TCTL_PATH, ['create'], { input: clientRoleYaml(acme), encoding: 'utf8', env: process.env });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('\x1b[31mERROR: \x1b[0mrole "fleet-client-acme" already exists\n');
    expect(fs.existsSync(path.join(ROOT, 'local/fleet/tctl'))).toBe(true);
  });
});
