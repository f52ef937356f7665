import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Attribute, Change } from 'ldapts';
import { DirectoryPool, type DcEndpoint } from '../../lib/directory';
import { ApiError } from '../../lib/errors';
import { storeDcHealth } from '../../lib/directory/shared-health';
import { memoryStore } from '../support/memory-store';
import { inRequestScope, setRequestDeadline } from '../../lib/request-scope';

// The pool's timing rules against minimal LDAPS servers on loopback that can be frozen like a
// SIGSTOPped DC: TCP still accepted, nothing answered (not even the TLS handshake). The real Samba
// DCs are frozen the same way in tests/integration/directory-failover.test.ts.

// a throw-away self-signed certificate for 127.0.0.1 (openssl, as the local directory uses)
const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-pool-test-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', `${certDir}/key.pem`, '-out', `${certDir}/cert.pem`], { stdio: 'ignore' });
const tlsIdentity = { key: fs.readFileSync(`${certDir}/key.pem`), cert: fs.readFileSync(`${certDir}/cert.pem`) };
fs.rmSync(certDir, { recursive: true, force: true });

class FakeDc {
  private server = net.createServer((raw) => {
    this.sockets.add(raw);
    raw.on('close', () => this.sockets.delete(raw));
    raw.on('error', () => undefined);
    if (this.frozen) return; // accepted by the kernel; no TLS handshake ever
    this.accept(new tls.TLSSocket(raw, { isServer: true, ...tlsIdentity }));
  });
  private sockets = new Set<net.Socket>();
  frozen = false;
  /** delay before each answer */
  delayMs = 0;
  /** every operation received: its kind and whether its connection was bound first */
  ops: Array<{ op: 'bind' | 'search' | 'modify'; bound: boolean }> = [];
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `ldaps://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }
  /** close every open connection from the server side (a restart, an idle timeout) */
  dropConnections() {
    for (const s of this.sockets) s.destroy();
  }
  async stop() {
    this.dropConnections();
    await new Promise((r) => this.server.close(r));
  }

  private accept(socket: tls.TLSSocket) {
    socket.on('error', () => undefined);
    let bound = false;
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      if (this.frozen) return; // a stopped process: the kernel takes the bytes, nobody answers
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const msg = nextMessage(buf);
        if (!msg) break;
        buf = buf.subarray(msg.length);
        const answer = (tag: number) => {
          const out = ldapResult(msg.id, tag);
          setTimeout(() => !this.frozen && !socket.destroyed && socket.write(out), this.delayMs);
        };
        if (msg.op === 0x60) {
          bound = true;
          this.ops.push({ op: 'bind', bound });
          answer(0x61);
        } else if (msg.op === 0x63) {
          this.ops.push({ op: 'search', bound });
          answer(0x65);
        } else if (msg.op === 0x66) {
          this.ops.push({ op: 'modify', bound });
          answer(0x67);
        } else if (msg.op === 0x42) socket.end();
      }
    });
  }
}

/** One whole BER LDAPMessage at the start of `buf`: its length, message id and operation tag. */
function nextMessage(buf: Buffer): { length: number; id: number; op: number } | undefined {
  if (buf.length < 2) return undefined;
  let off = 1;
  let len = buf[off++];
  if (len & 0x80) {
    const n = len & 0x7f;
    if (buf.length < off + n) return undefined;
    len = buf.subarray(off, off + n).reduce((a, b) => a * 256 + b, 0);
    off += n;
  }
  if (buf.length < off + len) return undefined;
  const idLen = buf[off + 1];
  const id = buf.subarray(off + 2, off + 2 + idLen).reduce((a, b) => a * 256 + b, 0);
  return { length: off + len, id, op: buf[off + 2 + idLen] };
}

/** An LDAPResult with resultCode success under `tag` (BindResponse, SearchResultDone, ModifyResponse). */
function ldapResult(id: number, tag: number): Buffer {
  const idBytes: number[] = [];
  for (let v = id; idBytes.length === 0 || v > 0; v = Math.floor(v / 256)) idBytes.unshift(v % 256);
  if (idBytes[0] & 0x80) idBytes.unshift(0);
  const body = [0x02, idBytes.length, ...idBytes, tag, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00];
  return Buffer.from([0x30, body.length, ...body]);
}

const CONNECT_MS = 800; // long enough that a loaded machine's scheduling noise is small beside it
// "At most once": under twice the timeout tells one wait from two, and leaves room for a loaded
// machine (a fixed +250 ms margin failed at 839 ms while five other test stacks ran beside it).
const ONCE = (timeoutMs: number) => 1.9 * timeoutMs;
const creds = { user: 'cn=svc-read,dc=x', password: 'pw' };
const write = { user: 'cn=svc-write,dc=x', password: 'pw' };
let a: FakeDc;
let b: FakeDc;
let pools: DirectoryPool[] = [];

function pool(extra: Partial<ConstructorParameters<typeof DirectoryPool>[1]> = {}) {
  const dcs: DcEndpoint[] = [
    { name: 'dcA', url: a.url },
    { name: 'dcB', url: b.url },
  ];
  // the operation timeout is long on purpose: no frozen-DC rule may wait for it
  const p = new DirectoryPool(dcs, { caPem: tlsIdentity.cert.toString(), connectTimeoutMs: CONNECT_MS, operationTimeoutMs: 4000, cooldownMs: 60_000, probeIntervalMs: 0, pageSize: 500, searchMaxResults: 5000, ...extra });
  pools.push(p);
  return p;
}
const readOn = (p: DirectoryPool, searches = 1) =>
  p.run(
    creds,
    'read',
    async (client, dc) => {
      for (let i = 0; i < searches; i++) await client.search('dc=x', { scope: 'base' });
      return dc.name;
    },
    { reuse: true },
  );
const timed = async <T>(f: () => Promise<T>) => {
  const t0 = Date.now();
  const value = await f();
  return { value, ms: Date.now() - t0 };
};
const healthy = (p: DirectoryPool) => Object.fromEntries(p.dcState().map((d) => [d.name, d.healthy]));

beforeEach(async () => {
  a = await new FakeDc().start();
  b = await new FakeDc().start();
});
afterEach(async () => {
  for (const p of pools) p.stop();
  pools = [];
  await a.stop();
  await b.stop();
});

describe('a frozen DC (TCP accepted, nothing answered) costs at most the connect timeout, once', () => {
  it('a read on the kept connection of a DC frozen between two reads is re-run on the next DC within the connect timeout; the frozen DC is then in cooldown and not tried', async () => {
    const p = pool();
    expect(await readOn(p)).toBe('dcA');
    a.frozen = true;
    const first = await timed(() => readOn(p));
    expect(first.value).toBe('dcB');
    expect(first.ms).toBeLessThan(ONCE(CONNECT_MS));
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
    const connectsA = p.dcState()[0].connects;
    for (let i = 0; i < 3; i++) {
      const next = await timed(() => readOn(p));
      expect(next.value).toBe('dcB');
      expect(next.ms).toBeLessThan(CONNECT_MS / 2); // no connect wait at all
    }
    expect(p.dcState()[0].connects).toBe(connectsA);
  });

  it('five parallel reads on the frozen kept connection all answer from the next DC within the connect timeout', async () => {
    const p = pool();
    expect(await readOn(p)).toBe('dcA');
    a.frozen = true;
    const all = await timed(() => Promise.all(Array.from({ length: 5 }, () => readOn(p))));
    expect(all.value).toEqual(['dcB', 'dcB', 'dcB', 'dcB', 'dcB']);
    expect(all.ms).toBeLessThan(ONCE(CONNECT_MS));
  });

  it('a read waiting on a frozen kept connection when its idle time runs out (idle closer at ~300 ms into the read) still costs one connect timeout, not a closed connection and then a connect to the frozen DC', async () => {
    const connectMs = 600;
    const p = pool({ connectTimeoutMs: connectMs, keepIdleMs: 800 });
    expect(await readOn(p)).toBe('dcA');
    await new Promise((r) => setTimeout(r, 500));
    a.frozen = true;
    const r = await timed(() => readOn(p));
    expect(r.value).toBe('dcB');
    expect(r.ms).toBeLessThan(ONCE(connectMs));
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
  });

  it('a credential check (own connection) against a frozen first DC answers from the next DC within the connect timeout', async () => {
    const p = pool();
    a.frozen = true;
    const r = await timed(() => p.verifyCredentials(creds));
    expect(r.value).toBe(true);
    expect(r.ms).toBeLessThan(ONCE(CONNECT_MS));
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
  });

  it('a change sent to a DC that froze is reported 502 directory_outcome_unknown within the connect timeout and never replayed on the next DC', async () => {
    const p = pool();
    const r = await timed(() =>
      p
        .run(write, 'write', async (client) => {
          a.frozen = true;
          await client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: ['x'] }) }));
        })
        .catch((e) => e),
    );
    expect(r.value).toBeInstanceOf(ApiError);
    expect(r.value).toMatchObject({ status: 502, code: 'directory_outcome_unknown' });
    expect(r.ms).toBeLessThan(ONCE(CONNECT_MS));
    expect(b.ops).toEqual([]);
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
  });

  it('the health probe finds a frozen DC within the connect timeout, probing the others at the same time', async () => {
    const p = pool();
    a.frozen = true;
    const r = await timed(() => p.probeIdle(async () => creds));
    expect(r.ms).toBeLessThan(ONCE(CONNECT_MS));
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
    expect(b.ops).toEqual([{ op: 'bind', bound: true }]);
    // thawed: the next probe gives it its place back
    a.frozen = false;
    await p.probeIdle(async () => creds);
    expect(healthy(p)).toEqual({ dcA: true, dcB: true });
  });
});

describe('one operation is bounded by the operation timeout', () => {
  it('a DC answering each message (150 ms) but not the whole read (5 messages) within 500 ms: the read is re-run on the next DC', async () => {
    const p = pool({ operationTimeoutMs: 500 });
    a.delayMs = 150;
    const r = await timed(() => readOn(p, 5));
    expect(r.value).toBe('dcB');
    expect(r.ms).toBeLessThan(ONCE(500));
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
  });
});

describe('kept connections', () => {
  it('a kept connection closed by the DC is replaced by a new bound one on the same DC (never an anonymous search), without blaming the DC', async () => {
    const p = pool();
    expect(await readOn(p)).toBe('dcA');
    a.dropConnections();
    await new Promise((r) => setTimeout(r, 50));
    expect(await readOn(p)).toBe('dcA');
    expect(a.ops.filter((o) => o.op === 'search')).toEqual([
      { op: 'search', bound: true },
      { op: 'search', bound: true },
    ]);
    expect(healthy(p)).toEqual({ dcA: true, dcB: true });
    expect(p.dcState()[0].connects).toBe(2);
  });
});

// ---- issue 28: hedged reads, shared DC health, the connection cap

const HEDGE_MS = 150; // floor = cap: the delay is exactly this whatever the history
const SLOW_MS = 700; // a DC that answers, later than the hedge delay
const hedged = (extra: Partial<ConstructorParameters<typeof DirectoryPool>[1]> = {}) => pool({ hedgeFloorMs: HEDGE_MS, hedgeCapMs: HEDGE_MS, ...extra });
const opsOf = (dc: FakeDc, op: 'bind' | 'search' | 'modify') => dc.ops.filter((o) => o.op === op).length;

describe('hedged reads: a read unanswered after the hedge delay goes to the next DC as well, the first answer wins', () => {
  it(`dcA answering after ${SLOW_MS} ms, hedge delay ${HEDGE_MS} ms: the read is answered by dcB soon after the hedge delay, and dcA stays healthy (it answered, later)`, async () => {
    const p = hedged();
    a.delayMs = SLOW_MS;
    const r = await timed(() => readOn(p));
    expect(r.value).toBe('dcB');
    expect(r.ms).toBeGreaterThanOrEqual(HEDGE_MS - 5);
    expect(r.ms).toBeLessThan(SLOW_MS);
    await new Promise((res) => setTimeout(res, 2 * SLOW_MS)); // dcA's answer arrives and is not heard
    expect(opsOf(a, 'search')).toBe(1);
    expect(healthy(p)).toEqual({ dcA: true, dcB: true });
  });

  it(`after dcA lost a hedge (answering after ${SLOW_MS} ms), the next reads go to dcB first with no hedge wait, in this instance and (shared as slow) in another; dcA gets its place back once it has answered`, async () => {
    const store = memoryStore();
    const p = hedged({ sharedHealth: storeDcHealth(store, 'console') });
    a.delayMs = SLOW_MS;
    expect(await readOn(p)).toBe('dcB');
    const next = await timed(() => readOn(p));
    expect(next.value).toBe('dcB');
    expect(next.ms).toBeLessThan(HEDGE_MS);
    expect(a.ops).toHaveLength(1); // only the read it lost (the bind of its connection, not answered yet)
    await new Promise((res) => setTimeout(res, 50));
    const other = hedged({ sharedHealth: storeDcHealth(store, 'console') });
    const third = await timed(() => readOn(other));
    expect(third.value).toBe('dcB');
    expect(third.ms).toBeLessThan(HEDGE_MS);
    expect(other.dcState()[0]).toMatchObject({ connects: 0, shared: { reason: 'slow' } });
    a.delayMs = 0;
    await new Promise((res) => setTimeout(res, SLOW_MS)); // dcA answers the read it lost: slow, not gone
    expect(await readOn(p)).toBe('dcA');
    await new Promise((res) => setTimeout(res, 300)); // past the shared health's read interval
    expect(await readOn(hedged({ sharedHealth: storeDcHealth(store, 'console') }))).toBe('dcA');
  });

  it(`dcA answering within the hedge delay (no delay): dcB is never contacted`, async () => {
    const p = hedged();
    for (let i = 0; i < 3; i++) expect(await readOn(p)).toBe('dcA');
    expect(b.ops).toEqual([]);
  });

  it(`dcA frozen (TCP accepted, nothing answered): the read is answered by dcB after the hedge delay (${HEDGE_MS} ms), not the connect timeout (${CONNECT_MS} ms); the try left on dcA still finds it frozen and fails it`, async () => {
    const p = hedged();
    expect(await readOn(p)).toBe('dcA');
    a.frozen = true;
    const r = await timed(() => readOn(p));
    expect(r.value).toBe('dcB');
    expect(r.ms).toBeLessThan(CONNECT_MS);
    expect(healthy(p).dcA).toBe(true); // not yet: its try is still waiting
    await new Promise((res) => setTimeout(res, CONNECT_MS + 200));
    expect(healthy(p)).toEqual({ dcA: false, dcB: true });
    const next = await timed(() => readOn(p));
    expect(next.value).toBe('dcB');
    expect(next.ms).toBeLessThan(HEDGE_MS); // dcA in cooldown: not tried, no hedge wait
  });

  it(`a change is never hedged: dcA answering after ${SLOW_MS} ms gets the change, dcB receives nothing`, async () => {
    const p = hedged();
    const r = await timed(() => p.run(write, 'write', async (client, dc) => (await client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: ['x'] }) })), dc.name)));
    expect(r.value).toBe('dcA');
    a.delayMs = SLOW_MS;
    const slow = await timed(() => p.run(write, 'write', async (client, dc) => (await client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: ['y'] }) })), dc.name)));
    expect(slow.value).toBe('dcA');
    expect(slow.ms).toBeGreaterThanOrEqual(SLOW_MS);
    expect(opsOf(a, 'modify')).toBe(2);
    expect(b.ops).toEqual([]);
  });

  it('a credential check is never hedged (a wrong password tried on two DCs would count twice): dcA answering late still decides it alone', async () => {
    const p = hedged();
    a.delayMs = SLOW_MS;
    expect(await p.verifyCredentials(creds)).toBe(true);
    expect(b.ops).toEqual([]);
  });

  it('the hedge delay is the cap until reads are known, then the recent p95 held within the floor and the cap', async () => {
    const p = pool({ hedgeFloorMs: 20, hedgeCapMs: 400 });
    expect(p.hedgeDelay()).toBe(400);
    for (let i = 0; i < 30; i++) await readOn(p);
    expect(p.hedgeDelay()).toBeGreaterThanOrEqual(20);
    expect(p.hedgeDelay()).toBeLessThan(400);
    const capped = pool({ hedgeFloorMs: 20, hedgeCapMs: 60 });
    a.delayMs = 100; // both DCs slower than the cap: whichever answers, reads take 100 ms or more
    b.delayMs = 100;
    for (let i = 0; i < 30; i++) await readOn(capped);
    expect(capped.hedgeDelay()).toBe(60);
  });
});

describe('shared DC health: one instance finds a frozen DC, the others skip it at once', () => {
  it('pool 1 fails dcA (frozen, one connect timeout); pool 2, sharing the store and never having used dcA, goes to dcB first with no wait and opens no connection to dcA; a probe that binds dcA again clears the finding', async () => {
    const store = memoryStore();
    const p1 = pool({ sharedHealth: storeDcHealth(store, 'console') });
    expect(await readOn(p1)).toBe('dcA');
    a.frozen = true;
    expect(await readOn(p1)).toBe('dcB'); // after the connect timeout (no hedge: cap 1 s > 800 ms)
    await new Promise((res) => setTimeout(res, 50)); // the finding's write
    const rec = [...store.items.values()].find((it) => it.pk === 'DCHEALTH#console');
    expect(rec?.data).toMatchObject({ name: 'dcA', reason: 'no_answer' });
    expect(rec?.ttl).toBeGreaterThan(Date.now() / 1000 + 50); // expires with the cooldown (60 s)

    const p2 = pool({ sharedHealth: storeDcHealth(store, 'console') });
    const r = await timed(() => readOn(p2));
    expect(r.value).toBe('dcB');
    expect(r.ms).toBeLessThan(CONNECT_MS / 2);
    expect(p2.dcState()[0]).toMatchObject({ name: 'dcA', healthy: false, connects: 0, shared: { reason: 'no_answer' } });

    a.frozen = false;
    await p2.probeIdle(async () => creds);
    await new Promise((res) => setTimeout(res, 50)); // the clearing write
    expect([...store.items.values()].filter((it) => it.pk === 'DCHEALTH#console').map((it) => it.data.until <= Date.now())).toEqual([true]);
    const p3 = pool({ sharedHealth: storeDcHealth(store, 'console') });
    expect(await readOn(p3)).toBe('dcA');
  });

  it('a store that cannot be read leaves each instance to find for itself (reads still answered)', async () => {
    const broken = { read: async () => Promise.reject(new Error('store down')), markFailed: async () => undefined, clear: async () => undefined };
    const p = pool({ sharedHealth: broken });
    expect(await readOn(p)).toBe('dcA');
  });
});

/** A slot is given back once its connection has closed (the unbind answered or the socket ended). */
const closed = async (p: DirectoryPool) => {
  for (let i = 0; i < 50 && p.connectionStats().open > 0; i++) await new Promise((res) => setTimeout(res, 20));
};

describe('a cap on directory connections per instance', () => {
  it('maxConnections 1: a second change waits for the slot; one that cannot get it within connectionWaitMs (200 ms) is refused 503 overloaded with a Retry-After, nothing sent', async () => {
    const p = pool({ maxConnections: 1, connectionWaitMs: 200 });
    a.delayMs = 500;
    const change = (v: string) => p.run(write, 'write', (client) => client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: [v] }) })));
    const first = change('1');
    const second = await timed(() => change('2').catch((e) => e));
    expect(second.value).toMatchObject({ status: 503, code: 'overloaded', details: { retryAfterSeconds: 1 }, overloadReason: 'directory_connections' });
    expect(second.ms).toBeGreaterThanOrEqual(195);
    expect(second.ms).toBeLessThan(500);
    await first;
    expect(opsOf(a, 'modify')).toBe(1);
    await closed(p);
    expect(p.connectionStats()).toMatchObject({ open: 0, waiting: 0, max: 1 });
  });

  it('maxConnections 1: a waiting change gets the slot when the first closes', async () => {
    const p = pool({ maxConnections: 1, connectionWaitMs: 2000 });
    a.delayMs = 100;
    const change = () => p.run(write, 'write', (client) => client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: ['x'] }) })));
    await Promise.all([change(), change(), change()]);
    expect(opsOf(a, 'modify')).toBe(3);
    await closed(p);
    expect(p.connectionStats().open).toBe(0);
  });
});

// ---- issue 28 (continued): a read's deadline (Concurrency:ReadBudget, set by the pipeline for a
// GET or HEAD into the request scope)

/** `work` inside a request whose deadline is `ms` from now. */
const withDeadline = <T>(ms: number, work: () => Promise<T>) =>
  inRequestScope(() => {
    setRequestDeadline({ at: Date.now() + ms, retryAfterSeconds: 2 });
    return work();
  });
const DEADLINE_MS = 300;

describe("a read's deadline: answered 503 overloaded (reason deadline) when it passes, the DCs not blamed", () => {
  it(`both DCs answering after ${SLOW_MS} ms, deadline ${DEADLINE_MS} ms: refused at the deadline with Retry-After; the tries sent run on unheard and neither DC is failed`, async () => {
    const p = hedged();
    a.delayMs = SLOW_MS;
    b.delayMs = SLOW_MS;
    const r = await timed(() => withDeadline(DEADLINE_MS, () => readOn(p)).catch((e) => e));
    expect(r.value).toMatchObject({ status: 503, code: 'overloaded', details: { retryAfterSeconds: 2 }, overloadReason: 'deadline' });
    expect(r.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(r.ms).toBeLessThan(SLOW_MS);
    await new Promise((res) => setTimeout(res, 3 * SLOW_MS)); // both tries end (bind, then search)
    expect(healthy(p)).toEqual({ dcA: true, dcB: true });
    expect(opsOf(a, 'search') + opsOf(b, 'search')).toBeGreaterThanOrEqual(1);
  });

  it(`both DCs frozen: the first read is refused overloaded at its deadline (${DEADLINE_MS} ms, before any DC is found frozen); once its tries have failed both (connect timeout ${CONNECT_MS} ms), reads answer 503 directory_unavailable by their deadline`, async () => {
    const p = hedged();
    a.frozen = true;
    b.frozen = true;
    const first = await timed(() => withDeadline(DEADLINE_MS, () => readOn(p)).catch((e) => e));
    expect(first.value).toMatchObject({ status: 503, code: 'overloaded', overloadReason: 'deadline' });
    expect(first.ms).toBeLessThan(CONNECT_MS);
    await new Promise((res) => setTimeout(res, 2 * CONNECT_MS)); // the tries sent find both frozen
    expect(healthy(p)).toEqual({ dcA: false, dcB: false });
    const next = await timed(() => withDeadline(DEADLINE_MS, () => readOn(p)).catch((e) => e));
    expect(next.value).toMatchObject({ status: 503, code: 'directory_unavailable' });
    expect(next.ms).toBeLessThan(DEADLINE_MS + 200);
  });

  it('a read whose deadline has passed before it starts is refused at once; nothing is sent to any DC', async () => {
    const p = hedged();
    const r = await timed(() => withDeadline(-1, () => readOn(p)).catch((e) => e));
    expect(r.value).toMatchObject({ status: 503, code: 'overloaded', overloadReason: 'deadline' });
    expect(r.ms).toBeLessThan(50);
    expect(a.ops).toEqual([]);
    expect(b.ops).toEqual([]);
  });

  it('a read answered before its deadline is served as usual (dcA frozen: dcB after the hedge delay, within the deadline)', async () => {
    const p = hedged();
    a.frozen = true;
    expect(await withDeadline(DEADLINE_MS + 200, () => readOn(p))).toBe('dcB');
  });

  it(`a change is never cut by a deadline: dcA answering after ${SLOW_MS} ms, deadline ${DEADLINE_MS} ms, the change is made and answered`, async () => {
    const p = hedged();
    a.delayMs = SLOW_MS;
    const r = await timed(() => withDeadline(DEADLINE_MS, () => p.run(write, 'write', async (client, dc) => (await client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: ['z'] }) })), dc.name))));
    expect(r.value).toBe('dcA');
    expect(r.ms).toBeGreaterThanOrEqual(SLOW_MS);
    expect(opsOf(a, 'modify')).toBe(1);
  });

  it('a read waiting for a connection slot waits no longer than its deadline (connectionWaitMs 2 s), and opens no connection after it', async () => {
    const p = hedged({ maxConnections: 1, connectionWaitMs: 2000 });
    a.delayMs = 400; // the change holds the only slot for its bind and its modify: about 800 ms
    const change = p.run(write, 'write', (client) => client.modify('cn=bob,dc=x', new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: ['w'] }) })));
    await new Promise((res) => setTimeout(res, 20));
    const r = await timed(() => withDeadline(DEADLINE_MS, () => readOn(p)).catch((e) => e));
    expect(r.value).toMatchObject({ status: 503, code: 'overloaded' });
    expect(r.ms).toBeLessThan(DEADLINE_MS + 200);
    await change;
    await closed(p);
    expect(opsOf(a, 'search') + opsOf(b, 'search')).toBe(0);
    expect(p.connectionStats()).toMatchObject({ open: 0, waiting: 0 });
  });
});
