import { z } from 'zod';
import { badRequest } from '../errors';
import type { AuditChain, AuditRow } from './index';
import { lookupFacts, lookupPk, matchesLookup, MAX_LOOKUP_VALUE, type LookupField, type LookupFilter } from './lookup';

// The audit viewer (GET /api/audit, GET /api/audit/objects/{id}): rows newest first, as stored.
// The chain is in time order (an append never takes an earlier time than the row before), so a
// time range is a range of sequence numbers, found by bisection. A target, actor or event filter
// reads that value's lookup partition by key; other filters (outcome, and the filters beside the
// one read by key) are applied to what is read. Each page examines at most MAX_EXAMINED entries
// and answers a cursor when it stopped before the end: a page may hold fewer rows than `limit`
// (even none) and still carry a cursor.

export const MAX_PAGE = 200;
export const MAX_EXAMINED = 1000;
const FETCH_CONCURRENCY = 16;

const filterValue = (max: number) => z.string().trim().min(1).max(max).optional();

const baseQuery = z
  .object({
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
    actor: filterValue(MAX_LOOKUP_VALUE),
    event: filterValue(MAX_LOOKUP_VALUE),
    target: filterValue(MAX_LOOKUP_VALUE),
    outcome: filterValue(32),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(50),
    cursor: z.string().max(200).optional(),
  })
  .strict(); // a misspelt filter is refused, never silently ignored (it would widen the answer)

const ordered = (q: { from?: string; to?: string }) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to);
const orderedIssue = { message: 'from must not be after to', path: ['from'], params: { code: 'invalid_time_range' } };

/** GET /api/audit */
export const auditQuerySchema = baseQuery.refine(ordered, orderedIssue);
/** GET /api/audit/objects/{id}: the same filters, the target being the path's id */
export const objectHistoryQuerySchema = baseQuery.omit({ target: true }).refine(ordered, orderedIssue);

export type AuditQuery = z.infer<typeof auditQuerySchema>;

export interface AuditPage {
  items: AuditRow[];
  /** present when older rows may still match: pass it back as `cursor` for the next page */
  cursor?: string;
  /** entries read for this page (bounded by MAX_EXAMINED) */
  examined: number;
}

interface Cursor {
  /** the next page's rows are below this sequence */
  b: number;
  /** and at or above this one (the `from` bound of the first page) */
  l: number;
}

export const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify({ v: 1, ...c })).toString('base64url');

export function decodeCursor(s: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (c?.v === 1 && Number.isSafeInteger(c.b) && Number.isSafeInteger(c.l) && c.b >= 0 && c.l >= 0) return { b: c.b, l: c.l };
  } catch {
    /* answered below */
  }
  throw badRequest('invalid_cursor');
}

/** The largest sequence in [lo, hi] whose row is at or before `t` (lo - 1 when none). */
async function lastAtOrBefore(chain: AuditChain, t: string, lo: number, hi: number): Promise<number> {
  let ans = lo - 1;
  while (lo <= hi) {
    const m = Math.floor((lo + hi) / 2);
    const at = (await chain.row(m))?.at;
    if (at !== undefined && at <= t) {
      ans = m;
      lo = m + 1;
    } else hi = m - 1;
  }
  return ans;
}

/** The smallest sequence in [lo, hi] whose row is at or after `t` (hi + 1 when none). */
async function firstAtOrAfter(chain: AuditChain, t: string, lo: number, hi: number): Promise<number> {
  let ans = hi + 1;
  while (lo <= hi) {
    const m = Math.floor((lo + hi) / 2);
    const at = (await chain.row(m))?.at;
    if (at === undefined || at >= t) {
      ans = m;
      hi = m - 1;
    } else lo = m + 1;
  }
  return ans;
}

async function fetchRows(chain: AuditChain, seqs: number[]): Promise<AuditRow[]> {
  const out: Array<AuditRow | undefined> = new Array(seqs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(FETCH_CONCURRENCY, seqs.length) }, async () => {
      while (next < seqs.length) {
        const i = next++;
        out[i] = await chain.row(seqs[i]);
      }
    }),
  );
  return out.filter((r): r is AuditRow => !!r);
}

/** One page of the audit viewer. */
export async function queryAudit(chain: AuditChain, q: AuditQuery): Promise<AuditPage> {
  const from = q.from ? new Date(q.from).toISOString() : undefined;
  const to = q.to ? new Date(q.to).toISOString() : undefined;
  const { anchorSeq, headSeq } = await chain.extent();
  let lo = anchorSeq + 1;
  let hi = headSeq;
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    hi = Math.min(hi, c.b - 1);
    lo = Math.max(lo, c.l);
  } else {
    if (to) hi = await lastAtOrBefore(chain, to, lo, hi);
    if (from) lo = await firstAtOrAfter(chain, from, lo, hi);
  }
  const filter: LookupFilter = { actor: q.actor, target: q.target, event: q.event, outcome: q.outcome };
  const inTime = (r: AuditRow) => (!from || r.at >= from) && (!to || r.at <= to);
  const matches = (r: AuditRow) => inTime(r) && matchesLookup(lookupFacts(r), filter);

  const items: AuditRow[] = [];
  let examined = 0;
  let next = hi; // the highest sequence not examined yet
  const field: LookupField | undefined = q.target ? 'target' : q.actor ? 'actor' : q.event ? 'event' : undefined;

  if (field) {
    // rows written since the lookups exist: that value's partition, by key
    const indexedFrom = Math.max(lo, (await chain.lookupsFrom()) ?? Number.MAX_SAFE_INTEGER);
    const pk = lookupPk(chain.chain, field, q[field]!);
    while (next >= indexedFrom && items.length < q.limit && examined < MAX_EXAMINED) {
      const page = await chain.lookupPage(pk, indexedFrom, next, Math.min(250, MAX_EXAMINED - examined));
      if (page.length === 0) {
        next = indexedFrom - 1;
        break;
      }
      const wanted: number[] = [];
      for (const it of page) {
        // rows appended together come from one item: a page of items may hold more entries than
        // the bound, which still holds per entry
        if (examined >= MAX_EXAMINED) break;
        examined++;
        next = it.seq - 1;
        if (matchesLookup(it.f, filter)) wanted.push(it.seq);
        if (items.length + wanted.length >= q.limit) break;
      }
      // the lookup item only points: the row itself must match (and be in the time range)
      for (const r of await fetchRows(chain, wanted)) if (matches(r)) items.push(r);
    }
  }
  if (!field || next < ((await chain.lookupsFrom()) ?? Number.MAX_SAFE_INTEGER)) {
    // no key to read by (or rows older than the lookups): the chain itself, bounded per page
    for await (const r of chain.rows({ reverse: true, afterSeq: lo - 1, throughSeq: next, pageSize: Math.min(500, MAX_EXAMINED - examined + 1) })) {
      if (items.length >= q.limit || examined >= MAX_EXAMINED) break;
      examined++;
      next = r.seq - 1;
      if (matches(r)) items.push(r);
    }
    if (items.length < q.limit && examined < MAX_EXAMINED) next = lo - 1;
  }
  return { items, ...(next >= lo ? { cursor: encodeCursor({ b: next + 1, l: lo }) } : {}), examined };
}
