import { randomBytes, randomUUID } from 'node:crypto';
import { AuditChain, type AuditChainOptions } from '../../lib/audit';
import { canonicalJson, chainHash } from '../../lib/audit/canonical';
import { storedBody, type StoredRow } from '../../lib/audit/rows';
import { queryAudit, MAX_EXAMINED } from '../../lib/audit/query';
import { loadMasterKey } from '../../lib/crypto/master-key';
import { consoleEnvironment } from '../../functions/admin/cli';
import { store, signedIn, auditMark, auditSince, stack, newClient } from '../support/stack';

const pad = (n: number) => String(n).padStart(12, '0');
const testKey = randomBytes(32);
const keyed = (opts: AuditChainOptions = {}) => new AuditChain(store, `test-${randomUUID()}`, { key: async () => testKey, ...opts });

async function freshChain(n: number, opts: AuditChainOptions = {}) {
  const chain = keyed(opts);
  for (let i = 0; i < n; i++) await chain.append({ event: 'test.row', outcome: 'success', details: { i } });
  return chain;
}
const rowKey = (chain: AuditChain, seq: number) => ({ pk: `AUDIT#${chain.chain}`, sk: pad(seq) });
const metaKey = (chain: AuditChain, sk: string) => ({ pk: `AUDITMETA#${chain.chain}`, sk });
const getItem = async (key: Record<string, string>) => (await store.get({ Key: key })).Item!;
const getRow = (chain: AuditChain, seq: number) => getItem(rowKey(chain, seq));
const putRow = (item: Record<string, unknown>) => store.put({ Item: item });
/** A stored row's body, and the row with another body in its stored text (as an attacker would write it). */
const bodyOf = (row: Record<string, any>) => storedBody(row as StoredRow);
const withBody = (row: Record<string, any>, body: unknown) => ({ ...row, bodyText: canonicalJson(body) });
/** An attacker with write access to the table only: edits a row's details, hash left as it was. */
const editDetails = async (chain: AuditChain, seq: number) => {
  const row = await getRow(chain, seq);
  const body = bodyOf(row);
  await putRow(withBody(row, { ...body, details: { ...body.details, tampered: true } }));
  return row;
};

