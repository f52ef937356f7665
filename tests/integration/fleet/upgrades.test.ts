import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deleteRecord, queryRecords } from '../../../lib/store/records';
import { writePollState, type ConsolePollState } from '../../../lib/fleet/poll/state';
import { adminAuth, auditRowOf, auditRows, auditRowsOf, call, personaHeaders, fleetStore, stack } from './support';

// Console upgrades through the real HTTP stack: settings (refusals: code, no audit row, nothing
// changed), drift badges on the console answers, packs (json and zip; scope, levels, 409s, the
// plan made once and audited once under its client), and GET /api/upgrades per scope. The poll
// round's transitions of the plans are in upgrade-plans.test.ts.

jest.setTimeout(120_000);
const store = fleetStore();
const tag = Date.now().toString(36);
const created: string[] = [];
let saved: any;

/** The last successful poll of a console, as the poll writes it (the consoles here do not exist). */
async function reported(id: string, version: string, ok = true) {
  const now = new Date().toISOString();
  const st: ConsolePollState = {
    consoleId: id,
    roundId: `test-${tag}`,
    polledAt: now,
    ok,
    ms: 3,
    consecutiveFailures: ok ? 0 : 1,
    lastSuccessAt: now,
    status: { instance: { version }, health: { status: 'healthy' }, audit: { chain: 'ok' }, directory: { dcs: [] } },
    ...(ok ? {} : { error: 'connect_error' }),
  };
  await writePollState(store, st);
}
async function addConsole(clientCode: string, host: string): Promise<string> {
  const r = await call('POST', '/api/consoles', { ...(await adminAuth()), body: { clientCode, url: `https://${host}-${tag}.upgrades.invalid:8443`, token: `upgrade-test-token-${tag}-0123456789` } });
  expect(r.status).toBe(201);
  created.push(r.body.id);
  return r.body.id;
}
const settings = async (body: unknown, who: Record<string, string | undefined> | undefined = undefined) => call('PUT', '/api/upgrades/settings', { ...(who ?? (await adminAuth())), body });
const view = async (persona: 'admin' | 'operator' | 'viewer' | 'outsider') => (await call('GET', '/api/upgrades', await personaHeaders(persona))).body;
const pack = async (body: unknown, persona: 'admin' | 'operator' | 'viewer' | 'outsider' = 'admin') => call('POST', '/api/upgrades/pack', { ...(await personaHeaders(persona)), body });
const planOf = async (id: string) => (await view('admin')).plans.find((p: any) => p.consoleId === id);

let A1: string; // acme, 1.3.0: behind
let A2: string; // acme, 1.4.0: up to date
let A3: string; // acme, never polled: unknown
let G1: string; // globex, 1.2.0: behind

beforeAll(async () => {
  saved = (await view('admin')).settings;
  A1 = await addConsole('acme', 'a1');
  A2 = await addConsole('acme', 'a2');
  A3 = await addConsole('acme', 'a3');
  G1 = await addConsole('globex', 'g1');
  await reported(A1, '1.3.0');
  await reported(A2, 'v1.4.0+build.7');
  await reported(G1, '1.2.0');
});
afterAll(async () => {
  const admin = await adminAuth();
  for (const id of created) await call('DELETE', `/api/consoles/${id}`, admin);
  // every other console's plan this file made (the seeded acme console, when behind)
  for (const r of await queryRecords<any>(store, 'UPGRADEPLAN')) if (r.data.plannedBy === 'msp-admin' || r.data.plannedBy === 'tech-alice') await deleteRecord(store, 'UPGRADEPLAN', r.sk);
  if (saved) await settings({ targetTag: saved.targetTag ?? '', repository: saved.repository, alertAfterDays: saved.alertAfterDays });
});

