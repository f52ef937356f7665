import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { AuditChain } from '../../lib/audit';
import { store, signedIn, auditMark, auditSince } from '../support/stack';

const pad = (n: number) => String(n).padStart(12, '0');

async function freshChain(n: number) {
  const chain = new AuditChain(store, `test-${randomUUID()}`);
  for (let i = 0; i < n; i++) await chain.append({ event: 'test.row', outcome: 'success', details: { i } });
  return chain;
}
const rowKey = (chain: AuditChain, seq: number) => ({ pk: `AUDIT#${chain.chain}`, sk: pad(seq) });
const getRow = async (chain: AuditChain, seq: number) =>
  (await store.documentClient.send(new GetCommand({ TableName: store.tableName, Key: rowKey(chain, seq) }))).Item!;
const putRow = (item: Record<string, unknown>) => store.documentClient.send(new PutCommand({ TableName: store.tableName, Item: item }));

describe('the audit hash chain', () => {
  it('never forks nor loses a row under 50 parallel appends from separate writers', async () => {
    const name = `test-${randomUUID()}`;
    // separate AuditChain objects stand for separate Lambda instances (no shared memory)
    const writers = Array.from({ length: 50 }, () => new AuditChain(store, name));
    const rows = await Promise.all(writers.map((w, i) => w.append({ event: 'test.parallel', outcome: 'success', details: { i } })));
    expect(new Set(rows.map((r) => r.seq)).size).toBe(50);
    expect(Math.max(...rows.map((r) => r.seq))).toBe(50);
    const v = await new AuditChain(store, name).verify();
    expect(v).toEqual({ ok: true, checked: 50 });
  });

  it('detects a changed row', async () => {
    const chain = await freshChain(5);
    const row = await getRow(chain, 3);
    await putRow({ ...row, body: { ...row.body, outcome: 'failure' } });
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 3, problem: 'hash_mismatch' });
  });

  it('detects a deleted row in the middle', async () => {
    const chain = await freshChain(5);
    await store.documentClient.send(new DeleteCommand({ TableName: store.tableName, Key: rowKey(chain, 2) }));
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 2, problem: 'missing_row' });
  });

  it('detects deleted newest rows against the chain head', async () => {
    const chain = await freshChain(5);
    await store.documentClient.send(new DeleteCommand({ TableName: store.tableName, Key: rowKey(chain, 5) }));
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
    const chain = new AuditChain(store, `test-${randomUUID()}`);
    await chain.append({ event: 'a', outcome: 'success' });
    await chain.append({ event: 'b', outcome: 'success', client: 'acme' });
    expect((await chain.verify()).ok).toBe(true);
    const r2 = await getRow(chain, 2);
    const { client: _c, ...without } = r2.body;
    await putRow({ ...r2, body: without });
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 2, problem: 'hash_mismatch' });
  });

  it('purges rows past the retention, keeps the rest verifiable, and audits the purge', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const chain = new AuditChain(store, `test-${randomUUID()}`, { now: () => now });
    for (let i = 0; i < 4; i++) await chain.append({ event: 'old', outcome: 'success' });
    now += 40 * 86400_000;
    for (let i = 0; i < 3; i++) await chain.append({ event: 'recent', outcome: 'success' });
    expect(await chain.purge(30, { name: 'test' })).toBe(4);
    const rows = [];
    for await (const r of chain.rows()) rows.push(r);
    expect(rows.map((r) => r.event)).toEqual(['recent', 'recent', 'recent', 'audit.purge']);
    expect(rows[3]).toMatchObject({ details: { deleted: 4, retentionDays: 30 } });
    expect(await chain.verify()).toEqual({ ok: true, checked: 4 });
    expect(await chain.verify('incremental')).toEqual({ ok: true, checked: 0 });
    expect(await chain.purge(0, { name: 'test' })).toBe(0);
  });

  it('verifies incrementally from the last verified row, and still catches a change of that row', async () => {
    const chain = await freshChain(5);
    expect(await chain.verify('full')).toEqual({ ok: true, checked: 5 });
    expect(await chain.checkpoint()).toMatchObject({ seq: 5, fullVerifiedAt: expect.any(String) });
    for (let i = 0; i < 2; i++) await chain.append({ event: 'test.row', outcome: 'success' });
    expect(await chain.verify('incremental')).toEqual({ ok: true, checked: 2 });
    // a change after the checkpoint
    await chain.append({ event: 'test.row', outcome: 'success' });
    const r8 = await getRow(chain, 8);
    await putRow({ ...r8, body: { ...r8.body, outcome: 'failure' } });
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 8, problem: 'hash_mismatch' });
    await putRow(r8);
    expect((await chain.verify('incremental')).ok).toBe(true);
    // the checkpoint row itself replaced
    const r8b = await getRow(chain, 8);
    await putRow({ ...r8b, hash: 'f'.repeat(64) });
    expect(await chain.verify('incremental')).toMatchObject({ ok: false, firstBadSeq: 8 });
    // an older change is the full verification's to find (the daily job)
    await putRow(r8b);
    const r2 = await getRow(chain, 2);
    await putRow({ ...r2, body: { ...r2.body, outcome: 'failure' } });
    expect((await chain.verify('incremental')).ok).toBe(true);
    expect(await chain.verify('full')).toMatchObject({ ok: false, firstBadSeq: 2 });
  });

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
});