describe('the audit hash chain', () => {
  it('never forks nor loses a row under 50 parallel appends from separate writers', async () => {
    const name = `test-${randomUUID()}`;
    // separate AuditChain objects stand for separate Lambda instances (no shared memory)
    const writers = Array.from({ length: 50 }, () => new AuditChain(store, name, { key: async () => testKey }));
    const rows = await Promise.all(writers.map((w, i) => w.append({ event: 'test.parallel', outcome: 'success', details: { i } })));
    expect(new Set(rows.map((r) => r.seq)).size).toBe(50);
    expect(Math.max(...rows.map((r) => r.seq))).toBe(50);
    const v = await new AuditChain(store, name, { key: async () => testKey }).verify();
    expect(v).toEqual({ ok: true, checked: 50 });
    // the chain is in time order: no row carries an earlier time than the row before it
    const ats: string[] = [];
    for await (const r of writers[0].rows()) ats.push(r.at);
    expect([...ats].sort()).toEqual(ats);
  });

  it('keeps rows in time order when a writer’s clock is behind the newest row', async () => {
    let now = Date.parse('2026-03-01T12:00:00Z');
    const name = `test-${randomUUID()}`;
    const ahead = new AuditChain(store, name, { key: async () => testKey, now: () => now });
    const behind = new AuditChain(store, name, { key: async () => testKey, now: () => now - 5000 });
    await ahead.append({ event: 'a', outcome: 'success' });
    const r2 = await behind.append({ event: 'b', outcome: 'success' });
    expect(r2.at).toBe('2026-03-01T12:00:00.000Z');
    now += 1000;
    expect((await behind.append({ event: 'c', outcome: 'success' })).at).toBe('2026-03-01T12:00:00.000Z');
    expect((await ahead.append({ event: 'd', outcome: 'success' })).at).toBe('2026-03-01T12:00:01.000Z');
  });

  it('detects a changed row', async () => {
    const chain = await freshChain(5);
    const row = await getRow(chain, 3);
    await putRow(withBody(row, { ...bodyOf(row), outcome: 'failure' }));
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 3, problem: 'hash_mismatch' });
  });

  it('detects a deleted row in the middle', async () => {
    const chain = await freshChain(5);
    await store.delete({ Key: rowKey(chain, 2) });
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 2, problem: 'missing_row' });
  });

  it('detects deleted newest rows against the chain head', async () => {
    const chain = await freshChain(5);
    await store.delete({ Key: rowKey(chain, 5) });
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 5, problem: 'head_mismatch' });
  });

  it('detects reordered rows', async () => {
    const chain = await freshChain(5);
    const r2 = await getRow(chain, 2);
    const r3 = await getRow(chain, 3);
    await putRow({ ...r3, sk: pad(2) });
    await putRow({ ...r2, sk: pad(3) });
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 2 });
  });

  it('detects a row whose optional client field was added or removed', async () => {
    const chain = keyed();
    await chain.append({ event: 'a', outcome: 'success' });
    await chain.append({ event: 'b', outcome: 'success', client: 'acme' });
    expect((await chain.verify()).ok).toBe(true);
    const r2 = await getRow(chain, 2);
    const { client: _c, ...without } = bodyOf(r2);
    await putRow(withBody(r2, without));
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 2, problem: 'hash_mismatch' });
  });

  it('purges rows past the retention, keeps the rest verifiable under a signed anchor, and audits the purge', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const chain = keyed({ now: () => now, lookups: true });
    for (let i = 0; i < 4; i++) await chain.append({ event: 'old', outcome: 'success', target: { id: 'purged-target' } });
    now += 40 * 86400_000;
    for (let i = 0; i < 3; i++) await chain.append({ event: 'recent', outcome: 'success' });
    expect(await chain.purge(30, { name: 'test' })).toBe(4);
    const rows = [];
    for await (const r of chain.rows()) rows.push(r);
    expect(rows.map((r) => r.event)).toEqual(['recent', 'recent', 'recent', 'audit.purge']);
    expect(rows[3]).toMatchObject({ details: { deleted: 4, retentionDays: 30 } });
    expect(await chain.verify()).toEqual({ ok: true, checked: 4 });
    expect((await chain.verify('incremental')).ok).toBe(true);
    expect(await chain.purge(0, { name: 'test' })).toBe(0);
    // the purged rows' lookup items went with them
    expect(await chain.lookupPage(`AUDITIX#${chain.chain}#target#purged-target`, 0, 999, 50)).toEqual([]);
    // an anchor moved by someone without the key (deleting the oldest rows unaudited) is refused
    const anchor = await getItem(metaKey(chain, 'ANCHOR'));
    await putRow({ ...anchor, seq: 5, hash: (await getRow(chain, 5)).hash });
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 5, problem: 'signature_invalid' });
  });
});

