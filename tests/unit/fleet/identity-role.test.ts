import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { runFleetCommand } from '../../../functions/fleet/cli';
import { readAutoUpdate } from '../../../lib/fleet/autoupdate';
import { getInventory, getResources, Tctl, type ClusterCli } from '../../../lib/fleet/cluster-cli';
import { identityRole, identityRoleYaml, IDENTITY_ROLE_FILE, type IdentityRole } from '../../../lib/fleet/identity-role';
import { lockBodySchema, lockNode, unlockNode } from '../../../lib/fleet/locks';
import { buildProxies, readSnapshot } from '../../../lib/fleet/nodes';
import { FAKE_TCTL_PATH, fakeTctlEnv, resetFakeTctl, setFakeTctlControl } from '../../../local/fleet/fake-tctl';

// The fleet plane's own cluster role: shipped as one file, exactly the spec's identity role
// (fleet spec, "Identity role of the fleet plane"), shown by the docs, printed by the installer
// command, and enforced by the fake cluster CLI so that a missing permission fails a test.

const ROOT = path.resolve(__dirname, '../../..');
const GW01 = '3f9c2b7e-5d41-4c8a-9a1e-7b2d6c0f8e13';
const GW02 = '8a1d4e62-7bc3-4f0e-a5d9-0e6b1c37f2a4';

/** The spec's table, verbatim: resources → verbs, and the desktop label selector. */
const SPEC_RULES = [
  { resources: ['lock'], verbs: ['list', 'read', 'create', 'update', 'delete'] },
  { resources: ['instance', 'windows_desktop_service', 'windows_desktop'], verbs: ['list', 'read'] },
  { resources: ['token'], verbs: ['list', 'read', 'create', 'delete'] },
  // the spec says create (update to refresh); tctl create also reads the role first (decisions)
  { resources: ['role'], verbs: ['read', 'create', 'update'] },
];

describe('the shipped identity role', () => {
  it('is exactly the spec identity role: its rules, the desktop selector, nothing else', () => {
    const role = identityRole();
    expect(role).toMatchObject({ kind: 'role', version: 'v7', metadata: { name: 'fleet-plane' } });
    expect(role.spec.allow).toEqual({ windows_desktop_labels: { '*': '*' }, rules: SPEC_RULES });
    expect(role.spec.deny).toEqual({});
    expect(Object.keys(role.spec)).toEqual(['allow', 'deny']);
  });
  it('grants no node read, no autoupdate read, no RDP login (the test data role used to)', () => {
    const granted = identityRole().spec.allow.rules!.flatMap((r) => r.resources);
    for (const kind of ['node', 'autoupdate_config', 'autoupdate_version', 'autoupdate_agent_rollout', '*']) expect(granted).not.toContain(kind);
    expect(JSON.stringify(identityRole())).not.toMatch(/logins|node_labels|app_labels/);
  });
  it('is the role the fixtures show for the fleet-plane identity', () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(ROOT, 'local/fleet/fixtures/roles.json'), 'utf8')).find((r: any) => r.metadata.name === 'fleet-plane');
    expect(fixture.spec.allow).toEqual(identityRole().spec.allow);
  });
  it('is shown verbatim in docs/fleet.md', () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs/fleet.md'), 'utf8');
    expect(docs).toContain('```yaml\n' + identityRoleYaml());
  });
  it("is what the installer command prints: a file tctl create accepts, the same role", () => {
    const r = runFleetCommand(['identity-role']);
    expect(r.code).toBe(0);
    expect(parse(r.out)).toEqual(identityRole());
    expect(r.out).toContain('tctl create -f fleet-plane-role.yaml');
    expect(runFleetCommand(['nope']).code).toBe(2);
  });
});

