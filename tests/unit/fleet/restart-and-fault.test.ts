import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Tctl } from '../../../lib/fleet/cluster-cli';
import { createConsole } from '../../../lib/fleet/consoles';
import { readRoundFacts } from '../../../lib/fleet/poll/facts';
import { runPollInvocation, type RoundDeps } from '../../../lib/fleet/poll/round';
import { listAllPlans, putPlan } from '../../../lib/fleet/upgrades/plans';
import { logger } from '../../../lib/log';
import { compileAllowedTargets } from '../../../lib/outbound/https';
import type { Store } from '../../../lib/store';
import { fakeTctlEnv, resetFakeTctl } from '../../../local/fleet/fake-tctl';
import { memoryDynamoStore, observe } from '../../support/memory-store';
import { makeTestCa } from '../../support/test-ca';
import { fleetInProcess } from './in-process';

// Issue 31, "Tests for rules that only a restart or a fault shows", the fleet's: each rule is
// seen here with the configuration a restart would bring (the fleet plane in process with that
// environment) or with the fault made on purpose (a store that cannot be read, a console that
// stops answering, a TLS front with a short-lived certificate), where the shared stack cannot.

jest.setTimeout(60_000);
const DAY = 86_400_000;
const saved = { ...process.env };
beforeAll(() => {
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true); // the audit stream
});
afterAll(() => {
  process.env = { ...saved };
  jest.restoreAllMocks();
});

async function register(f: Awaited<ReturnType<typeof fleetInProcess>>, ...codes: string[]) {
  for (const code of codes) expect((await f.call('POST', '/api/clients', f.admin, { code, name: code })).status).toBe(201);
}

describe('the scope when the store cannot be read', () => {
  it('gives no client (fail closed), and the scope comes back when the store does', async () => {
    let broken = false;
    const store = observe(memoryDynamoStore('fleet-scope-fault'), (op) => {
      if (broken && (op === 'query' || op === 'get' || op === 'batchGet' || op === 'scan')) throw new Error('store unreachable');
    });
    const f = await fleetInProcess({ store });
    await register(f, 'acme', 'globex');
    expect((await f.call('PUT', '/api/technicians', f.admin, { username: 'tech-alice', clients: [{ code: 'acme', level: 'operator' }] })).status).toBe(201);
    // an assignment and a convention role: two sources, neither may survive an unreadable register
    const alice = await f.platform('tech-alice', ['fleet-technician', 'fleet-client-globex']);
    const scope = async () => (await f.call('GET', '/api/auth/me', alice)).body.scope;
    expect(await scope()).toEqual({ all: false, clients: [{ code: 'acme', level: 'operator', sources: ['assignment'] }, { code: 'globex', level: 'viewer', sources: ['role'] }] });
    broken = true;
    const r = await f.call('GET', '/api/auth/me', alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ username: 'tech-alice', admin: false, scope: { all: false, clients: [] } });
    broken = false;
    expect((await scope()).clients.map((c: { code: string }) => c.code)).toEqual(['acme', 'globex']);
  });
});