describe('upgrade settings', () => {
  it.each([
    ['latest', { targetTag: 'latest' }],
    ['whitespace', { targetTag: '1.4.0 ' }],
    ['a shell character', { targetTag: '1.4.0;reboot' }],
    ['a command substitution', { targetTag: '$(id)' }],
    ['a repository with a tag', { targetTag: '1.4.0', repository: 'registry.example.com/hdc:1.4.0' }],
    ['a delay of 0 days', { targetTag: '1.4.0', alertAfterDays: 0 }],
    ['a delay of 366 days', { targetTag: '1.4.0', alertAfterDays: 366 }],
  ])('refuses %s: 400 validation_failed, no audit row, nothing changed', async (_what, body) => {
    const before = (await view('admin')).settings;
    const r = await settings(body);
    expect([r.status, r.body.code]).toEqual([400, 'validation_failed']);
    expect(await auditRowOf(r.correlationId)).toBeUndefined();
    expect((await view('admin')).settings).toEqual(before);
  });
  it('is for administrators: an operator gets 403 admin_required, audited, nothing changed', async () => {
    const before = (await view('admin')).settings;
    const r = await settings({ targetTag: '9.9.9' }, await personaHeaders('operator'));
    expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required', details: { route: 'PUT /api/upgrades/settings' } });
    expect((await view('admin')).settings).toEqual(before);
  });
  it('stores target, repository and delay (default 7), audited upgrades.settings', async () => {
    const r = await settings({ targetTag: '1.4.0' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ targetTag: '1.4.0', repository: null, alertAfterDays: 7 });
    const s = await settings({ targetTag: '1.4.0', repository: 'registry.example.com/hdc/console', alertAfterDays: 3 });
    expect(await auditRowOf(s.correlationId)).toMatchObject({ event: 'upgrades.settings', outcome: 'success', actor: { name: 'msp-admin' }, details: { targetTag: '1.4.0', repository: 'registry.example.com/hdc/console', alertAfterDays: 3, changed: ['repository', 'alertAfterDays'] } });
    expect(await view('viewer')).toMatchObject({ target: { tag: '1.4.0', repository: 'registry.example.com/hdc/console' }, settings: { alertAfterDays: 3 } });
  });
});

describe('drift badges on the console answers', () => {
  it('Up to date, Behind, Unknown; a console whose last poll failed keeps its last version', async () => {
    await reported(A1, '1.3.0');
    await reported(A2, 'v1.4.0+build.7');
    const list = (await call('GET', '/api/consoles?clientCode=acme', await personaHeaders('operator'))).body.consoles;
    const badge = (id: string) => list.find((c: any) => c.id === id);
    expect(badge(A1)).toMatchObject({ version: '1.3.0', drift: 'behind' });
    expect(badge(A2)).toMatchObject({ version: 'v1.4.0+build.7', drift: 'up_to_date' });
    expect(badge(A3)).toMatchObject({ version: null, drift: 'unknown' });
    await reported(A1, '1.3.0', false);
    expect((await call('GET', `/api/consoles/${A1}`, await personaHeaders('viewer'))).body).toMatchObject({ id: A1, version: '1.3.0', drift: 'behind' });
  });
});

