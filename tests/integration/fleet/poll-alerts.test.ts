import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import Ajv from 'ajv';
import { Webhook } from 'standardwebhooks';
import type { Store } from '../../../lib/store';
import { createConsole, deleteConsole, type ConsoleRecord } from '../../../lib/fleet/consoles';
import { createFleetChannel, listFleetChannels } from '../../../lib/fleet/alerts/channels';
import { notifyTransitions } from '../../../lib/fleet/alerts/notify';
import { acknowledgeAlert, createSilence, deleteSilence } from '../../../lib/fleet/alerts/silences';
import { listActiveAlerts, listHistory } from '../../../lib/fleet/alerts/store';
import { runPollInvocation, type RoundDeps } from '../../../lib/fleet/poll/round';
import { readPollStates } from '../../../lib/fleet/poll/state';
import { pollConsole } from '../../../lib/fleet/poll/status';
import { consolePollView } from '../../../lib/fleet/poll/view';
import { deliverToChannel, applyChannelInput } from '../../../lib/channels';
import { compileAllowedTargets } from '../../../lib/outbound/https';
import { makeTestCa } from '../../support/test-ca';
import { ADAPTIVE_CARD_14_SUBSET } from '../../support/adaptive-card-schema';
import { scratchStore, stack } from './support';

// The fleet's poll against real HTTPS consoles on loopback (a test CA made here, trusted the way
// NODE_EXTRA_CA_CERTS is: beside the system store), alert rules firing and resolving through
// rounds kept in DynamoDB Local, and real receivers checking what each channel kind sends. The
// outbound allow-list admits the loopback lab (127.0.0.1), as FLEET_OUTBOUND_ALLOWED_TARGETS does
// in the stack.

jest.setTimeout(120_000);

const ca = makeTestCa('poll');
const wrongCa = makeTestCa('wrong');
const trust = { extraCaPem: ca.caPem, allow: compileAllowedTargets('127.0.0.1/32') };
const masterKey = randomBytes(32);
const channelKey = randomBytes(32);
const policy = { key: channelKey, aad: 'fleet-channel', secretMin: 8, targets: trust };
const H = (s: string) => createHmac('sha256', 'x').update(s).digest('hex');

// ---- consoles: HTTPS servers whose behaviour a test switches
type Mode = 'healthy' | 'http500' | 'redirect' | 'stall' | 'huge';
interface FakeConsole {
  url: string;
  mode: Mode;
  status: any;
  /** this console's hash at a witnessed seq (defaults to H(seq)) */
  hashAt: (seq: number) => string | null;
  hits: number;
  authorizations: string[];
  delayMs: number;
  server: https.Server;
}
const servers: https.Server[] = [];
function healthyStatus(over: Record<string, any> = {}) {
  return {
    instance: { version: '1.2.0' },
    health: { status: 'healthy' },
    audit: { chain: 'ok', failedLogins24h: 0, head: { seq: 5, hash: H('5') }, ...over.audit },
    directory: { dcs: [{ name: 'dc1', url: 'ldaps://dc1.corp.test:636', state: 'up' }, { name: 'dc2', url: 'ldaps://dc2.corp.test:636', state: 'up' }], ...over.directory },
    ...(over.health ? { health: over.health } : {}),
  };
}
async function fakeConsole(cert: { key: string; cert: string }): Promise<FakeConsole> {
  const fc = { mode: 'healthy', status: healthyStatus(), hashAt: (seq: number) => H(String(seq)), hits: 0, authorizations: [], delayMs: 0 } as unknown as FakeConsole;
  fc.server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    fc.hits++;
    fc.authorizations.push(String(req.headers.authorization ?? ''));
    const answer = () => {
      if (fc.mode === 'stall') return; // never answers
      if (fc.mode === 'http500') return res.writeHead(500).end('{}');
      if (fc.mode === 'redirect') return res.writeHead(302, { location: 'https://127.0.0.1:1/elsewhere' }).end();
      if (fc.mode === 'huge') return res.writeHead(200, { 'content-type': 'application/json' }).end(`{"pad":"${'x'.repeat(1024 * 1024)}"}`);
      const witnessSeq = Number(new URL(req.url!, 'https://x').searchParams.get('witnessSeq') ?? NaN);
      const body = { ...fc.status, audit: { ...fc.status.audit, ...(Number.isInteger(witnessSeq) ? { witness: { seq: witnessSeq, hash: fc.hashAt(witnessSeq) } } : {}) } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (fc.delayMs) setTimeout(answer, fc.delayMs);
    else answer();
  });
  servers.push(fc.server);
  await new Promise<void>((r) => fc.server.listen(0, '127.0.0.1', r));
  fc.url = `https://127.0.0.1:${(fc.server.address() as AddressInfo).port}`;
  return fc;
}

