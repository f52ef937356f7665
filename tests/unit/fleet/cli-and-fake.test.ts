import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { classifyCliFailure, ClusterCliError, getInventory, getResources, parseJsonArray, Tctl } from '../../../lib/fleet/cluster-cli';
import { readAutoUpdate } from '../../../lib/fleet/autoupdate';
import { lockBodySchema, lockNode, unlockNode } from '../../../lib/fleet/locks';
import { buildProxies, readSnapshot } from '../../../lib/fleet/nodes';
import { identityRole } from '../../../lib/fleet/identity-role';
import { AUTOUPDATE_READER, commandOf, FAKE_TCTL_PATH, fakeTctlEnv, readCommandLog, resetFakeTctl, setFakeTctlControl } from '../../../local/fleet/fake-tctl';

// The adapter against the fake tctl process (real argv, stdout/stderr, exit codes).
let dir: string;
let logFile: string;
let cli: Tctl;
const saved = { ...process.env };

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-tctl-'));
  logFile = path.join(dir, 'commands.log');
  resetFakeTctl(dir);
  Object.assign(process.env, fakeTctlEnv(dir, logFile));
  cli = new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 5000, ACCESS_AUTH_SERVER: 'teleport.msp.test:443', ACCESS_IDENTITY_FILE: '/var/lib/fleet/identity', ACCESS_MACHINE_ID_IDENTITY: undefined });
});
afterEach(() => {
  process.env = { ...saved };
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const commands = () => readCommandLog(logFile).map(commandOf);

describe('tctl error texts → stable codes', () => {
  it.each([
    ['\x1b[31mERROR: \x1b[0myour credentials have expired, please login using `tsh login`\n', 'access_credentials_expired', false],
    ['ERROR: x509: certificate has expired or is not yet valid: current time 2026 is after 2025', 'access_credentials_expired', false],
    ['\x1b[31mERROR: \x1b[0maccess denied to perform action "create" on "lock"\n', 'access_access_denied', false],
    ["ERROR: access denied to perform action 'list' on node", 'access_access_denied', false],
    ['ERROR: Cannot connect to the auth server. Is the auth server running on "x:443"?\n', 'access_unavailable', false],
    ['\x1b[31mERROR: \x1b[0mautoupdate_config "autoupdate-config" doesn\'t exist\n', 'access_unavailable', true],
    ['', 'access_unavailable', false],
  ])('%j', (stderr, code, missing) => expect(classifyCliFailure(stderr)).toEqual({ code, missing }));
  it('refuses anything but a JSON array', () => {
    for (const out of ['', '<html>', '{}', 'null', '"x"']) expect(() => parseJsonArray(out)).toThrow(ClusterCliError);
    expect(parseJsonArray('[\n]\n')).toEqual([]);
  });
});

describe('reads through the fake tctl', () => {
  it('answers a list past 64 KiB whole through a pipe (5 000 proxies)', async () => {
    const one = JSON.parse(fs.readFileSync(path.join(dir, 'inventory_ls.json'), 'utf8'))[0];
    const many = Array.from({ length: 2000 }, (_, i) => ({ ...one, metadata: { ...one.metadata, name: `${i}-${one.metadata.name}` } }));
    fs.writeFileSync(path.join(dir, 'inventory_ls.json'), JSON.stringify(many));
    const out = await getInventory(cli);
    expect(out).toHaveLength(2000);
  });
  it('runs the documented command lines with the identity flags and parses the real shapes', async () => {
    const snap = await readSnapshot(cli);
    // the CLI's JSON texts: buildProxies parses each list as it folds it in (issue 28)
    expect(parseJsonArray(snap.instances as string)).toHaveLength(5);
    expect(parseJsonArray(snap.desktops as string)).toHaveLength(4);
    const log = readCommandLog(logFile);
    expect(log.every((c) => c.argv[0] === '--auth-server=teleport.msp.test:443' && c.argv[1] === '-i' && c.argv[2] === '/var/lib/fleet/identity')).toBe(true);
    // only what the identity role grants: no node read (it has no node rule nor node_labels)
    expect(commands().map((c) => c.join(' ')).sort()).toEqual([
      'get locks --format=json',
      'get windows_desktop --format=json',
      'get windows_desktop_service --format=json',
      'inventory ls --format=json',
    ]);
    // timestamps follow the clock: the scenario's statuses hold at any date
    const p = new Map(buildProxies(snap).proxies.map((x) => [x.hostname, x.status]));
    expect(Object.fromEntries(p)).toEqual({ 'teleport-main': 'online', 'acme-gw01': 'online', 'acme-gw02': 'locked', 'globex-gw01': 'online', 'globex-gw02': 'unreachable' });
  });
  it('treats stderr with exit code 0 as cluster alerts, not as a failure', async () => {
    setFakeTctlControl(dir, { stderrNotice: 'Cluster alert: upgrade soon' });
    await expect(getInventory(cli)).resolves.toHaveLength(5);
  });
  it.each([
    ['expired', 'access_credentials_expired'],
    ['denied', 'access_access_denied'],
    ['unavailable', 'access_unavailable'],
    ['garbage', 'access_unavailable'],
  ] as const)('maps the %s failure mode to %s (502)', async (error, code) => {
    setFakeTctlControl(dir, { fail: [{ match: '*', error }] });
    await expect(getResources(cli, 'locks')).rejects.toMatchObject({ status: 502, code });
  });
  it('gives up after its timeout with access_unavailable', async () => {
    setFakeTctlControl(dir, { fail: [{ match: '*', error: 'timeout' }] });
    const slow = new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 1000, ACCESS_AUTH_SERVER: undefined, ACCESS_IDENTITY_FILE: undefined, ACCESS_MACHINE_ID_IDENTITY: undefined });
    await expect(getResources(slow, 'locks')).rejects.toMatchObject({ code: 'access_unavailable' });
  });
  it('reports Machine ID without its identity file as expired credentials, without running tctl', async () => {
    const bot = new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 1000, ACCESS_AUTH_SERVER: 'x:443', ACCESS_IDENTITY_FILE: undefined, ACCESS_MACHINE_ID_IDENTITY: path.join(dir, 'missing') });
    await expect(getResources(bot, 'locks')).rejects.toMatchObject({ code: 'access_credentials_expired' });
    expect(commands()).toEqual([]);
  });
  it('shows the real error of the plural desktop kind', async () => {
    await expect(getResources(cli, 'windows_desktops')).rejects.toMatchObject({ code: 'access_unavailable' });
  });
});