describe('incremental verification from the signed checkpoint (the fleet status poll)', () => {
  it('verifies only the rows added since the checkpoint, plus the rolling sample', async () => {
    const chain = await freshChain(5, { sampleRows: 2 });
    expect(await chain.verify('incremental')).toEqual({ ok: true, checked: 5 + 2 });
    expect(await chain.checkpoint()).toMatchObject({ seq: 5, valid: true, sampleSeq: 2 });
    for (let i = 0; i < 3; i++) await chain.append({ event: 'test.row', outcome: 'success' });
    // the checkpoint row re-hashed, the 3 new rows, 2 sample rows
    expect(await chain.verify('incremental')).toEqual({ ok: true, checked: 1 + 3 + 2 });
    expect(await chain.checkpoint()).toMatchObject({ seq: 8, sampleSeq: 4 });
  });

  it('reports an edit of an already verified old row at the next check (chain shorter than the sample)', async () => {
    const chain = await freshChain(8);
    expect((await chain.verify('incremental')).ok).toBe(true);
    await editDetails(chain, 2);
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 2, problem: 'hash_mismatch' });
    // and keeps reporting it: a failed check moves neither the checkpoint nor the sample
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 2 });
  });

  it('re-hashes the checkpoint row from its content: an edit that keeps the stored hash is caught', async () => {
    const chain = await freshChain(5, { sampleRows: 1 });
    expect((await chain.verify('incremental')).ok).toBe(true);
    await editDetails(chain, 5);
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 5, problem: 'hash_mismatch' });
  });

  it('catches a consistent rewrite (rows re-hashed, head re-written) without the key', async () => {
    const chain = await freshChain(6, { sampleRows: 1 });
    expect((await chain.verify('incremental')).ok).toBe(true);
    // rewrite rows 3..6 consistently, and the head item with the new tip
    let prev = (await getRow(chain, 2)).hash;
    for (let seq = 3; seq <= 6; seq++) {
      const row = await getRow(chain, seq);
      const body = { ...bodyOf(row), outcome: 'failure' };
      const hash = chainHash(prev, body);
      await putRow({ ...withBody(row, body), prevHash: prev, hash });
      prev = hash;
    }
    const head = await getItem(metaKey(chain, 'HEAD'));
    await putRow({ ...head, hash: prev });
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, problem: 'signature_invalid' });
    // head left alone: the rewritten checkpoint row no longer carries the signed hash
    await putRow(head);
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 6, problem: 'checkpoint_mismatch' });
  });

  it('refuses a checkpoint moved by someone without the key, and a row inserted past the head', async () => {
    const chain = await freshChain(4);
    expect((await chain.verify('incremental')).ok).toBe(true);
    const cp = await getItem(metaKey(chain, 'VERIFIED'));
    await putRow({ ...cp, state: { ...cp.state, seq: 2, hash: (await getRow(chain, 2)).hash } });
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, problem: 'signature_invalid' });
    await putRow(cp);
    expect((await chain.verify('incremental')).ok).toBe(true);
    const r4 = await getRow(chain, 4);
    const body = { ...bodyOf(r4), seq: 5, event: 'inserted' };
    await putRow({ ...withBody(r4, body), sk: pad(5), seq: 5, prevHash: r4.hash, hash: chainHash(r4.hash, body) });
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 5, problem: 'head_mismatch' });
  });

  it('re-hashes every row within ceil(N / sampleRows) checks: 10 rows, 3 per check, an edit behind the sample shows at the 4th check', async () => {
    const chain = await freshChain(10, { sampleRows: 3 });
    expect(await chain.verifyIncremental()).toMatchObject({ ok: true, sample: { atSeq: 3 } });
    await editDetails(chain, 2); // just behind the sample: the worst case
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await chain.verify('incremental'));
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false]);
    expect(results[3]).toMatchObject({ firstBadSeq: 2, problem: 'hash_mismatch' });
    expect(Math.ceil(10 / 3)).toBe(4);
  });

  it('reports a completed lap of the sample', async () => {
    const chain = await freshChain(4, { sampleRows: 3 });
    const first = await chain.verifyIncremental();
    expect(first.sample).toMatchObject({ atSeq: 3 });
    expect(first.sample!.lastLapCompletedAt).toBeUndefined();
    const second = await chain.verifyIncremental();
    expect(second.sample).toMatchObject({ atSeq: 0, lastLapCompletedAt: expect.any(String), lastLapStartedAt: first.sample!.lapStartedAt });
  });

  it('bounds the new rows one check verifies and leaves the rest for the next', async () => {
    const chain = await freshChain(7, { maxNewRows: 3, sampleRows: 1 });
    expect(await chain.verifyIncremental()).toMatchObject({ ok: true, verifiedThroughSeq: 3, headSeq: 7, pending: 4 });
    expect(await chain.verifyIncremental()).toMatchObject({ ok: true, verifiedThroughSeq: 6, pending: 1 });
    expect(await chain.verifyIncremental()).toMatchObject({ ok: true, verifiedThroughSeq: 7, pending: 0 });
  });
});

