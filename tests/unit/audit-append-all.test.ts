import { AuditChain, MAX_ROWS_PER_APPEND, type AuditInput } from '../../lib/audit';
import { memoryDynamoStore } from '../support/memory-dynamo';

// A decision and its outcome go to the chain in one write (the LAPS reveal): consecutive
// sequences, one head move, and no fork when single appends race with it.
const row = (event: string, n: number): AuditInput => ({ event, outcome: 'success', reason: `r${n}`, actor: { id: 'op', name: 'op', provider: 'local', ip: '127.0.0.1' }, correlationId: `c${n}` });

describe('AuditChain.appendAll', () => {
  it('writes rows that belong together as consecutive sequences, chained to each other', async () => {
    const chain = new AuditChain(memoryDynamoStore('append-all'), 'console', { lookups: true });
    await chain.append(row('first', 0));
    const [decision, outcome] = await chain.appendAll([row('authz.decision', 1), row('computers.laps.read', 2)]);
    expect([decision.seq, outcome.seq]).toEqual([2, 3]);
    expect(outcome.prevHash).toBe(decision.hash);
    expect(outcome.at).toBe(decision.at);
    expect(await chain.extent()).toEqual(expect.objectContaining({ headSeq: 3 }));
    expect(await chain.verify('full')).toEqual(expect.objectContaining({ ok: true, checked: 3 }));
  });

  it('races with single appends without a fork or a lost row', async () => {
    const chain = () => new AuditChain(store, 'console', { lookups: true }); // one per instance
    const store = memoryDynamoStore('append-all-race');
    const writes = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? chain().appendAll([row('authz.decision', i), row('computers.laps.read', i)]) : chain().append(row('single', i))));
    await Promise.all(writes);
    const c = chain();
    expect((await c.extent()).headSeq).toBe(16);
    expect(await c.verify('full')).toEqual(expect.objectContaining({ ok: true, checked: 16 }));
    // each pair stayed together: the outcome right after its decision
    for (let seq = 1; seq <= 16; seq++) {
      const r = await c.row(seq);
      if (r?.event === 'authz.decision') expect((await c.row(seq + 1))).toEqual(expect.objectContaining({ event: 'computers.laps.read', correlationId: r.correlationId }));
    }
  });

  it('refuses an empty or oversized batch', async () => {
    const chain = new AuditChain(memoryDynamoStore('append-all-limits'), 'console');
    await expect(chain.appendAll([])).rejects.toThrow();
    await expect(chain.appendAll(Array.from({ length: MAX_ROWS_PER_APPEND + 1 }, (_, i) => row('x', i)))).rejects.toThrow();
    expect((await chain.extent()).headSeq).toBe(0);
  });
});
