import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tctl } from '../../../lib/fleet/cluster-cli';
import { directoryScript, teleportYaml } from '../../../lib/fleet/deployment-artifacts';
import { deploymentGenerateSchema, deploymentView, newDeployment, requireState, type Deployment } from '../../../lib/fleet/deployments';
import { addJoinToken, findJoinToken, listFleetJoinTokens, revokeJoinToken, tokenHashOf, tokenIdOf } from '../../../lib/fleet/join-tokens';
import { logger } from '../../../lib/log';
import { commandOf, FAKE_TCTL_PATH, fakeTctlEnv, readCommandLog, resetFakeTctl, setFakeTctlControl } from '../../../local/fleet/fake-tctl';

// Join tokens through the fake tctl (real argv, output shapes of COMMANDS.md §4, the identity
// role's token rule enforced), and the deployment record's rules.
let dir: string;
let logFile: string;
let cli: Tctl;
const saved = { ...process.env };

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-tctl-tokens-'));
  logFile = path.join(dir, 'commands.log');
  resetFakeTctl(dir);
  Object.assign(process.env, fakeTctlEnv(dir, logFile));
  cli = new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 5000, ACCESS_AUTH_SERVER: 'teleport.msp.test:443', ACCESS_IDENTITY_FILE: '/var/lib/fleet/identity', ACCESS_MACHINE_ID_IDENTITY: undefined });
});
afterEach(() => {
  process.env = { ...saved };
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});
const commands = () => readCommandLog(logFile).map(commandOf);
const tokensFile = () => JSON.parse(fs.readFileSync(path.join(dir, 'tokens.json'), 'utf8'));
/** the shipped identity role without `delete` on token */
const roleWithout = (verb: string) => {
  const YAML = require('yaml');
  const role = YAML.parse(fs.readFileSync(path.resolve(__dirname, '../../../lib/fleet/identity-role.yaml'), 'utf8'));
  for (const r of role.spec.allow.rules) if (r.resources.includes('token')) r.verbs = r.verbs.filter((v: string) => v !== verb);
  return [role];
};

describe('join tokens through tctl tokens add / ls / rm', () => {
  it('adds a labelled token with the documented command line and answers it once', async () => {
    const t = await addJoinToken(cli, { type: 'windowsdesktop', ttlHours: 4, labels: { client_code: 'acme', 'fleet-deployment': 'd1' } });
    expect(t.token).toMatch(/^[0-9a-f]{32}$/);
    expect(t.roles).toEqual(['WindowsDesktop']);
    expect(Math.abs(Date.parse(t.expires) - (Date.now() + 4 * 3600e3))).toBeLessThan(60e3);
    expect(t.tokenId).toBe(tokenIdOf(tokenHashOf(t.token)));
    expect(commands()).toEqual([['tokens', 'add', '--type=windowsdesktop', '--labels=client_code=acme,fleet-deployment=d1,fleet-managed=true', '--ttl=4h', '--format=json']]);
    const stored = tokensFile().find((x: any) => x.metadata.name === t.token);
    expect(stored).toMatchObject({ kind: 'token', version: 'v2', metadata: { labels: { client_code: 'acme', 'fleet-managed': 'true', 'fleet-deployment': 'd1' } }, spec: { roles: ['WindowsDesktop'], join_method: 'token' } });
  });
  it('lists only fleet-managed tokens, without their values', async () => {
    const t = await addJoinToken(cli, { type: 'node', ttlHours: 1, labels: {} });
    const list = await listFleetJoinTokens(cli);
    expect(list.map((x) => x.tokenId)).toContain(t.tokenId);
    expect(list.some((x) => x.roles.includes('Bot'))).toBe(false); // the bot's token is not the fleet's
    expect(JSON.stringify(list)).not.toContain(t.token);
    expect(await findJoinToken(cli, t.tokenId)).toMatchObject({ roles: ['Node'], clientCode: null });
  });
  it('revokes by id (ls then rm), and a token no longer listed counts as revoked', async () => {
    const t = await addJoinToken(cli, { type: 'windowsdesktop', ttlHours: 1, labels: { client_code: 'acme' } });
    expect(await revokeJoinToken(cli, t.tokenId, 'x')).toEqual({ revoked: true, alreadyGone: false });
    expect(commands().slice(1)).toEqual([['tokens', 'ls', '--format=json'], ['tokens', 'rm', t.token]]);
    expect(tokensFile().some((x: any) => x.metadata.name === t.token)).toBe(false);
    expect(await revokeJoinToken(cli, t.tokenId, 'x')).toEqual({ revoked: true, alreadyGone: true });
  });
  it('without token delete: not revoked, the manual command (secret for administrators only), nothing logged with the secret', async () => {
    const t = await addJoinToken(cli, { type: 'windowsdesktop', ttlHours: 1, labels: { client_code: 'acme' } });
    setFakeTctlControl(dir, { roles: roleWithout('delete') });
    const warn = jest.spyOn(logger, 'warn');
    const r = await revokeJoinToken(cli, t.tokenId, 'fleet-deployment=d1');
    expect(r.revoked).toBe(false);
    if (r.revoked) return;
    expect(r.cause).toBe('access_access_denied');
    expect(r.manualCommand(true)).toBe(`tctl tokens rm ${t.token}`);
    expect(r.manualCommand(false)).not.toContain(t.token);
    expect(r.manualCommand(false)).toContain('fleet-deployment=d1');
    expect(tokensFile().some((x: any) => x.metadata.name === t.token)).toBe(true); // lives until its TTL
    expect(warn).toHaveBeenCalled();
    expect(JSON.stringify(warn.mock.calls)).not.toContain(t.token);
  });
  it('redacts the token from tctl error text it echoes', async () => {
    const warn = jest.spyOn(logger, 'warn');
    await expect(cli.run(['tokens', 'rm', 'feedfacefeedfacefeedfacefeedface'], { redact: ['feedfacefeedfacefeedfacefeedface'] })).rejects.toMatchObject({ code: 'access_unavailable', missing: true });
    expect(JSON.stringify(warn.mock.calls)).toContain('[redacted]');
    expect(JSON.stringify(warn.mock.calls)).not.toContain('feedfacefeedfacefeedfacefeedface');
  });
  it('without token create: access_access_denied, no token', async () => {
    setFakeTctlControl(dir, { roles: roleWithout('create') });
    const before = tokensFile().length;
    await expect(addJoinToken(cli, { type: 'windowsdesktop', ttlHours: 1, labels: {} })).rejects.toMatchObject({ status: 502, code: 'access_access_denied' });
    expect(tokensFile()).toHaveLength(before);
  });
  it('prints tokens add as json.MarshalIndent does: 1-space indent, sorted keys, no trailing newline', () => {
    const { execFileSync } = require('node:child_process');
    const out: string = execFileSync(FAKE_TCTL_PATH, ['tokens', 'add', '--type=windowsdesktop', '--ttl=2h', '--format=json'], { env: process.env, encoding: 'utf8' });
    expect(out.endsWith('}')).toBe(true);
    expect(out.split('\n')[1]).toMatch(/^ "expires": /);
    expect(Object.keys(JSON.parse(out))).toEqual(['expires', 'roles', 'token']);
  });
});

