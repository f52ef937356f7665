import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AuditChain } from '../../../lib/audit';
import type { Store } from '../../../lib/store';
import { makeAccess } from '../../../lib/fleet/access';
import { listActiveAlerts } from '../../../lib/fleet/alerts/store';
import { createConsole, type ConsoleRecord } from '../../../lib/fleet/consoles';
import { identityFacts } from '../../../lib/fleet/poll/facts';
import { runPollInvocation, type RoundDeps } from '../../../lib/fleet/poll/round';
import { removeConsole } from '../../../lib/fleet/register';
import type { FleetRuntime } from '../../../lib/fleet/runtime';
import { generateUpgradePack, upgradesView, withDrift } from '../../../lib/fleet/upgrades';
import { listAllPlans, putPlan } from '../../../lib/fleet/upgrades/plans';
import { writeUpgradeSettings } from '../../../lib/fleet/upgrades/settings';
import { makeTestCa } from '../../support/test-ca';
import { compileAllowedTargets } from '../../../lib/outbound/https';
import { scratchStore, stack } from './support';

// The plan state table through real polling rounds: HTTPS consoles on loopback reporting their
// version, the rounds kept in a store of this file's own, time moved by
// rewriting the plan's dates. Then the fleet plane's identity alerts from a real identity file.

jest.setTimeout(120_000);
const DAY = 86_400_000;
const ca = makeTestCa('upgrade-plans');
const masterKey = randomBytes(32);
const servers: https.Server[] = [];
let store: Store;
let rt: FleetRuntime;
const admin = makeAccess({ username: 'msp-admin', method: 'access', admin: true, roles: ['fleet-admin'] }, { all: true });
const by = { actor: { id: 'msp-admin', name: 'msp-admin', provider: 'access' }, correlationId: 'corr-upgrade-plans' };