describe('the convention roles by configuration', () => {
  const roleOnly = ['fleet-client-acme'];
  it('ACCESS_JWT_CLIENT_ROLE_LEVEL=operator: a fleet-client-<code> role alone gives operator on that client', async () => {
    const f = await fleetInProcess({ env: { ACCESS_JWT_CLIENT_ROLE_LEVEL: 'operator' } });
    await register(f, 'acme');
    const tech = await f.platform('tech-dan', roleOnly);
    expect((await f.call('GET', '/api/auth/me', tech)).body.scope).toEqual({ all: false, clients: [{ code: 'acme', level: 'operator', sources: ['role'] }] });
    const edit = await f.call('PUT', '/api/clients/acme', tech, { notes: 'edited by the role' });
    expect(edit.status).toBe(200);
    // and an administrator route stays refused: the convention never makes an administrator
    expect((await f.call('GET', '/api/technicians', tech)).body.code).toBe('admin_required');
  });

  it('the default (viewer): the same role reads the client and may not act on it', async () => {
    const f = await fleetInProcess();
    await register(f, 'acme');
    const tech = await f.platform('tech-dan', roleOnly);
    expect((await f.call('GET', '/api/auth/me', tech)).body.scope).toEqual({ all: false, clients: [{ code: 'acme', level: 'viewer', sources: ['role'] }] });
    const edit = await f.call('PUT', '/api/clients/acme', tech, { notes: 'edited by the role' });
    expect([edit.status, edit.body.code]).toEqual([403, 'insufficient_level']);
    expect((await f.call('GET', '/api/clients/acme', f.admin)).body.notes).toBe('');
  });

  it('ACCESS_JWT_CLIENT_ROLES=false: such a role alone no longer signs in, and beside an allowed role it adds no client', async () => {
    const f = await fleetInProcess({ env: { ACCESS_JWT_CLIENT_ROLES: 'false' } });
    await register(f, 'acme', 'globex');
    const alone = await f.call('GET', '/api/auth/me', await f.platform('tech-dan', roleOnly));
    expect([alone.status, alone.body.code]).toEqual([403, 'signin_refused']);
    expect((await f.call('PUT', '/api/technicians', f.admin, { username: 'tech-erin', clients: [{ code: 'globex', level: 'viewer' }] })).status).toBe(201);
    const erin = await f.platform('tech-erin', ['fleet-technician', 'fleet-client-acme']);
    expect((await f.call('GET', '/api/auth/me', erin)).body.scope).toEqual({ all: false, clients: [{ code: 'globex', level: 'viewer', sources: ['assignment'] }] });
    expect((await f.call('GET', '/api/clients/acme', erin)).status).toBe(404);
  });
});