describe('the background full walk (resumable slices)', () => {
  it('walks in slices, meets the signed head, and records its last result with when it ran', async () => {
    const chain = await freshChain(12);
    const s1 = await chain.fullWalk({ maxRows: 5 });
    expect(s1.running).toMatchObject({ seq: 5, untilSeq: 12, checked: 5 });
    expect(s1.last).toBeUndefined();
    await chain.append({ event: 'during', outcome: 'success' }); // for the next walk
    expect((await chain.fullWalk({ maxRows: 5 })).running).toMatchObject({ seq: 10 });
    const done = await chain.fullWalk({ maxRows: 5 });
    expect(done.running).toBeUndefined();
    expect(done.last).toMatchObject({ ok: true, checked: 12, throughSeq: 12, startedAt: expect.any(String), completedAt: expect.any(String) });
    expect(await chain.fullWalkState()).toEqual({ last: done.last });
  });

  it('finds an old edit the sample has not reached, and the chain reads broken until a later walk succeeds', async () => {
    const chain = await freshChain(12, { sampleRows: 1 });
    expect((await chain.check()).ok).toBe(true);
    const original = await editDetails(chain, 9);
    const w = await chain.fullWalk({ maxRows: 5 });
    expect(w.running).toBeDefined();
    const broken = await chain.fullWalk({ maxRows: 5 });
    expect(broken.last).toMatchObject({ ok: false, firstBadSeq: 9, problem: 'hash_mismatch' });
    // the incremental check (sample at row 2) has not re-hashed row 9 yet; the walk's result holds
    const c = await chain.check();
    expect(c.incremental.ok).toBe(true);
    expect(c).toMatchObject({ ok: false, firstBadSeq: 9, problem: 'hash_mismatch' });
    await putRow(original);
    expect((await chain.fullWalk({})).last).toMatchObject({ ok: true });
    expect((await chain.check()).ok).toBe(true);
  });

  it('refuses walk state written without the key', async () => {
    const chain = await freshChain(6);
    await chain.fullWalk({ maxRows: 2 });
    const item = await getItem(metaKey(chain, 'FULLWALK'));
    await putRow({ ...item, state: { ...item.state, current: { ...item.state.current, seq: 6, hash: (await getRow(chain, 6)).hash } } });
    expect((await chain.check())).toMatchObject({ ok: false, problem: 'signature_invalid' });
    expect((await chain.fullWalk({})).last).toMatchObject({ ok: false, problem: 'signature_invalid' });
  });

  it('the scheduled handler walks the console chain and its result is what GET /api/audit/verify returns', async () => {
    Object.assign(process.env, consoleEnvironment(stack));
    const { handler } = await import('../../functions/scheduled/audit-verify');
    let state = await handler(undefined, { getRemainingTimeInMillis: () => 60_000 });
    while (state.running) state = await handler(undefined, { getRemainingTimeInMillis: () => 60_000 });
    expect(state.last).toMatchObject({ ok: true, completedAt: expect.any(String) });
    const auditor = await signedIn('op-auditor');
    const r = await auditor.get('/api/audit/verify');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, full: { last: { ok: true, completedAt: state.last!.completedAt, throughSeq: state.last!.throughSeq } } });
    expect(r.body.incremental).toMatchObject({ ok: true, verifiedThroughSeq: expect.any(Number), headSeq: expect.any(Number) });
  });
});

