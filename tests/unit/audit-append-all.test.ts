import { AppendPastDeadline, AuditChain, CONTENDED_MS, MAX_ROWS_PER_APPEND, type AuditInput } from '../../lib/audit';
import { recordDecision } from '../../lib/authz/engine';
import { inRequestScope, setRequestDeadline } from '../../lib/request-scope';
import { memoryDynamoStore, observe } from '../support/memory-store';

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

  describe('refreshHeadIfContended (the reveal reads the head while the password service works)', () => {
    /** The store, counting the reads of the chain's head. */
    function counted(name: string) {
      const store = memoryDynamoStore(name);
      const counter = { headReads: 0 };
      observe(store, (op, input) => {
        if (op === 'get' && input.Key?.sk === 'HEAD') counter.headReads++;
      });
      return { store, counter };
    }

    it('reads while this process knows no head, not while its appends keep winning', async () => {
      const { store, counter } = counted('refresh-winning');
      const chain = new AuditChain(store, 'console');
      await chain.refreshHeadIfContended();
      expect(counter.headReads).toBe(1);
      await chain.append(row('first', 0));
      const before = counter.headReads;
      for (let i = 1; i <= 3; i++) {
        await chain.refreshHeadIfContended();
        await chain.appendAll([row('authz.decision', i), row('computers.laps.read', i)]);
      }
      expect(counter.headReads).toBe(before); // no read: the head it wrote is the head
      expect((await chain.extent()).headSeq).toBe(7);
      expect(await chain.verify('full')).toEqual(expect.objectContaining({ ok: true, checked: 7 }));
    });

    it('reads for CONTENDED_MS after a race lost to another writer, and the rows still chain', async () => {
      const { store, counter } = counted('refresh-contended');
      let now = Date.parse('2026-11-26T10:00:00Z');
      const mine = new AuditChain(store, 'console', { now: () => now });
      // another instance (another process: its own store client, and what it knows of the head its own)
      const other = new AuditChain({ ...store }, 'console', { now: () => now });
      await mine.append(row('mine', 0));
      await other.append(row('other', 1)); // mine's known head is now stale
      await mine.refreshHeadIfContended(); // it does not know that yet: no read
      const reads0 = counter.headReads;
      expect(reads0).toBe(2); // each instance's first append (neither knew a head)
      await mine.append(row('mine', 2)); // loses once, learns the head that won, writes
      expect((await mine.extent()).headSeq).toBe(3);
      const reads1 = counter.headReads;
      await mine.refreshHeadIfContended();
      expect(counter.headReads).toBe(reads1 + 1); // contended: it reads
      now += CONTENDED_MS - 1;
      await mine.refreshHeadIfContended();
      expect(counter.headReads).toBe(reads1 + 2); // still within the span
      now += 1;
      await mine.refreshHeadIfContended();
      expect(counter.headReads).toBe(reads1 + 2); // the span is over: no read
      await other.append(row('other', 3));
      await mine.appendAll([row('authz.decision', 4), row('computers.laps.read', 4)]);
      expect(await mine.verify('full')).toEqual(expect.objectContaining({ ok: true, checked: 6 }));
    });
  });
});

describe('a lost race under another writer (issue 28: the head is no hot spot)', () => {
  it('after its backoff sleep an append reads the head afresh: a writer appending during that sleep costs it no further lost race', async () => {
    const base = memoryDynamoStore('append-fresh-head');
    const other = new AuditChain(base, 'console');
    let tries = 0;
    // this process's store: another process appends right before each of its first two writes,
    // and once more during the sleep after the second lost race
    const mine = Object.assign(Object.create(base), {
      async transactWrite(items: Parameters<typeof base.transactWrite>[0]) {
        tries++;
        if (tries <= 2) await other.append(row('other', tries));
        if (tries === 2) setTimeout(() => void other.append(row('during-sleep', 3)), 1);
        return base.transactWrite(items);
      },
    }) as typeof base;
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.99); // a ~20 ms sleep after the second loss
    try {
      const r = await new AuditChain(mine, 'console').append(row('mine', 9));
      // lost twice (each time to a row written just before), then wrote at the fresh head; drafted
      // on the head learned before its sleep, the third try would have lost to the row written during it
      expect(tries).toBe(3);
      expect(r.seq).toBe(4);
    } finally {
      random.mockRestore();
    }
    expect(await other.verify('full')).toEqual(expect.objectContaining({ ok: true, checked: 4 }));
  });
});