// ---- receivers: one HTTPS server, one path per channel kind
interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
const received: Received[] = [];
let receiverUrl = '';
async function startReceiver() {
  const cert = ca.issue('receiver');
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(req.url === '/fail' ? 503 : 200).end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiverUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const take = () => received.splice(0, received.length);

/** What a receiver of the fleet's generic webhook does (spec: Events): recompute, constant time, 5 minutes. */
function verifyFleetWebhook(r: Received, secret: string): boolean {
  const ts = Number(r.headers['x-fleet-timestamp']);
  const sig = String(r.headers['x-fleet-signature'] ?? '');
  if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > 300) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${ts}.${r.body}`).digest('hex')}`);
  return expected.length === Buffer.byteLength(sig) && timingSafeEqual(expected, Buffer.from(sig));
}

// ---- the fleet side
let store: Store;
const WEBHOOK_SECRET = 'fleet-webhook-secret-1';
let deps: RoundDeps;
const newDeps = (): RoundDeps => ({
  store,
  masterKey: async () => masterKey,
  concurrency: 8,
  trust,
  intervalMs: 0,
  notify: (t) => notifyTransitions({ store, policy, publicOrigin: 'https://fleet.msp.test', trust }, t).then(() => undefined),
});
const round = (d = deps) => runPollInvocation(d, { deadline: Date.now() + 60_000 });
const register = (fc: FakeConsole, clientCode = 'acme', extra: { ca?: string } = {}) => createConsole(store, masterKey, { clientCode, url: fc.url, token: `tok-${randomBytes(12).toString('hex')}`, ...extra });
const activeKeys = async () => (await listActiveAlerts(store)).map((a) => `${a.kind}@${a.key.replace(/console:[^:]+:/, '')}`).sort();
const webhookEvents = (rs: Received[]) => rs.filter((r) => r.path.startsWith('/webhook')).flatMap((r) => JSON.parse(r.body).events);

