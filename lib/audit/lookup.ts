// The viewer's lookup items: beside each row, in the same transaction, one small item per value a
// filter may name (actor, target, event), keyed `AUDITIX#<chain>#<field>#<value>` / the row's
// sequence. A filter then reads one partition by key instead of scanning the chain. They are not
// part of the hash chain: the rows they point to are what the viewer returns and what verifies.

export type LookupField = 'actor' | 'target' | 'event';

/** The normalized values of one row a filter can name (lower case; at most 256 characters each). */
export interface LookupFacts {
  event: string;
  outcome: string;
  actor: string[];
  target: string[];
}

export const MAX_LOOKUP_VALUE = 256;

export const normalizeLookup = (v: string) => v.trim().toLowerCase();

const keep = (values: Array<string | undefined>) =>
  [...new Set(values.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map(normalizeLookup))].filter((v) => v.length <= MAX_LOOKUP_VALUE);

export function lookupFacts(row: { event: string; outcome: string; actor?: { id?: string; name?: string }; target?: { id?: string; name?: string; dn?: string } }): LookupFacts {
  return {
    event: row.event,
    outcome: row.outcome,
    // an operator is found by objectGUID or by sign-in name; an object by id (GUID) or name
    actor: keep([row.actor?.id, row.actor?.name]),
    target: keep([row.target?.id, row.target?.name]),
  };
}

export const lookupPk = (chain: string, field: LookupField, value: string) => `AUDITIX#${chain}#${field}#${field === 'event' ? value : normalizeLookup(value)}`;

/** Every lookup partition a row belongs to. */
export function lookupPartitions(chain: string, f: LookupFacts): string[] {
  return [...f.actor.map((v) => lookupPk(chain, 'actor', v)), ...f.target.map((v) => lookupPk(chain, 'target', v)), ...(f.event.length <= MAX_LOOKUP_VALUE ? [lookupPk(chain, 'event', f.event)] : [])];
}

export interface LookupFilter {
  actor?: string;
  target?: string;
  event?: string;
  outcome?: string;
}

/** Does a row (by its lookup facts) match every filter given? */
export function matchesLookup(f: LookupFacts, q: LookupFilter): boolean {
  if (q.event !== undefined && f.event !== q.event) return false;
  if (q.outcome !== undefined && f.outcome !== q.outcome) return false;
  if (q.actor !== undefined && !f.actor.includes(normalizeLookup(q.actor))) return false;
  if (q.target !== undefined && !f.target.includes(normalizeLookup(q.target))) return false;
  return true;
}

/** One row as a lookup item points to it. */
export interface LookupEntry {
  seq: number;
  f: LookupFacts;
}

/**
 * The lookup items of rows appended together (one transaction, the same `at`: a decision and its
 * outcome): one item per partition, keyed by the first of those rows in that partition, pointing
 * to each of them (`also`: the others, newest last). A reveal's two rows share their actor and
 * target items: 6 items instead of 10. A row appended alone gets the items it always had.
 */
export function groupLookups(chain: string, rows: LookupEntry[]): Array<{ pk: string; first: LookupEntry; also: LookupEntry[] }> {
  const byPk = new Map<string, { pk: string; first: LookupEntry; also: LookupEntry[] }>();
  for (const row of rows) {
    for (const pk of lookupPartitions(chain, row.f)) {
      const item = byPk.get(pk);
      if (item) item.also.push(row);
      else byPk.set(pk, { pk, first: row, also: [] });
    }
  }
  return [...byPk.values()];
}

/** The rows a stored lookup item points to (an item written before `also` points to one). */
export const entriesOfLookup = (item: { seq: number; f: LookupFacts; also?: LookupEntry[] }): LookupEntry[] => [{ seq: item.seq, f: item.f }, ...(item.also ?? [])];