describe("a read's decision row within its deadline (issue 28)", () => {
  // another process wins the head before each of this one's first `losses` writes
  const contended = (name: string, losses = Infinity) => {
    const base = memoryDynamoStore(name);
    const other = new AuditChain(base, 'console');
    let tries = 0;
    const mine = Object.assign(Object.create(base), {
      async transactWrite(items: Parameters<typeof base.transactWrite>[0]) {
        if (++tries <= losses) await other.append(row('other', tries));
        return base.transactWrite(items);
      },
    }) as typeof base;
    return { base, mine, tries: () => tries };
  };

  it('an append still losing races at its deadline gives up (AppendPastDeadline), its row never written, the chain whole', async () => {
    const { base, mine, tries } = contended('append-deadline');
    const started = Date.now();
    const deadline = { at: started + 150, retryAfterSeconds: 2 };
    const err = await new AuditChain(mine, 'console').append(row('authz.decision', 1), { deadline }).catch((e) => e);
    expect(err).toBeInstanceOf(AppendPastDeadline);
    expect(err.deadline).toBe(deadline);
    expect(Date.now() - started).toBeLessThan(150 + 100); // no backoff sleep past the deadline
    expect(tries()).toBeGreaterThan(1);
    const chain = new AuditChain(base, 'console');
    const events = [];
    for (let seq = 1; seq <= (await chain.extent()).headSeq; seq++) events.push((await chain.row(seq))?.event);
    expect(events).not.toContain('authz.decision');
    expect(events).toEqual(Array(tries()).fill('other')); // only the other writer's rows
    expect(await chain.verify('full')).toEqual(expect.objectContaining({ ok: true }));
  });

  it('a deadline already past: refused before any write', async () => {
    const { mine, tries } = contended('append-deadline-past');
    await expect(new AuditChain(mine, 'console').append(row('authz.decision', 1), { deadline: { at: Date.now() - 1, retryAfterSeconds: 2 } })).rejects.toBeInstanceOf(AppendPastDeadline);
    expect(tries()).toBe(0);
  });

  it("a read's authz.decision row (recordDecision) is bounded by the request's deadline: 503 overloaded (reason deadline, its Retry-After)", async () => {
    const { base, mine } = contended('decision-deadline');
    const actor = { identity: { guid: 'g-op', username: 'op', provider: 'ad' }, ip: '127.0.0.1' };
    const decision = { allowed: false, status: 404, reason: 'not_found' };
    const err = await inRequestScope(async () => {
      setRequestDeadline({ at: Date.now() + 100, retryAfterSeconds: 2 }); // as readDeadline does for a GET
      return recordDecision({ rt: { audit: new AuditChain(mine, 'console') } } as never, actor as never, 'computer', 'computers.read', 'g-pc', decision as never, { correlationId: 'c1' }).catch((e) => e);
    });
    expect(err).toEqual(expect.objectContaining({ status: 503, code: 'overloaded', overloadReason: 'deadline', details: { retryAfterSeconds: 2 } }));
    const chain = new AuditChain(base, 'console');
    for (let seq = 1; seq <= (await chain.extent()).headSeq; seq++) expect((await chain.row(seq))?.event).toBe('other');
  });

  it('without a deadline (a change, a job) the same append goes on until it is written', async () => {
    const { mine, tries } = contended('append-no-deadline', 4);
    const r = await new AuditChain(mine, 'console').append(row('authz.decision', 1));
    expect([tries(), r.seq]).toEqual([5, 5]);
  });
});