describe("a round's own facts: the access proxy's certificate and the fleet's identity", () => {
  const ca = makeTestCa('restart-and-fault');
  let front: https.Server;
  let dir: string;
  afterAll(async () => {
    front?.closeAllConnections?.();
    await new Promise((r) => (front ? front.close(r) : r(undefined)));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fires access:cert (critical under 3 days) from a TLS front with a short-lived certificate, and identity alerts carry no client', async () => {
    const proxyCert = ca.issue('access-proxy', { days: 2 });
    front = https.createServer({ key: proxyCert.key, cert: proxyCert.cert }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-identity-'));
    const identity = path.join(dir, 'identity');
    fs.writeFileSync(identity, `-----BEGIN PRIVATE KEY-----\nnot read\n-----END PRIVATE KEY-----\n${ca.issue('fleet-identity', { days: 1 }).cert}`);
    const f = await fleetInProcess({
      env: {
        DEFAULT_PROXY_ADDR: `127.0.0.1:${(front.address() as AddressInfo).port}`,
        ACCESS_IDENTITY_FILE: identity,
        ACCESS_AUTH_SERVER: 'teleport.msp.example:443',
        FLEET_OUTBOUND_ALLOWED_TARGETS: '127.0.0.1/32',
      },
    });
    await register(f, 'acme');
    // a round with the facts the scheduled poll reads (readRoundFacts: one handshake with
    // DEFAULT_PROXY_ADDR, the identity file), the test CA trusted as NODE_EXTRA_CA_CERTS would be
    // at process start; the cluster is unreadable here: no proxy decision
    const trust = { extraCaPem: ca.caPem, allow: compileAllowedTargets('127.0.0.1/32') };
    const report = await runPollInvocation({ store: f.store, masterKey: f.rt.masterKey, concurrency: 2, trust, intervalMs: 0, facts: () => readRoundFacts(f.rt.cli, f.rt.config, trust) }, { deadline: Date.now() + 30_000 });
    expect(report.outcome).toBe('completed');
    const admin = (await f.call('GET', '/api/alerts', f.admin)).body.active;
    const cert = admin.find((a: any) => a.key === 'access:cert');
    expect(cert).toMatchObject({ kind: 'certificate_expiring', severity: 'critical', params: { subject: expect.stringContaining('access-proxy') } });
    const id = admin.find((a: any) => a.key === 'identity');
    expect(id).toMatchObject({ kind: 'identity_expiring', severity: 'warning' });
    for (const a of [cert, id]) expect(a).not.toHaveProperty('clientCode');
    // an alert without a client is for administrators: a technician of every client sees neither
    const tech = await f.platform('tech-alice', ['fleet-technician', 'fleet-client-acme']);
    expect((await f.call('GET', '/api/alerts', tech)).body.active.map((a: any) => a.key)).toEqual([]);
  });
});

describe('an upgrade plan while its console is unreachable', () => {
  const ca = makeTestCa('overdue-unreachable');
  let server: https.Server;
  afterAll(async () => {
    server?.closeAllConnections?.();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  });

  it('goes overdue on the clock (plan and progress), and its alert fires only once the console answers again', async () => {
    const state = { down: false, version: '1.3.0' };
    const cert = ca.issue('console');
    server = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
      if (state.down) return res.writeHead(503).end('{}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ instance: { version: state.version }, health: { status: 'healthy' }, audit: { chain: 'ok', failedLogins24h: 0 }, directory: { dcs: [] } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const f = await fleetInProcess();
    await register(f, 'acme');
    const store: Store = f.store;
    const c = await createConsole(store, await f.rt.masterKey(), { clientCode: 'acme', url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, token: `tok-${randomBytes(12).toString('hex')}` });
    const deps: RoundDeps = { store, masterKey: f.rt.masterKey, concurrency: 2, trust: { extraCaPem: ca.caPem, allow: compileAllowedTargets('127.0.0.1/32') }, intervalMs: 0 };
    const round = () => runPollInvocation(deps, { deadline: Date.now() + 30_000 });
    const alerts = async () => (await f.call('GET', '/api/alerts', f.admin)).body.active.map((a: any) => a.kind).sort();
    const upgrades = async () => (await f.call('GET', '/api/upgrades', f.admin)).body;

    await round();
    expect((await f.call('PUT', '/api/upgrades/settings', f.admin, { targetTag: '1.4.0', alertAfterDays: 7 })).status).toBe(200);
    expect((await f.call('POST', '/api/upgrades/pack', f.admin, { consoleIds: [c.id], format: 'json' })).status).toBe(200);
    state.down = true;
    await round();
    await round(); // two failures in a row: console_down
    expect(await alerts()).toEqual(['console_down']);
    // eight days pass while it does not answer
    const plan = (await listAllPlans(store)).find((p) => p.consoleId === c.id)!;
    await putPlan(store, { ...plan, plannedAt: new Date(Date.now() - 8 * DAY).toISOString() });
    await round();
    const v = await upgrades();
    expect(v.plans.find((p: any) => p.consoleId === c.id)).toMatchObject({ state: 'overdue', from: '1.3.0', to: '1.4.0' });
    expect(v.progress).toMatchObject({ planned: 1, overdue: 1, pending: 0 });
    // the rule is evaluated only while the console answers polls: no alert yet
    expect(await alerts()).toEqual(['console_down']);
    state.down = false;
    await round();
    expect(await alerts()).toEqual(['console_upgrade_overdue']);
  });
});

describe('an agent labelled with an unregistered client code', () => {
  let dir: string;
  afterAll(() => dir && fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

  it('is visible to administrators only, even to a technician whose role names that code', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-unregistered-'));
    resetFakeTctl(dir);
    Object.assign(process.env, fakeTctlEnv(dir, path.join(dir, 'commands.log')));
    const cli = new Tctl({ TCTL_PATH: process.env.TCTL_PATH!, TCTL_TIMEOUT_MS: 10_000, ACCESS_AUTH_SERVER: 'teleport.msp.test:443', ACCESS_IDENTITY_FILE: '/var/lib/fleet/identity', ACCESS_MACHINE_ID_IDENTITY: undefined });
    const f = await fleetInProcess({ cli });
    await register(f, 'acme'); // globex's agents keep their label; globex is not in the register
    const all = (await f.call('GET', '/api/nodes?all=1', f.admin)).body.nodes;
    const globex = all.filter((n: any) => n.clientCode === 'globex');
    expect(globex.length).toBeGreaterThan(0);
    expect(all.some((n: any) => n.clientCode === 'acme')).toBe(true);
    const tech = await f.platform('tech-gina', ['fleet-technician', 'fleet-client-acme', 'fleet-client-globex']);
    const seen = (await f.call('GET', '/api/nodes?all=1', tech)).body;
    expect(seen.nodes.length).toBeGreaterThan(0);
    expect([...new Set(seen.nodes.map((n: any) => n.clientCode))]).toEqual(['acme']);
    expect(seen.summary.total).toBe(seen.nodes.length); // counts describe the rows he can see
    const one = await f.call('GET', `/api/nodes/${globex[0].id}`, tech);
    expect([one.status, one.body.code]).toEqual([404, 'not_found']);
    expect((await f.call('GET', `/api/nodes/${globex[0].id}`, f.admin)).status).toBe(200);
  });
});