describe('the fake cluster CLI enforces the identity role', () => {
  let dir: string;
  let cli: ClusterCli;
  const saved = { ...process.env };
  // a refused read rejects while its parallel siblings still run: wait for them before cleaning up
  const running = new Set<Promise<unknown>>();
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-tctl-role-'));
    resetFakeTctl(dir);
    Object.assign(process.env, fakeTctlEnv(dir, path.join(dir, 'commands.log')));
    const tctl = new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 5000, ACCESS_AUTH_SERVER: 'teleport.msp.test:443', ACCESS_IDENTITY_FILE: '/var/lib/fleet/identity', ACCESS_MACHINE_ID_IDENTITY: undefined });
    cli = {
      run: (args) => {
        const p = tctl.run(args);
        running.add(p.catch(() => undefined));
        return p;
      },
    };
  });
  afterEach(async () => {
    await Promise.all(running);
    running.clear();
    process.env = { ...saved };
    fs.rmSync(dir, { recursive: true, force: true });
  });
  /** the shipped role with one verb (or a whole rule, or the desktop selector) taken away */
  const without = (resource: string, verb?: string): IdentityRole => {
    const role = identityRole();
    role.spec.allow.rules = role.spec.allow.rules!.map((r) => (r.resources.includes(resource) ? { ...r, verbs: verb ? r.verbs.filter((v) => v !== verb) : [] } : r));
    return role;
  };
  const run = (args: string[]) => cli.run(args).then(
    (r) => ({ ok: true, out: r.stdout }),
    () => ({ ok: false, out: '' }),
  );

  it('lets every command the fleet plane runs through with the shipped role', async () => {
    const snap = await readSnapshot(cli);
    expect(buildProxies(snap).proxies.map((p) => p.hostname).sort()).toEqual(['acme-gw01', 'acme-gw02', 'globex-gw01', 'globex-gw02', 'teleport-main']);
    expect((await lockNode(cli, GW01, lockBodySchema.parse({}))).lockName).toBeTruthy();
    expect((await unlockNode(cli, GW02)).removed).toHaveLength(2);
  });
  it('refuses a read the role does not grant with the cluster text (node: no rule)', async () => {
    const { execFileSync } = await import('node:child_process');
    let stderr = '';
    try {
      execFileSync(FAKE_TCTL_PATH, ['get', 'nodes', '--format=json'], { env: process.env, stdio: 'pipe' });
    } catch (e) {
      stderr = String((e as { stderr: Buffer }).stderr);
    }
    expect(stderr).toBe('\x1b[31mERROR: \x1b[0maccess denied to perform action "list" on "node"\n');
    await expect(getResources(cli, 'nodes')).rejects.toMatchObject({ status: 502, code: 'access_access_denied' });
  });
  it.each([
    ['instance', 'list', () => getInventory],
    ['instance', 'read', () => getInventory],
    ['windows_desktop', 'list', () => readSnapshot],
    ['windows_desktop_service', 'read', () => readSnapshot],
    ['lock', 'list', () => readSnapshot],
  ] as const)('a role without %s %s fails the proxy list with 502 access_access_denied', async (resource, verb, fn) => {
    setFakeTctlControl(dir, { roles: [without(resource, verb)] });
    await expect((fn() as (c: ClusterCli) => Promise<unknown>)(cli)).rejects.toMatchObject({ status: 502, code: 'access_access_denied' });
  });
  it.each(['create', 'update'])('a role without lock %s cannot lock: 502 lock_failed, no lock written', async (verb) => {
    setFakeTctlControl(dir, { roles: [without('lock', verb)] });
    const before = fs.readFileSync(path.join(dir, 'locks.json'), 'utf8');
    await expect(lockNode(cli, GW01, lockBodySchema.parse({}))).rejects.toMatchObject({ status: 502, code: 'lock_failed' });
    expect(fs.readFileSync(path.join(dir, 'locks.json'), 'utf8')).toBe(before);
  });
  it('a role without lock delete cannot unlock, and the locks stay', async () => {
    setFakeTctlControl(dir, { roles: [without('lock', 'delete')] });
    await expect(unlockNode(cli, GW02)).rejects.toMatchObject({ code: 'access_access_denied' });
    expect((await run(['get', 'locks', '--format=json'])).out).toContain('acme-gw02-decommission');
  });
  it('filters desktops by windows_desktop_labels: without the selector none is visible', async () => {
    const role = identityRole();
    delete role.spec.allow.windows_desktop_labels;
    setFakeTctlControl(dir, { roles: [role] });
    expect(await getResources(cli, 'windows_desktop')).toEqual([]);
    role.spec.allow.windows_desktop_labels = { client_code: 'globex' };
    setFakeTctlControl(dir, { roles: [role] });
    expect((await getResources(cli, 'windows_desktop')).map((d: any) => d.metadata.name)).toEqual(['globex-ws01']);
  });
  it('lets a deny rule win over an allow rule, and a wildcard rule grant', async () => {
    setFakeTctlControl(dir, { roles: [{ ...identityRole(), spec: { allow: { rules: [{ resources: ['*'], verbs: ['*'] }] }, deny: { rules: [{ resources: ['lock'], verbs: ['list'] }] } } }] });
    expect((await run(['get', 'nodes', '--format=json'])).ok).toBe(true);
    await expect(getResources(cli, 'locks')).rejects.toMatchObject({ code: 'access_access_denied' });
  });
  it('reads the roles from FAKE_TCTL_ROLE when set (several documents); nodes are filtered by node_labels', async () => {
    const file = path.join(dir, 'roles.yaml');
    const extra = (labels: string) => `---\nkind: role\nversion: v7\nmetadata: { name: extra }\nspec: { allow: { ${labels}rules: [{ resources: [node], verbs: [list, read] }] }, deny: {} }\n`;
    process.env.FAKE_TCTL_ROLE = file;
    fs.writeFileSync(file, identityRoleYaml() + extra(''));
    await expect(getResources(cli, 'nodes')).resolves.toEqual([]); // the read is granted, no node is selected
    fs.writeFileSync(file, identityRoleYaml() + extra(`node_labels: { '*': '*' }, `));
    await expect(getResources(cli, 'nodes')).resolves.toHaveLength(4);
  });
  it('with the shipped role, the auto-update view answers warnings, not an error', async () => {
    const a = await readAutoUpdate(cli, () => true);
    expect(a.warnings).toEqual([
      { code: 'access_denied', resource: 'autoupdate_agent_rollout' },
      { code: 'access_denied', resource: 'autoupdate_config' },
      { code: 'access_denied', resource: 'autoupdate_version' },
    ]);
    expect(a).toMatchObject({ mode: null, targetVersion: null, rollout: null });
  });
  it('the shipped file is the one the fake reads by default', () => {
    expect(fs.readFileSync(path.join(ROOT, 'local/fleet/tctl'), 'utf8')).toContain("'../../lib/fleet/identity-role.yaml'");
    expect(IDENTITY_ROLE_FILE).toBe(path.join(ROOT, 'lib/fleet/identity-role.yaml'));
  });
});
