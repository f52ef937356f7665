import { AuditChain, pad, type AuditInput } from '../../lib/audit';
import { auditQuerySchema, MAX_EXAMINED, queryAudit } from '../../lib/audit/query';
import { memoryDynamoStore } from '../support/memory-store';

// Rows appended together (a decision and its outcome) share their lookup items: one per
// partition, keyed by the first row it points to. The viewer must still find every row by each
// filter, across pages and cursors, beside rows appended alone and items of the older shape; the
// purge must take the shared items with the rows.
const actor = { id: 'AAAA-op', name: 'Op-Helpdesk', provider: 'local', ip: '127.0.0.1' };
const pair = (n: number, target = 'WS-01'): AuditInput[] => [
  { event: 'authz.decision', outcome: 'success', actor, target: { id: `guid-${target}`, name: target }, correlationId: `c${n}` },
  { event: 'computers.laps.read', outcome: n % 2 ? 'success' : 'denied', actor, target: { id: `guid-${target}`, name: target }, correlationId: `c${n}` },
];
const single = (n: number, target = 'WS-01'): AuditInput => ({ event: 'users.unlock', outcome: 'success', actor, target: { id: `guid-${target}`, name: target }, correlationId: `s${n}` });
const lookupItems = (store: ReturnType<typeof memoryDynamoStore>) => [...store.items.entries()].filter(([pk]) => pk.startsWith('AUDITIX#')).flatMap(([, part]) => [...part.values()]);

/** Every row of one filter, page after page (`limit` per page), newest first. */
async function all(chain: AuditChain, filter: Record<string, string>, limit: number): Promise<Array<{ seq: number; event: string }>> {
  const out: Array<{ seq: number; event: string }> = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await queryAudit(chain, auditQuerySchema.parse({ ...filter, limit, ...(cursor ? { cursor } : {}) }));
    out.push(...page.items.map((r) => ({ seq: r.seq, event: r.event })));
    cursor = page.cursor;
    if (!cursor) return out;
  }
  throw new Error('no end of pages');
}

describe('audit lookup items shared by rows appended together', () => {
  it('a decision and its outcome write 6 lookup items (was 10), each row naming the first of them', async () => {
    const store = memoryDynamoStore('shared-lookups-count');
    const chain = new AuditChain(store, 'console', { lookups: true });
    const [d, o] = await chain.appendAll(pair(1));
    const items = lookupItems(store);
    expect(items).toHaveLength(6); // actor id + name, target id + name (shared), one event each
    const shared = items.filter((it) => it.also);
    expect(shared).toHaveLength(4);
    for (const it of shared) expect([it.sk, it.seq, it.also.map((a: { seq: number }) => a.seq)]).toEqual([pad(d.seq), d.seq, [o.seq]]);
    expect(store.items.get('AUDIT#console')!.get(pad(o.seq))!.lk).toBe(d.seq);
    // a row alone: the items it always had (no `also`, no `lk`)
    const s = await chain.append(single(2));
    expect(lookupItems(store).filter((it) => it.seq === s.seq && !it.also)).toHaveLength(5);
    expect(store.items.get('AUDIT#console')!.get(pad(s.seq))!.lk).toBeUndefined();
  });

  // pages of 1 end between a decision and its outcome: the next page starts inside the shared item
  it('finds every row by actor, target and event, with pages of 1, 2 and 50 rows, beside rows appended alone (the older items\' shape)', async () => {
    const store = memoryDynamoStore('shared-lookups-viewer');
    const chain = new AuditChain(store, 'console', { lookups: true });
    for (let n = 0; n < 7; n++) {
      await chain.appendAll(pair(n, n % 3 ? 'WS-01' : 'WS-02'));
      await chain.append(single(n, n % 2 ? 'WS-01' : 'WS-02'));
    }
    const rows: Array<{ seq: number; event: string; target: string; outcome: string }> = [];
    for await (const r of chain.rows()) rows.push({ seq: r.seq, event: r.event, target: r.target!.name!, outcome: r.outcome });
    expect(rows).toHaveLength(21);
    const expected = (keep: (r: (typeof rows)[number]) => boolean) => rows.filter(keep).map(({ seq, event }) => ({ seq, event })).reverse();
    for (const limit of [1, 2, 50]) {
      expect(await all(chain, { target: 'ws-01' }, limit)).toEqual(expected((r) => r.target === 'WS-01'));
      expect(await all(chain, { target: 'guid-WS-02' }, limit)).toEqual(expected((r) => r.target === 'WS-02'));
      expect(await all(chain, { actor: 'op-helpdesk' }, limit)).toEqual(expected(() => true));
      expect(await all(chain, { event: 'computers.laps.read' }, limit)).toEqual(expected((r) => r.event === 'computers.laps.read'));
      expect(await all(chain, { target: 'WS-01', outcome: 'denied' }, limit)).toEqual(expected((r) => r.target === 'WS-01' && r.outcome === 'denied'));
    }
  });

  it('examines at most MAX_EXAMINED entries per page, though an item holds two', async () => {
    const store = memoryDynamoStore('shared-lookups-bound');
    const chain = new AuditChain(store, 'console', { lookups: true });
    for (let n = 0; n < 600; n++) await chain.appendAll(pair(n));
    await chain.append(single(0)); // newest: the pages of items no longer end on an even count
    const page = await queryAudit(chain, auditQuerySchema.parse({ actor: 'op-helpdesk', outcome: 'no-such-outcome' }));
    expect(page.items).toEqual([]);
    expect(page.examined).toBe(MAX_EXAMINED);
    expect(page.cursor).toBeDefined();
    const rest = await queryAudit(chain, auditQuerySchema.parse({ actor: 'op-helpdesk', outcome: 'no-such-outcome', cursor: page.cursor }));
    expect(rest.examined).toBe(1201 - MAX_EXAMINED); // the rest, no entry read twice
    expect(rest.cursor).toBeUndefined();
  });

  it('purges the shared items with their rows and keeps the others', async () => {
    const store = memoryDynamoStore('shared-lookups-purge');
    let now = Date.parse('2026-01-01T00:00:00Z');
    const chain = new AuditChain(store, 'console', { lookups: true, now: () => now });
    await chain.appendAll(pair(1, 'OLD-PC'));
    await chain.append(single(1, 'OLD-PC'));
    await chain.appendAll(pair(2, 'OLD-PC'));
    now += 40 * 86400_000;
    await chain.appendAll(pair(3, 'NEW-PC'));
    expect(await chain.purge(30, { name: 'test' })).toBe(5);
    const left = lookupItems(store);
    expect(left.some((it) => JSON.stringify(it).includes('old-pc'))).toBe(false);
    expect(await all(chain, { target: 'NEW-PC' }, 1)).toEqual([
      { seq: 7, event: 'computers.laps.read' },
      { seq: 6, event: 'authz.decision' },
    ]);
    expect(await chain.verify('full')).toEqual(expect.objectContaining({ ok: true }));
  });
});