describe('deployment records', () => {
  const input = deploymentGenerateSchema.parse({ clientCode: 'acme', hostname: 'ACME-GW03', domain: 'acme.local' });
  const d: Deployment = newDeployment(input, { tokenHash: 'ab'.repeat(32), tokenId: 'ab'.repeat(12), expires: new Date(Date.now() + 3600e3).toISOString() }, 'msp-admin', '11111111-1111-4111-8111-111111111111');
  it('defaults: lower-case names, LDAPS on the domain, 4 h token, generated', () => {
    expect(d).toMatchObject({ hostname: 'acme-gw03', ldapAddress: 'acme.local:636', state: 'generated', revocation: 'pending' });
    expect(input.ttlHours).toBe(4);
    expect(deploymentView(d)).not.toHaveProperty('tokenHash');
  });
  it.each([
    [{ hostname: 'gw;rm -rf', domain: 'acme.local' }],
    [{ hostname: 'gw', domain: 'nodot' }],
    [{ hostname: 'gw', domain: 'acme.local', ldapAddress: 'dc:99999' }],
    [{ hostname: 'gw', domain: 'acme.local', ttlHours: 73 }],
    [{ hostname: 'gw', domain: 'acme.local', clientCode: 'Acme' }],
  ])('refuses %j', (b) => expect(deploymentGenerateSchema.safeParse({ clientCode: 'acme', ...b }).success).toBe(false));
  it('names what stands in the way of a transition', () => {
    expect(() => requireState(d, ['validated'])).toThrow(expect.objectContaining({ status: 409, code: 'deployment_not_validated' }));
    expect(() => requireState({ ...d, state: 'validated' }, ['finished'])).toThrow(expect.objectContaining({ code: 'deployment_not_finished' }));
    expect(() => requireState({ ...d, state: 'finished' }, ['generated', 'validated'])).toThrow(expect.objectContaining({ code: 'deployment_finished' }));
    expect(() => requireState({ ...d, state: 'completed' }, ['validated', 'finished'])).toThrow(expect.objectContaining({ code: 'deployment_completed' }));
    expect(() => requireState(d, ['generated'])).not.toThrow();
  });
  it('writes teleport.yaml naming the token file and the client label, never a token', () => {
    const y = teleportYaml(d, { proxyAddr: 'teleport.msp.example:443', tokenFile: '/var/lib/teleport/join-token' });
    const parsed = require('yaml').parse(y);
    expect(parsed.teleport).toMatchObject({ nodename: 'acme-gw03', proxy_server: 'teleport.msp.example:443', join_params: { method: 'token', token_name: '/var/lib/teleport/join-token' } });
    expect(parsed.windows_desktop_service).toMatchObject({ enabled: true, ldap: { addr: 'acme.local:636', domain: 'acme.local' }, labels: { client_code: 'acme' } });
  });
  it('quotes values in the directory script', () => {
    const s = directoryScript({ ...d, hostname: "o'brien" });
    expect(s.script).toContain("proxy o''brien'");
    expect(s.serviceAccount).toBe('svc-teleport-acme');
  });
});