interface FakeConsole {
  url: string;
  version: string;
  down: boolean;
}
async function fakeConsole(version: string): Promise<FakeConsole> {
  const cert = ca.issue('console');
  const fc: FakeConsole = { url: '', version, down: false };
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
    if (fc.down) return res.writeHead(503).end('{}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ instance: { version: fc.version }, health: { status: 'healthy' }, audit: { chain: 'ok', failedLogins24h: 0 }, directory: { dcs: [] } }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fc.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fc;
}

// the outbound allow-list admits the loopback lab (127.0.0.1), as FLEET_OUTBOUND_ALLOWED_TARGETS does in the stack
const deps = (facts?: RoundDeps['facts']): RoundDeps => ({ store, masterKey: async () => masterKey, concurrency: 4, trust: { extraCaPem: ca.caPem, allow: compileAllowedTargets('127.0.0.1/32') }, intervalMs: 0, ...(facts ? { facts } : {}) });
const round = (facts?: RoundDeps['facts']) => runPollInvocation(deps(facts), { deadline: Date.now() + 60_000 });
const upgradeAlerts = async () => (await listActiveAlerts(store)).filter((a) => a.kind === 'console_upgrade_overdue').map((a) => a.key).sort();
const plan = async (id: string) => (await listAllPlans(store)).find((p) => p.consoleId === id);
/** move a plan's dates back in time (the rounds read the real clock) */
async function age(id: string, field: 'plannedAt' | 'upgradedAt', ms: number) {
  const p = (await plan(id))!;
  await putPlan(store, { ...p, [field]: new Date(Date.now() - ms).toISOString() });
}

let c1: FakeConsole, c2: FakeConsole, c3: FakeConsole;
let r1: ConsoleRecord, r2: ConsoleRecord, r3: ConsoleRecord;

beforeAll(async () => {
  store = await scratchStore('hdc-fleet-upgrades');
  rt = { store, audit: new AuditChain(store, 'fleet') } as unknown as FleetRuntime;
  [c1, c2, c3] = await Promise.all([fakeConsole('1.3.0'), fakeConsole('1.3.2'), fakeConsole('1.4.0')]);
  const reg = (fc: FakeConsole, clientCode: string) => createConsole(store, masterKey, { clientCode, url: fc.url, token: `tok-${randomBytes(12).toString('hex')}` });
  [r1, r2, r3] = [await reg(c1, 'acme'), await reg(c2, 'acme'), await reg(c3, 'globex')];
  await writeUpgradeSettings(store, { targetTag: '1.4.0', repository: null, alertAfterDays: 7 });
});
afterAll(async () => {
  for (const s of servers) s.closeAllConnections?.();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

describe('the plan state table through polling rounds', () => {
  it('none → pending: the pack plans the consoles behind (audited once), the one at the target is left out', async () => {
    expect((await round()).outcome).toBe('completed');
    const drift = await withDrift(store, [r1, r2, r3]);
    expect(drift.map((c) => [c.version, c.drift])).toEqual([['1.3.0', 'behind'], ['1.3.2', 'behind'], ['1.4.0', 'up_to_date']]);
    const pack = await generateUpgradePack(rt, admin, { allBehind: true, format: 'json' }, by);
    expect(pack.clients.map((c) => c.code)).toEqual(['acme']);
    expect(pack.clients[0].consoles.map((x) => x.id).sort()).toEqual([r1.id, r2.id].sort());
    const { headSeq } = await rt.audit.extent();
    const rows = await Promise.all([headSeq - 1, headSeq].map((seq) => rt.audit.row(seq)));
    expect(rows.map((r) => [r!.event, r!.client, r!.details!.id, r!.details!.from, r!.details!.to]).sort()).toEqual(
      [['upgrade.planned', 'acme', r1.id, '1.3.0', '1.4.0'], ['upgrade.planned', 'acme', r2.id, '1.3.2', '1.4.0']].sort(),
    );
    expect((await upgradesView(rt, admin)).progress).toEqual({ planned: 2, upgraded: 0, pending: 2, overdue: 0 });
  });
  it('pending stays pending up to the delay: no alert', async () => {
    await age(r1.id, 'plannedAt', 7 * DAY - 60_000);
    await round();
    expect(await upgradeAlerts()).toEqual([]);
    expect((await upgradesView(rt, admin)).plans.find((p) => p.consoleId === r1.id)!.state).toBe('pending');
  });
  it('pending → overdue past the delay: alert console_upgrade_overdue fired once', async () => {
    await age(r1.id, 'plannedAt', 7 * DAY + 60_000);
    await round();
    expect(await upgradeAlerts()).toEqual([`console:${r1.id}:upgrade`]);
    const v = await upgradesView(rt, admin);
    expect(v.plans.find((p) => p.consoleId === r1.id)).toMatchObject({ state: 'overdue', from: '1.3.0', to: '1.4.0', currentVersion: '1.3.0' });
    expect(v.progress).toEqual({ planned: 2, upgraded: 0, pending: 1, overdue: 1 });
    const firedAt = (await listActiveAlerts(store)).find((a) => a.kind === 'console_upgrade_overdue')!.firedAt;
    const again = await round();
    expect(again.transitions).toBe(0); // still holds: no new transition, nothing notified
    expect((await listActiveAlerts(store)).find((a) => a.kind === 'console_upgrade_overdue')!.firedAt).toBe(firedAt);
  });
  it('regenerating the pack does not restart the delay', async () => {
    const before = (await plan(r1.id))!.plannedAt;
    const pack = await generateUpgradePack(rt, admin, { consoleIds: [r1.id], format: 'json' }, by);
    expect(pack.clients[0].consoles[0].newlyPlanned).toBe(false);
    expect((await plan(r1.id))!.plannedAt).toBe(before);
    await round();
    expect(await upgradeAlerts()).toEqual([`console:${r1.id}:upgrade`]);
  });
  it('a console that stops answering keeps its alert and its version (no decision without data)', async () => {
    c1.down = true;
    await round();
    expect(await upgradeAlerts()).toEqual([`console:${r1.id}:upgrade`]);
    expect((await withDrift(store, [r1]))[0]).toMatchObject({ version: '1.3.0', drift: 'behind' });
    c1.version = '1.4.0'; // upgraded while unreachable: not seen yet
    await round();
    expect((await plan(r1.id))!.upgradedAt).toBeUndefined();
  });
  it('overdue → upgraded when the console reports the target: plan closed, alert resolved', async () => {
    c1.down = false;
    await round();
    expect(await plan(r1.id)).toMatchObject({ reachedVersion: '1.4.0', upgradedAt: expect.any(String) });
    expect(await upgradeAlerts()).toEqual([]);
    expect((await upgradesView(rt, admin)).progress).toEqual({ planned: 2, upgraded: 1, pending: 1, overdue: 0 });
  });
  it('pending → upgraded with a version above the target (a pre-release of it is not enough)', async () => {
    c2.version = '1.4.0-rc.1';
    await round();
    expect((await plan(r2.id))!.upgradedAt).toBeUndefined();
    c2.version = 'v1.4.1+b7';
    await round();
    expect(await plan(r2.id)).toMatchObject({ reachedVersion: 'v1.4.1+b7' });
  });
  it('closed plans are kept 30 days, then forgotten by the round', async () => {
    await age(r1.id, 'upgradedAt', 30 * DAY - 60_000);
    await round();
    expect(await plan(r1.id)).toBeDefined();
    await age(r1.id, 'upgradedAt', 30 * DAY + 60_000);
    expect((await upgradesView(rt, admin)).plans.map((p) => p.consoleId)).not.toContain(r1.id); // hidden at once
    await round();
    expect(await plan(r1.id)).toBeUndefined();
  });
  it('any → forgotten when the console is removed; its alert resolves', async () => {
    c3.version = '1.3.0';
    await round();
    await generateUpgradePack(rt, admin, { consoleIds: [r3.id], format: 'json' }, by);
    await age(r3.id, 'plannedAt', 8 * DAY);
    await round();
    expect(await upgradeAlerts()).toEqual([`console:${r3.id}:upgrade`]);
    await removeConsole(rt, r3.id, by);
    expect(await plan(r3.id)).toBeUndefined();
    await round();
    expect(await upgradeAlerts()).toEqual([]);
  });
});

describe('identity alerts of the fleet plane', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-identity-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const identityAlerts = async () => (await listActiveAlerts(store)).filter((a) => a.key.startsWith('identity')).map((a) => `${a.kind}:${a.severity}`).sort();
  /** an identity file as tctl auth sign writes it: key, SSH certificate line, TLS certificate */
  function writeIdentity(file: string, enddate: string) {
    const cert = ca.issue(`fleet-${enddate}`, { startdate: stamp(-2 * DAY), enddate });
    fs.writeFileSync(file, `${cert.key}ssh-ed25519-cert-v01@openssh.com AAAAfake fleet\n${cert.cert}`);
  }
  const stamp = (ms: number) => {
    const d = new Date(Date.now() + ms);
    const p = (n: number) => String(n).padStart(2, '0');
    return `${String(d.getUTCFullYear()).slice(2)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  };

  it('identity file (ACCESS_IDENTITY_FILE): warning under 24 h, critical once expired, resolved when replaced', async () => {
    const file = path.join(dir, 'identity');
    const facts = async () => ({ identity: identityFacts({ ACCESS_IDENTITY_FILE: file, ACCESS_MACHINE_ID_IDENTITY: undefined }) });
    writeIdentity(file, stamp(30 * DAY));
    await round(facts);
    expect(await identityAlerts()).toEqual([]);
    writeIdentity(file, stamp(12 * 3600_000));
    await round(facts);
    expect(await identityAlerts()).toEqual(['identity_expiring:warning']);
    writeIdentity(file, stamp(-60_000));
    await round(facts);
    expect(await identityAlerts()).toEqual(['identity_expiring:critical']);
    writeIdentity(file, stamp(30 * DAY));
    await round(facts);
    expect(await identityAlerts()).toEqual([]);
  });
  it('Machine ID (ACCESS_MACHINE_ID_IDENTITY): not renewed within 40 minutes or missing; expiring only once expired', async () => {
    const file = path.join(dir, 'bot-identity');
    const facts = async () => ({ identity: identityFacts({ ACCESS_IDENTITY_FILE: undefined, ACCESS_MACHINE_ID_IDENTITY: file }) });
    writeIdentity(file, stamp(30 * 60_000)); // 1 h certificates: 30 minutes left is normal
    await round(facts);
    expect(await identityAlerts()).toEqual([]);
    const old = new Date(Date.now() - 41 * 60_000);
    fs.utimesSync(file, old, old);
    await round(facts);
    expect(await identityAlerts()).toEqual(['identity_not_renewed:warning']);
    writeIdentity(file, stamp(-60_000)); // rewritten (renewal seen) but expired
    await round(facts);
    expect(await identityAlerts()).toEqual(['identity_expiring:critical']);
    fs.rmSync(file);
    await round(facts);
    expect((await identityAlerts()).sort()).toEqual(['identity_expiring:critical', 'identity_not_renewed:warning']); // missing: no expiry read, no decision on it
    writeIdentity(file, stamp(50 * 60_000));
    await round(facts);
    expect(await identityAlerts()).toEqual([]);
  });
});