beforeAll(async () => {
  store = await scratchStore('hdc-fleet-poll');
  deps = newDeps();
  await startReceiver();
});
afterAll(async () => {
  for (const s of servers) s.closeAllConnections?.();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

describe('one poll under the outbound rules', () => {
  let c: ConsoleRecord;
  let fc: FakeConsole;
  beforeAll(async () => {
    fc = await fakeConsole(ca.issue('one'));
    c = { id: 'c-one', clientCode: 'acme', url: fc.url, sealedToken: '', createdAt: '', updatedAt: '' };
    c.sealedToken = (await createConsole(store, masterKey, { clientCode: 'acme', url: fc.url, token: 'the-bearer-token-0123' })).sealedToken;
    c = (await readConsoles()).find((x) => x.url === fc.url)!;
    await deleteConsole(store, c.id); // polled directly here, not in the rounds below
  });
  const poll = (over: Partial<Parameters<typeof pollConsole>[1]> = {}) => pollConsole(c, { masterKey, trust, ...over });

  it('healthy: verified TLS, bearer token sent, status parsed, certificate read', async () => {
    const r = await poll();
    expect(r).toMatchObject({ ok: true, status: { health: { status: 'healthy' } } });
    expect(r.cert!.subject).toContain('CN=one');
    expect(fc.authorizations.pop()).toBe('Bearer the-bearer-token-0123');
  });
  it('failing, redirecting, 1 MiB: http_error, redirect_refused (not followed), response_too_large', async () => {
    fc.mode = 'http500';
    expect(await poll()).toMatchObject({ ok: false, error: 'http_error', httpStatus: 500 });
    fc.mode = 'redirect';
    expect(await poll()).toMatchObject({ ok: false, error: 'redirect_refused', httpStatus: 302 });
    fc.mode = 'huge';
    expect(await poll()).toMatchObject({ ok: false, error: 'response_too_large' });
    fc.mode = 'healthy';
  });
  it('stalling past 10 s: timeout at the production value', async () => {
    fc.mode = 'stall';
    const r = await poll();
    expect(r).toMatchObject({ ok: false, error: 'timeout' });
    expect(r.ms).toBeGreaterThanOrEqual(10_000);
    expect(r.ms).toBeLessThan(11_500);
    fc.mode = 'healthy';
  });
  it('untrusted CA, expired certificate, unknown host: refused before the token is sent, one answer (connect_error); an expired certificate still read', async () => {
    const wrong = await fakeConsole(wrongCa.issue('wrong'));
    const expired = await fakeConsole(ca.issue('expired', { startdate: '20200101000000Z', enddate: '20200201000000Z' }));
    const rw = await pollConsole({ ...c, url: wrong.url }, { masterKey, trust });
    expect(rw).toMatchObject({ ok: false, error: 'connect_error' });
    expect(rw.cert).toBeUndefined(); // the certificate of whatever answered is not passed on (issue 25)
    const re = await pollConsole({ ...c, url: expired.url }, { masterKey, trust });
    expect(re).toMatchObject({ ok: false, error: 'connect_error' });
    expect(re).not.toHaveProperty('detail');
    // the trusted CA's certificate for this host, out of date: read for the certificate rule (fleet spec)
    expect(re.cert!.validTo).toBe('2020-02-01T00:00:00.000Z');
    expect(wrong.hits + expired.hits).toBe(0); // no request, so no bearer token, on an unverified connection
    // the console's own CA makes the wrong-CA console trusted
    expect(await pollConsole({ ...c, url: wrong.url, ca: wrongCa.caPem }, { masterKey, trust })).toMatchObject({ ok: true });
    expect(await pollConsole({ ...c, url: 'https://console.invalid' }, { masterKey, trust })).toMatchObject({ ok: false, error: 'connect_error' });
    // a loopback address outside the allow-list: the same answer, nothing reached
    const outside = await pollConsole({ ...c, url: fc.url.replace('127.0.0.1', '127.0.0.2') }, { masterKey, trust });
    expect(outside).toEqual({ ok: false, at: expect.any(String), ms: expect.any(Number), error: 'connect_error' });
  });
});

async function readConsoles() {
  const { listConsoles } = await import('../../../lib/fleet/consoles');
  return listConsoles(store);
}

describe('rounds: rules fire and resolve, nothing is sent twice', () => {
  let a: FakeConsole; // healthy with problems
  let b: FakeConsole; // failing, then back
  let x: FakeConsole; // expired certificate, later removed
  let xRec: ConsoleRecord;
  let aRec: ConsoleRecord;
  let bRec: ConsoleRecord;
  beforeAll(async () => {
    a = await fakeConsole(ca.issue('a', { days: 2 }));
    b = await fakeConsole(ca.issue('b'));
    x = await fakeConsole(ca.issue('x', { startdate: '20200101000000Z', enddate: '20200201000000Z' }));
    aRec = await register(a, 'acme');
    bRec = await register(b, 'globex');
    xRec = await register(x, 'initech');
    await createFleetChannel(store, policy, { name: 'ops webhook', type: 'webhook', url: `${receiverUrl}/webhook?k=1`, secret: WEBHOOK_SECRET });
    await createFleetChannel(store, policy, { name: 'phones', type: 'ntfy', url: `${receiverUrl}/ntfy`, topic: 'fleet-alerts', token: 'tk_ntfy_token' });
    await createFleetChannel(store, policy, { name: 'team', type: 'teams', url: `${receiverUrl}/teams` });
    await createFleetChannel(store, policy, { name: 'chat', type: 'chat', url: `${receiverUrl}/chat` });
    await createFleetChannel(store, policy, { name: 'broken receiver', type: 'chat', url: `${receiverUrl}/fail` });
    await createFleetChannel(store, policy, { name: 'off', type: 'chat', url: `${receiverUrl}/off`, enabled: false });
  });

  it('round 1: what has data fires; one failed poll fires nothing; one request per enabled channel', async () => {
    a.status = healthyStatus({ audit: { failedLogins24h: 25 }, directory: { dcs: [{ name: 'dc1', url: 'ldaps://dc1.corp.test:636', state: 'up' }, { name: 'dc2', url: 'ldaps://dc2.corp.test:636', state: 'down' }] } });
    b.mode = 'http500';
    take();
    expect(await round()).toMatchObject({ outcome: 'completed', polledNow: 3 });
    expect(await activeKeys()).toEqual(['certificate_expiring@cert', 'certificate_expiring@cert', 'console_dc_down@dc:dc2.corp.test', 'failed_logins_spike@logins']);
    const rs = take();
    expect(rs.map((r) => r.path).sort()).toEqual(['/chat', '/fail', '/ntfy/fleet-alerts', '/teams', '/webhook?k=1']);
    const hook = rs.find((r) => r.path.startsWith('/webhook'))!;
    expect(verifyFleetWebhook(hook, WEBHOOK_SECRET)).toBe(true);
    expect(verifyFleetWebhook({ ...hook, body: hook.body.replace('fired', 'fixed') }, WEBHOOK_SECRET)).toBe(false);
    const payload = JSON.parse(hook.body);
    expect(payload).toMatchObject({ schema: 1, source: 'fleet' });
    expect(payload.events).toHaveLength(4);
    const cert = payload.events.find((e: any) => e.alert.key === `console:${aRec.id}:cert`);
    expect(cert).toMatchObject({ event: 'fired', alert: { kind: 'certificate_expiring', severity: 'critical', clientCode: 'acme', link: `/consoles/${aRec.id}` } });
    expect(Object.keys(cert.alert).sort()).toEqual(['clientCode', 'firedAt', 'key', 'kind', 'link', 'params', 'severity', 'subject']);
    // topic push: text body, Title, Priority urgent (a critical event), Tags, Bearer
    const ntfy = rs.find((r) => r.path === '/ntfy/fleet-alerts')!;
    expect(ntfy.headers).toMatchObject({ priority: 'urgent', authorization: 'Bearer tk_ntfy_token', 'content-type': 'text/plain; charset=utf-8' });
    expect(String(ntfy.headers.title)).toMatch(/^\[fleet\] 4 fired/);
    expect(String(ntfy.headers.tags).split(',')).toEqual(['rotating_light', 'fired']);
    // team chat: an Adaptive Card 1.4 that validates against the schema
    const teams = JSON.parse(rs.find((r) => r.path === '/teams')!.body);
    expect(teams.attachments[0].contentType).toBe('application/vnd.microsoft.card.adaptive');
    const validate = new Ajv({ strict: false }).compile(ADAPTIVE_CARD_14_SUBSET);
    expect([validate(teams.attachments[0].content), validate.errors]).toEqual([true, null]);
    expect(JSON.stringify(teams)).toContain(`https://fleet.msp.test/consoles/${aRec.id}`);
    expect(JSON.parse(rs.find((r) => r.path === '/chat')!.body).text).toContain('CRITICAL · Certificate expiring · acme');
    // the failed delivery is recorded on each history entry and on the channel
    const hist = await listHistory(store);
    expect(hist).toHaveLength(4);
    expect(hist[0].deliveries.find((d) => d.name === 'broken receiver')).toMatchObject({ ok: false, error: 'http_error', status: 503 });
    expect((await listFleetChannels(store)).find((c) => c.name === 'broken receiver')!.lastDelivery).toMatchObject({ ok: false, error: 'http_error' });
    expect(hist[0].deliveries.some((d) => d.name === 'off')).toBe(false);
    // the console's last poll as the dashboard reads it
    expect(await consolePollView(store, aRec.id)).toMatchObject({ polled: true, ok: true, version: '1.2.0', health: 'healthy', audit: { chain: 'ok', failedLogins24h: 25, witnessedSeq: 5 }, certificate: { subject: expect.stringContaining('CN=a') } });
    const xView = await consolePollView(store, xRec.id);
    expect(xView).toMatchObject({ polled: true, ok: false, error: 'connect_error', consecutiveFailures: 1, version: null, certificate: { validTo: '2020-02-01T00:00:00.000Z' } });
    expect(xView).not.toHaveProperty('detail');
  });

  it('round 2: a second consecutive failure fires console_down; active alerts are not re-sent', async () => {
    take();
    await round();
    const rs = take();
    const events = webhookEvents(rs);
    expect(events.map((e: any) => `${e.event}:${e.alert.kind}:${e.alert.clientCode}`).sort()).toEqual(['fired:console_down:globex', 'fired:console_down:initech']);
    expect(events.find((e: any) => e.alert.clientCode === 'globex').alert.params).toMatchObject({ error: 'http_error', httpStatus: 500, consecutiveFailures: 2 });
  });

  it('a restart mid-incident (new runtime, nothing in memory) re-sends nothing', async () => {
    take();
    const fresh = newDeps();
    expect(await round(fresh)).toMatchObject({ outcome: 'completed', transitions: 0 });
    expect(take()).toEqual([]);
    expect((await activeKeys()).length).toBe(6);
  });

  it('resolves when the data says so, with resolved notifications; an unreachable console keeps its state', async () => {
    a.status = healthyStatus({ audit: { failedLogins24h: 3, head: { seq: 6, hash: H('6') } } });
    b.mode = 'healthy';
    take();
    await round();
    const events = webhookEvents(take());
    expect(events.map((e: any) => `${e.event}:${e.alert.kind}`).sort()).toEqual(['resolved:console_dc_down', 'resolved:console_down', 'resolved:failed_logins_spike']);
    expect(events.every((e: any) => typeof e.alert.resolvedAt === 'string')).toBe(true);
    // an unreachable console keeps its alert state: a stalled-out A would keep its cert alert; here B's DCs go down then B fails once
    b.status = healthyStatus({ directory: { dcs: [{ name: 'dc1', url: 'ldaps://dc1.globex.test', state: 'down' }] } });
    await round();
    b.mode = 'http500';
    await round();
    expect(await activeKeys()).toContain('console_dc_down@dc:dc1.globex.test');
    b.mode = 'healthy';
    b.status = healthyStatus();
    await round();
    expect(await activeKeys()).not.toContain('console_dc_down@dc:dc1.globex.test');
    take();
  });

  it('health unhealthy is down at once; a console whose audit chain was rewritten raises console_audit_broken', async () => {
    b.status = healthyStatus({ health: { status: 'unhealthy' } });
    await round();
    expect(await activeKeys()).toContain('console_down@down');
    b.status = healthyStatus();
    // A's chain: the fleet witnessed head 6; the console now answers another hash at 6 (rewritten, re-hashed, re-signed)
    const states = await readPollStates(store);
    expect(states.get(aRec.id)!.witness).toMatchObject({ seq: 6, hash: H('6') });
    a.status = healthyStatus({ audit: { head: { seq: 9, hash: H('9-forged') } } });
    a.hashAt = (seq) => H(`${seq}-forged`);
    take();
    await round();
    const events = webhookEvents(take());
    const broken = events.find((e: any) => e.alert.kind === 'console_audit_broken');
    expect(broken).toMatchObject({ event: 'fired', alert: { severity: 'critical', clientCode: 'acme', params: { reason: 'chain_rewritten', witnessed: { seq: 6, hash: H('6') }, reported: { seq: 6, hash: H('6-forged') } } } });
    // the console keeps reporting `chain: ok` over its rewritten log: the fleet's evidence stands
    await round();
    expect(await activeKeys()).toContain('console_audit_broken@audit');
    // a console reporting its chain broken itself
    b.status = healthyStatus({ audit: { chain: 'broken', firstBadSeq: 3, problem: 'hash_mismatch' } });
    await round();
    expect((await listActiveAlerts(store)).filter((al) => al.kind === 'console_audit_broken').map((al) => al.params.reason).sort()).toEqual(['chain_broken', 'chain_rewritten']);
  });

  it('a silence holds back what it covers until it ends, then the fire goes out once; an acknowledged alert resolves without a notification (issue 29)', async () => {
    const silence = await createSilence(store, { consoleId: bRec.id, endsAt: new Date(Date.now() + 3600_000).toISOString(), comment: 'globex maintenance' }, 'msp-admin');
    b.status = healthyStatus({ health: { status: 'unhealthy' }, audit: { chain: 'broken', firstBadSeq: 3, problem: 'hash_mismatch' } });
    take();
    await round();
    expect(webhookEvents(take()).filter((e: any) => e.alert.clientCode === 'globex')).toEqual([]);
    expect(await activeKeys()).toContain('console_down@down');
    const quiet = (await listHistory(store)).find((h) => h.alert?.key === `console:${bRec.id}:down`)!;
    expect(quiet).toMatchObject({ event: 'fired', quiet: 'silenced', deliveries: [] });
    // still silenced: nothing; the silence ends: the held fire goes out, once
    await round();
    expect(webhookEvents(take()).filter((e: any) => e.alert.clientCode === 'globex')).toEqual([]);
    await deleteSilence(store, silence.id);
    await round();
    expect(webhookEvents(take()).map((e: any) => `${e.event}:${e.alert.kind}:${e.alert.clientCode}`)).toEqual(['fired:console_down:globex']);
    await round();
    expect(take()).toEqual([]);
    // acknowledged: it resolves quietly; the other one resolves loud
    expect(await acknowledgeAlert(store, `console:${bRec.id}:audit`, { by: 'tech-alice', at: new Date().toISOString(), comment: 'restored from backup' })).toBeDefined();
    b.status = healthyStatus();
    await round();
    expect(webhookEvents(take()).map((e: any) => `${e.event}:${e.alert.kind}:${e.alert.clientCode}`)).toEqual(['resolved:console_down:globex']);
    expect((await listHistory(store)).find((h) => h.alert?.key === `console:${bRec.id}:audit` && h.event === 'resolved')).toMatchObject({ quiet: 'acknowledged', deliveries: [] });
  });

  it('removing a console resolves its alerts', async () => {
    take();
    await deleteConsole(store, xRec.id);
    await round();
    const events = webhookEvents(take());
    expect(events.filter((e: any) => e.alert.clientCode === 'initech').map((e: any) => `${e.event}:${e.alert.kind}:${e.alert.params.resolution}`).sort()).toEqual(['resolved:certificate_expiring:console_removed', 'resolved:console_down:console_removed']);
    expect((await readPollStates(store)).has(xRec.id)).toBe(false);
  });
});

describe('a round that does not fit in one invocation', () => {
  it('polls under a bound, resumes where it stopped, polls each console once per round, evaluates once; a held lease answers busy', async () => {
    const local = await scratchStore('hdc-fleet-split');
    const fleet: FakeConsole[] = [];
    for (let i = 0; i < 6; i++) {
      const fc = await fakeConsole(ca.issue(`s${i}`));
      fc.delayMs = 400;
      fleet.push(fc);
      await createConsole(local, masterKey, { clientCode: 'acme', url: fc.url, token: `tok-split-${i}-0123456789` });
    }
    const d: RoundDeps = { store: local, masterKey: async () => masterKey, concurrency: 1, trust, timeoutMs: 10_000, intervalMs: 60_000 };
    // room for about 1 s of polls: 10 s per-poll timeout + 1 s margin are kept back
    const first = await runPollInvocation(d, { deadline: Date.now() + 12_000 });
    expect(first.outcome).toBe('partial');
    expect(first.polledNow).toBeGreaterThan(0);
    expect(first.remaining).toBe(6 - first.polledNow);
    // two invocations at once: one takes the lease, the other is busy
    const [p, q] = await Promise.all([runPollInvocation(d, { deadline: Date.now() + 60_000 }), runPollInvocation(d, { deadline: Date.now() + 60_000 })]);
    expect([p.outcome, q.outcome].sort()).toEqual(['busy', 'completed']);
    expect(fleet.map((f) => f.hits)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(await runPollInvocation(d, { deadline: Date.now() + 60_000 })).toMatchObject({ outcome: 'not_due' });
  });
});

describe('channels serve the console too: Standard Webhooks', () => {
  it('a receiver verifies with the specification library; a tampered body or old timestamp is refused', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const { record } = applyChannelInput(undefined, { name: 'approvals', type: 'webhook', url: `${receiverUrl}/std`, secret }, { key: channelKey, aad: 'notify', secretMin: 32 });
    take();
    const r = await deliverToChannel(record, [{ event: 'approval_requested', text: 'x' }], { kind: 'approval_requested', link: 'https://hdc.example/approvals/1' }, { policy: { key: channelKey, aad: 'notify' }, signing: 'standard', trust });
    expect(r).toMatchObject({ ok: true, status: 200 });
    const [got] = take();
    const wh = new Webhook(secret);
    const headers = { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': String(got.headers['webhook-signature']) };
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    expect(wh.verify(got.body, headers)).toMatchObject({ kind: 'approval_requested' });
    expect(() => wh.verify(got.body.replace('approval', 'approva1'), headers)).toThrow();
    expect(() => wh.verify(got.body, { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 301) })).toThrow();
  });
});