describe('upgrade packs', () => {
  beforeAll(async () => {
    await settings({ targetTag: '1.4.0', repository: 'registry.example.com/hdc/console', alertAfterDays: 3 });
    await reported(A1, '1.3.0');
    await reported(A2, 'v1.4.0+build.7');
    await reported(G1, '1.2.0');
  });

  it('refuses a viewer of the client (403 insufficient_level, audited), plans nothing', async () => {
    const r = await pack({ consoleIds: [A1], format: 'json' }, 'viewer');
    expect([r.status, r.body.code]).toEqual([403, 'insufficient_level']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'insufficient_level', client: 'acme', details: { route: 'POST /api/upgrades/pack', requiredLevel: 'operator', client: 'acme' } });
    expect(await planOf(A1)).toBeUndefined();
  });
  it('answers 404 for a console out of scope or unknown, audited, plans nothing', async () => {
    const r = await pack({ consoleIds: [A1] }, 'outsider');
    expect([r.status, r.body]).toEqual([404, { code: 'not_found' }]);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'out_of_scope', client: 'initech', details: { client: 'acme' } });
    const u = await pack({ consoleIds: ['00000000-0000-4000-8000-00000000abcd'] }, 'operator');
    expect([u.status, u.body]).toEqual([404, { code: 'not_found' }]);
    expect((await pack({ consoleIds: [A1, '00000000-0000-4000-8000-00000000abcd'] }, 'admin')).status).toBe(404);
    // an operator of acme naming a globex console: hidden as well
    expect((await pack({ consoleIds: [A1, G1] }, 'operator')).status).toBe(404);
    expect(await planOf(A1)).toBeUndefined();
    expect(await planOf(G1)).toBeUndefined();
  });
  it('all behind for a technician who operates nothing: 403 insufficient_level', async () => {
    const r = await pack({ allBehind: true }, 'viewer');
    expect([r.status, r.body.code]).toEqual([403, 'insufficient_level']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'insufficient_level' });
  });
  it('409 nothing_to_upgrade for consoles already at the target; no row, no plan', async () => {
    const r = await pack({ consoleIds: [A2] }, 'operator');
    expect([r.status, r.body]).toEqual([409, { code: 'nothing_to_upgrade', upToDate: [A2] }]);
    expect(await auditRowsOf(r.correlationId)).toEqual([]);
    expect(await planOf(A2)).toBeUndefined();
  });
  it('409 target_not_set without a target', async () => {
    await settings({ targetTag: '', repository: 'registry.example.com/hdc/console', alertAfterDays: 3 });
    try {
      const r = await pack({ consoleIds: [A1] }, 'operator');
      expect([r.status, r.body]).toEqual([409, { code: 'target_not_set' }]);
    } finally {
      await settings({ targetTag: '1.4.0', repository: 'registry.example.com/hdc/console', alertAfterDays: 3 });
    }
  });
  it("all behind (operator): only the consoles he may operate that are behind; plans each once, audited under its client", async () => {
    const r = await pack({ allBehind: true, format: 'json' }, 'operator');
    expect(r.status).toBe(200);
    const ids = r.body.clients.flatMap((c: any) => c.consoles.map((x: any) => x.id));
    expect(r.body.clients.map((c: any) => c.code)).toEqual(['acme']);
    expect(ids).toContain(A1);
    expect(ids).not.toContain(A2); // up to date
    expect(ids).not.toContain(A3); // unknown: only named explicitly
    expect(ids).not.toContain(G1); // globex: not his
    const a1 = r.body.clients[0].consoles.find((c: any) => c.id === A1);
    expect(a1).toMatchObject({ from: '1.3.0', to: '1.4.0', drift: 'behind', newlyPlanned: true, commands: ['cd <instance directory>', "./upgrade.sh 'registry.example.com/hdc/console:1.4.0'"] });
    expect(r.body.target).toEqual({ tag: '1.4.0', repository: 'registry.example.com/hdc/console', image: 'registry.example.com/hdc/console:1.4.0' });
    const rows = (await auditRowsOf(r.correlationId)).filter((x) => x.event === 'upgrade.planned');
    expect(rows.find((x) => x.target.id === A1)).toMatchObject({ client: 'acme', actor: { name: 'tech-alice' }, details: { id: A1, from: '1.3.0', to: '1.4.0' } });
    expect(rows.every((x) => x.client === 'acme')).toBe(true);
    expect(await planOf(A1)).toMatchObject({ state: 'pending', from: '1.3.0', to: '1.4.0', clientCode: 'acme' });
  });
  it('regenerating neither records again nor restarts the delay', async () => {
    const first = await planOf(A1);
    const r = await pack({ consoleIds: [A1] }, 'operator');
    expect(r.status).toBe(200);
    expect(r.body.clients[0].consoles[0]).toMatchObject({ id: A1, newlyPlanned: false, plannedAt: first.plannedAt });
    expect((await auditRowsOf(r.correlationId)).filter((x) => x.event === 'upgrade.planned')).toEqual([]);
    expect((await planOf(A1)).plannedAt).toBe(first.plannedAt);
  });
  it('names an Unknown console explicitly: included and planned', async () => {
    const r = await pack({ consoleIds: [A3, A2] }, 'operator');
    expect(r.status).toBe(200);
    expect(r.body.leftOut).toEqual([{ id: A2, reason: 'up_to_date' }]);
    expect(r.body.clients[0].consoles.map((c: any) => [c.id, c.drift, c.from])).toEqual([[A3, 'unknown', null]]);
  });
  it('zip (administrator): one folder per client with README.md, upgrade-<host>.sh, upgrade.sh and the scripts it needs', async () => {
    const r = await call('POST', '/api/upgrades/pack', { ...(await adminAuth()), body: { consoleIds: [A1, G1], format: 'zip' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/zip');
    expect(r.headers['content-disposition']).toBe('attachment; filename="console-upgrade-1.4.0.zip"');
    // the raw bytes (support's call decodes as text: fetch again as a buffer)
    const buf = await rawPost('/api/upgrades/pack', { consoleIds: [A1, G1], format: 'zip' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'upgrade-pack-'));
    fs.writeFileSync(path.join(dir, 'pack.zip'), buf);
    const listing = execFileSync('unzip', ['-Z1', path.join(dir, 'pack.zip')], { encoding: 'utf8' }).trim().split('\n').sort();
    const scripts = (c: string) => ['backup.sh', 'common.sh', 'install.sh', 'renew-tls.sh', 'restore.sh', 'upgrade.sh'].map((f) => `${c}/${f}`);
    expect(listing).toEqual(['acme/', 'acme/README.md', `acme/upgrade-a1-${tag}.upgrades.invalid-8443.sh`, ...scripts('acme'), 'globex/', 'globex/README.md', `globex/upgrade-g1-${tag}.upgrades.invalid-8443.sh`, ...scripts('globex')].sort());
    execFileSync('unzip', ['-q', path.join(dir, 'pack.zip'), '-d', dir]);
    expect(fs.readFileSync(path.join(dir, 'globex', `upgrade-g1-${tag}.upgrades.invalid-8443.sh`), 'utf8')).toContain("exec ./upgrade.sh 'registry.example.com/hdc/console:1.4.0'");
    expect(fs.statSync(path.join(dir, 'acme', 'upgrade.sh')).mode & 0o111).toBe(0o111);
    fs.rmSync(dir, { recursive: true, force: true });
    // G1 was planned by the first of the two calls only, under globex
    const rows = (await auditRowsOf(r.correlationId)).filter((x) => x.event === 'upgrade.planned');
    expect(rows.map((x) => [x.client, x.details.id])).toEqual([['globex', G1]]);
  });
});

describe('GET /api/upgrades per scope', () => {
  it('administrators see every plan and the progress counters', async () => {
    const v = await view('admin');
    const mine = v.plans.filter((p: any) => [A1, A3, G1].includes(p.consoleId));
    expect(mine.map((p: any) => p.state)).toEqual(['pending', 'pending', 'pending']);
    expect(v.progress.planned).toBe(v.plans.length);
    expect(v.progress.planned).toBe(v.progress.pending + v.progress.overdue + v.progress.upgraded);
  });
  it("technicians see only their clients' plans", async () => {
    const alice = await view('operator');
    expect(new Set(alice.plans.map((p: any) => p.clientCode))).toEqual(new Set(['acme']));
    expect(alice.plans.map((p: any) => p.consoleId)).not.toContain(G1);
    const bob = await view('viewer');
    expect(bob.plans.map((p: any) => p.consoleId)).toEqual(expect.arrayContaining([A1, G1]));
    const carol = await view('outsider');
    expect(carol.plans).toEqual([]);
    expect(carol.progress).toEqual({ planned: 0, upgraded: 0, pending: 0, overdue: 0 });
    expect(JSON.stringify(carol)).not.toContain('acme');
  });
  it('removing a console forgets its plan at once', async () => {
    const r = await call('DELETE', `/api/consoles/${A3}`, await adminAuth());
    expect(r.status).toBe(204);
    expect(await planOf(A3)).toBeUndefined();
    expect((await queryRecords<any>(store, 'UPGRADEPLAN')).map((x) => x.sk)).not.toContain(A3);
  });
});

async function rawPost(p: string, body: unknown): Promise<Buffer> {
  const http = await import('node:http');
  const url = new URL(p, stack.fleetUrl);
  const payload = JSON.stringify(body);
  const auth = await adminAuth();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'teleport-jwt-assertion': auth.assertion! } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

it('keeps the audit chain verifiable', async () => {
  expect((await call('GET', '/api/audit/verify', await adminAuth())).body).toMatchObject({ ok: true });
  expect((await auditRows(5)).length).toBeGreaterThan(0);
});