describe('the audit viewer (lib): key reads, bounded scans, paging', () => {
  const T = '2026-05-01T10:00:00.000Z';
  async function viewerChain() {
    let now = Date.parse(T);
    const chain = keyed({ lookups: true, now: () => (now += 60_000) });
    const ids = { alice: randomUUID(), bob: randomUUID(), pc1: randomUUID(), pc2: randomUUID() };
    const rows: Array<[string, string, string, string]> = [
      // actor, event, target, outcome
      ['alice', 'computers.laps.read', 'pc1', 'success'],
      ['bob', 'computers.laps.read', 'pc1', 'denied'],
      ['alice', 'users.password.reset', 'pc2', 'success'],
      ['alice', 'computers.laps.read', 'pc2', 'denied'],
      ['bob', 'computers.laps.expire', 'pc1', 'success'],
      ['alice', 'computers.laps.read', 'pc1', 'success'],
    ];
    for (const [a, event, t, outcome] of rows) {
      await chain.append({ event, outcome, actor: { id: ids[a as 'alice'], name: a, provider: 'ad' }, target: { id: ids[t as 'pc1'], name: t.toUpperCase(), kind: 'computer' } });
    }
    return { chain, ids };
  }
  const seqs = (p: { items: Array<{ seq: number }> }) => p.items.map((r) => r.seq);

  it('filters by target, actor (GUID or name, any case), event and outcome, newest first, rows as stored', async () => {
    const { chain, ids } = await viewerChain();
    expect(seqs(await queryAudit(chain, { limit: 50 }))).toEqual([6, 5, 4, 3, 2, 1]);
    const pc1 = await queryAudit(chain, { target: ids.pc1, limit: 50 });
    expect(seqs(pc1)).toEqual([6, 5, 2, 1]);
    expect(pc1.examined).toBe(4); // read by key: only that target's entries
    expect(pc1.items[0]).toMatchObject({ seq: 6, event: 'computers.laps.read', prevHash: expect.any(String), hash: expect.any(String), target: { id: ids.pc1, name: 'PC1' } });
    expect(seqs(await queryAudit(chain, { target: 'pc1', limit: 50 }))).toEqual([6, 5, 2, 1]); // by name
    expect(seqs(await queryAudit(chain, { actor: 'ALICE', limit: 50 }))).toEqual([6, 4, 3, 1]);
    expect(seqs(await queryAudit(chain, { actor: ids.bob.toUpperCase(), limit: 50 }))).toEqual([5, 2]);
    expect(seqs(await queryAudit(chain, { event: 'computers.laps.read', outcome: 'denied', limit: 50 }))).toEqual([4, 2]);
    expect(seqs(await queryAudit(chain, { actor: 'alice', target: ids.pc1, event: 'computers.laps.read', limit: 50 }))).toEqual([6, 1]);
    expect(seqs(await queryAudit(chain, { outcome: 'denied', limit: 50 }))).toEqual([4, 2]);
    expect(seqs(await queryAudit(chain, { actor: 'nobody', limit: 50 }))).toEqual([]);
  });

  it('narrows by time range (rows at T+1..T+6 minutes; bounds inclusive; any offset)', async () => {
    const { chain } = await viewerChain();
    const at = (m: number) => new Date(Date.parse(T) + m * 60_000).toISOString();
    expect(seqs(await queryAudit(chain, { from: at(2), to: at(4), limit: 50 }))).toEqual([4, 3, 2]);
    expect(seqs(await queryAudit(chain, { from: at(6), limit: 50 }))).toEqual([6]);
    expect(seqs(await queryAudit(chain, { to: at(1), limit: 50 }))).toEqual([1]);
    expect(seqs(await queryAudit(chain, { to: '2026-05-01T12:03:30+02:00', limit: 50 }))).toEqual([3, 2, 1]);
    expect(seqs(await queryAudit(chain, { from: at(7), limit: 50 }))).toEqual([]);
    expect(seqs(await queryAudit(chain, { event: 'computers.laps.read', from: at(2), to: at(5), limit: 50 }))).toEqual([4, 2]);
  });

  it('pages with an opaque cursor, filtered or not, and says when it is done', async () => {
    const { chain, ids } = await viewerChain();
    const p1 = await queryAudit(chain, { limit: 4 });
    expect(seqs(p1)).toEqual([6, 5, 4, 3]);
    expect(p1.cursor).toEqual(expect.any(String));
    const p2 = await queryAudit(chain, { limit: 4, cursor: p1.cursor });
    expect(seqs(p2)).toEqual([2, 1]);
    expect(p2.cursor).toBeUndefined();
    const f1 = await queryAudit(chain, { target: ids.pc1, limit: 3 });
    expect(seqs(f1)).toEqual([6, 5, 2]);
    expect(seqs(await queryAudit(chain, { target: ids.pc1, limit: 3, cursor: f1.cursor }))).toEqual([1]);
    await expect(queryAudit(chain, { limit: 3, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
    await expect(queryAudit(chain, { limit: 3, cursor: '%%%' })).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
  });

  it(`examines at most ${MAX_EXAMINED} entries per page when a filter needs a scan, and answers a cursor`, async () => {
    const chain = keyed({ lookups: true });
    await chain.append({ event: 'needle', outcome: 'failure' });
    for (let i = 0; i < MAX_EXAMINED + 50; i++) await chain.append({ event: 'hay', outcome: 'success' });
    const p1 = await queryAudit(chain, { outcome: 'failure', limit: 10 });
    expect(p1).toMatchObject({ items: [], examined: MAX_EXAMINED, cursor: expect.any(String) });
    const p2 = await queryAudit(chain, { outcome: 'failure', limit: 10, cursor: p1.cursor });
    expect(seqs(p2)).toEqual([1]);
    expect(p2.cursor).toBeUndefined();
    // the same row by key: one entry read
    expect(await queryAudit(chain, { event: 'needle', limit: 10 })).toMatchObject({ examined: 1, items: [{ seq: 1 }] });
  }, 300_000);

  it('finds rows written before the lookups existed by a bounded scan', async () => {
    const name = `test-${randomUUID()}`;
    const before = new AuditChain(store, name, { key: async () => testKey });
    await before.append({ event: 'x', outcome: 'success', target: { id: 'old-object' } });
    await before.append({ event: 'y', outcome: 'success' });
    const after = new AuditChain(store, name, { key: async () => testKey, lookups: true });
    await after.append({ event: 'x', outcome: 'success', target: { id: 'old-object' } });
    expect(await after.lookupsFrom()).toBe(3);
    expect(seqs(await queryAudit(after, { target: 'old-object', limit: 50 }))).toEqual([3, 1]);
    expect(seqs(await queryAudit(after, { event: 'x', limit: 1 }))).toEqual([3]);
  });

  it('never returns a row a forged lookup item points to when the row does not match', async () => {
    const { chain, ids } = await viewerChain();
    await putRow({ pk: `AUDITIX#${chain.chain}#target#${ids.pc1}`, sk: pad(3), seq: 3, f: { event: 'users.password.reset', outcome: 'success', actor: ['alice'], target: [ids.pc1] } });
    expect(seqs(await queryAudit(chain, { target: ids.pc1, limit: 50 }))).toEqual([6, 5, 2, 1]);
  });
});

describe('the audit routes', () => {
  it('GET /api/audit/verify answers for audit.read and refuses (403, audited) without it', async () => {
    const auditor = await signedIn('op-auditor');
    const r = await auditor.get('/api/audit/verify');
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.checked).toBeGreaterThan(0);

    const helpdesk = await signedIn('op-approver');
    const mark = await auditMark();
    const refused = await helpdesk.get('/api/audit/verify');
    expect(refused.status).toBe(403);
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'audit.read', route: 'GET /api/audit/verify' } });
  });

  it('GET /api/audit/verify costs the new rows and one sample slice, not the whole chain, per call', async () => {
    const auditor = await signedIn('op-auditor');
    const first = await auditor.get('/api/audit/verify');
    const r = await auditor.get('/api/audit/verify');
    const { headSeq, verifiedThroughSeq, pending } = r.body.incremental;
    expect([verifiedThroughSeq, pending]).toEqual([headSeq, 0]);
    // the checkpoint row + the rows since the previous call + at most one sample slice (2000 rows)
    expect(r.body.checked).toBeLessThanOrEqual(1 + (headSeq - first.body.incremental.verifiedThroughSeq) + 2000);
  });

  it('GET /api/audit and the per-object history answer audit.read holders, with filters and validation', async () => {
    const key = await loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile });
    const consoleChain = new AuditChain(store, 'console', { key: async () => key, lookups: true });
    const obj = randomUUID();
    await consoleChain.append({ event: 'test.viewer', outcome: 'success', actor: { name: 'viewer-test' }, target: { id: obj, name: 'OBJ-1' } });
    await consoleChain.append({ event: 'test.viewer', outcome: 'denied', actor: { name: 'viewer-test' }, target: { id: obj, name: 'OBJ-1' } });
    const auditor = await signedIn('op-auditor');

    const all = await auditor.get('/api/audit?limit=5');
    expect(all.status).toBe(200);
    expect(all.body.items.length).toBe(5);
    expect(all.body.cursor).toEqual(expect.any(String));
    const next = await auditor.get(`/api/audit?limit=5&cursor=${encodeURIComponent(all.body.cursor)}`);
    expect(next.body.items[0].seq).toBe(all.body.items[4].seq - 1);

    const history = await auditor.get(`/api/audit/objects/${obj}`);
    expect(history.status).toBe(200);
    expect(history.body.items.map((r: any) => r.outcome)).toEqual(['denied', 'success']);
    expect((await auditor.get(`/api/audit/objects/${obj}?outcome=denied`)).body.items).toHaveLength(1);
    expect((await auditor.get(`/api/audit?target=${obj}&actor=viewer-test&event=test.viewer`)).body.items).toHaveLength(2);
    expect((await auditor.get(`/api/audit/objects/${randomUUID()}`)).body.items).toEqual([]);

    for (const [q, code] of [
      ['from=yesterday', 'validation_failed'],
      ['from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z', 'invalid_time_range'],
      ['limit=201', 'validation_failed'],
      ['limit=0', 'validation_failed'],
      ['actr=bob', 'validation_failed'],
      ['cursor=not-a-cursor', 'invalid_cursor'],
      [`target=${'x'.repeat(300)}`, 'validation_failed'],
    ]) {
      const r = await auditor.get(`/api/audit?${q}`);
      expect([q, r.status, r.body.code]).toEqual([q, 400, code]);
    }
    expect((await auditor.get(`/api/audit/objects/${obj}?target=x`)).status).toBe(400);

    const helpdesk = await signedIn('op-helpdesk');
    const mark = await auditMark();
    for (const path of ['/api/audit', `/api/audit/objects/${obj}`]) {
      const r = await helpdesk.get(path);
      expect([path, r.status, r.body]).toEqual([path, 403, { code: 'forbidden', permission: 'audit.read' }]);
    }
    expect((await auditSince(mark)).filter((x) => x.event === 'authz.decision' && x.outcome === 'denied')).toHaveLength(2);
    expect((await newClient().get('/api/audit')).status).toBe(401);
  });
});