describe('locks through the fake tctl', () => {
  const GW02 = '8a1d4e62-7bc3-4f0e-a5d9-0e6b1c37f2a4';
  const GW01 = '3f9c2b7e-5d41-4c8a-9a1e-7b2d6c0f8e13';
  it('locks with tctl lock --server-id --message --ttl and sees the lock', async () => {
    const r = await lockNode(cli, GW01, lockBodySchema.parse({ duration: 4, message: 'Incident INC-1' }));
    expect(r.pending).toBe(false);
    expect(r.lockName).toMatch(/^[0-9a-f-]{36}$/);
    expect(commands()[0]).toEqual(['lock', `--server-id=${GW01}`, '--message=Incident INC-1', '--ttl=4h']);
  });
  it('omits --ttl for a lock without expiry and defaults to 24 h', async () => {
    await lockNode(cli, GW01, lockBodySchema.parse({ duration: 'none' }));
    await lockNode(cli, GW01, lockBodySchema.parse({}));
    const locks = commands().filter((c) => c[0] === 'lock');
    expect(locks[0]).toEqual(['lock', `--server-id=${GW01}`, '--message=Locked by the MSP fleet plane']);
    expect(locks[1].at(-1)).toBe('--ttl=24h');
  });
  it('says pending when the cluster cache does not show the new lock yet', async () => {
    setFakeTctlControl(dir, { lockPending: 1 });
    expect((await lockNode(cli, GW01, lockBodySchema.parse({}))).pending).toBe(true);
  });
  it('maps a denied lock to lock_failed', async () => {
    setFakeTctlControl(dir, { fail: [{ match: 'lock', error: 'denied' }] });
    await expect(lockNode(cli, GW01, lockBodySchema.parse({}))).rejects.toMatchObject({ status: 502, code: 'lock_failed' });
  });
  it('unlock removes every active lock (legacy target.node too), not the expired ones', async () => {
    const r = await unlockNode(cli, GW02);
    expect(r.removed.sort()).toEqual(['7d3e1b5a-9c42-4f08-b6d1-25e8a0c94f17', 'acme-gw02-decommission']);
    expect(commands().filter((c) => c[0] === 'rm').map((c) => c[1]).sort()).toEqual(['lock/7d3e1b5a-9c42-4f08-b6d1-25e8a0c94f17', 'lock/acme-gw02-decommission']);
    expect((await unlockNode(cli, GW01)).removed).toEqual([]); // only its expired lock is left
  });
  it.each([
    [{ duration: 2 }],
    [{ duration: '24' }],
    [{ message: 'x'.repeat(201) }],
    [{ message: 'line\nbreak' }],
  ])('refuses the lock body %j', (body) => expect(lockBodySchema.safeParse(body).success).toBe(false));
  it('accepts every duration of the spec', () => {
    for (const d of [1, 4, 12, 24, 72, 168, 'none']) expect(lockBodySchema.parse({ duration: d }).duration).toBe(d);
    expect(lockBodySchema.parse({ message: 'x'.repeat(200) }).message).toHaveLength(200);
  });
});

describe('auto-update', () => {
  // the spec's identity role grants no autoupdate_* read: these tests add the optional reader role
  beforeEach(() => setFakeTctlControl(dir, { roles: [identityRole(), AUTOUPDATE_READER] }));
  it('reads the three singletons', async () => {
    const a = await readAutoUpdate(cli, () => true);
    expect(a).toMatchObject({ mode: 'enabled', targetVersion: '18.4.2', strategy: 'halt-on-failure', warnings: [] });
    expect(a.rollout!.state).toBe('active');
    expect(a.rollout!.groups.map((g) => [g.name, g.state, g.presentCount])).toEqual([['canary', 'done', 1], ['clients', 'active', 4]]);
  });
  it('reports a missing resource as a warning, not an error', async () => {
    fs.writeFileSync(path.join(dir, 'autoupdate_config.json'), '[]');
    fs.writeFileSync(path.join(dir, 'autoupdate_agent_rollout.json'), '[]');
    const a = await readAutoUpdate(cli, () => true);
    expect(a.warnings).toEqual([{ code: 'resource_missing', resource: 'autoupdate_config' }]);
    expect(a.rollout).toBeNull();
    expect(a.targetVersion).toBe('18.4.2');
  });
  it('still fails on credentials', async () => {
    setFakeTctlControl(dir, { roles: [identityRole(), AUTOUPDATE_READER], fail: [{ match: 'get autoupdate_version', error: 'expired' }] });
    await expect(readAutoUpdate(cli, () => true)).rejects.toMatchObject({ code: 'access_credentials_expired' });
  });
});
