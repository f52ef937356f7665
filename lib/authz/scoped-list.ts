import { z } from 'zod';
import { openString, seal } from '../crypto/seal';
import type { ObjectFacts } from '../directory';
import { badRequest } from '../errors';
import { isBelow, type TargetClass } from './classify';
import type { Actor, DecisionContext } from './engine';
import type { Permission } from './permissions';

// The one scoped list of users, groups and computers: search, or without `q` enumerate the
// operator's scope: LDAP pages of Directory:PageSize, at most Directory:SearchMaxResults (then
// `incomplete`), sorted by name, a page of `pageSize` objects the operator may read (never-manageable
// ones left out), `truncated` with an opaque cursor (sealed, bound to the operator and the kind,
// valid 10 minutes) when there is more.

export const scopeQuerySchema = z.object({
  q: z.string().trim().max(64).optional(),
  ou: z.string().trim().max(1024).optional(),
  cursor: z.string().max(4096).optional(),
});
export type ScopeQuery = z.infer<typeof scopeQuerySchema>;

interface CursorState {
  op: string;
  q?: string;
  ou?: string;
  offset: number;
  exp: number;
}
const CURSOR_TTL_MS = 10 * 60_000;

export interface ScopeSearch<V> {
  kind: 'users' | 'groups' | 'computers';
  readPermission: Permission;
  filter: (q?: string) => string;
  attributes: string[];
  pageSize: number;
  /** classify a page of entries (reads their group facts) */
  classify: (entries: ObjectFacts[]) => Promise<Array<{ facts: ObjectFacts; cls: TargetClass }>>;
  view: (facts: ObjectFacts, cls: TargetClass) => V;
}

export async function searchScope<V>(ctx: DecisionContext, actor: Actor, query: ScopeQuery, masterKey: Buffer, s: ScopeSearch<V>) {
  const aad = `cursor:${s.kind}:${actor.identity.guid.toLowerCase()}`;
  let offset = 0;
  let { q, ou } = query;
  if (query.cursor) {
    let st: CursorState;
    try {
      st = JSON.parse(openString(masterKey, query.cursor, aad));
    } catch {
      throw badRequest('invalid_cursor');
    }
    if (st.op !== actor.identity.guid || st.exp < Date.now()) throw badRequest('invalid_cursor');
    ({ q, ou, offset } = st);
  }
  const grants = (await ctx.grants(actor.rights)).filter((g) => g.permissions.has(s.readPermission));
  let bases = [...new Set(grants.flatMap((g) => g.scopeDns))];
  if (ou) {
    // the filter narrows the scope, never widens it; an unknown, malformed or out-of-scope OU
    // answers like an empty one in scope (docs/decisions.md, the `ou` filter)
    const ouDn = await ctx.dir.filterOuDn(ou);
    bases = ouDn && bases.some((b) => b.toLowerCase() === ouDn.toLowerCase() || isBelow(ouDn, b)) ? [ouDn] : [];
  }
  bases = bases.filter((b) => !bases.some((o) => o !== b && isBelow(b, o)));
  const cfg = ctx.rt.config.Directory;
  let incomplete = false;
  const entries: ObjectFacts[] = [];
  for (const base of bases) {
    const left = cfg.SearchMaxResults - entries.length;
    if (left <= 0) {
      incomplete = true;
      break;
    }
    const page = await ctx.dir.search({ base, filter: s.filter(q), attributes: s.attributes, max: left });
    incomplete ||= page.incomplete;
    entries.push(...page.entries);
  }
  const name = (e: ObjectFacts) => String([e.attributes.cn ?? ''].flat()[0] ?? '');
  entries.sort((a, b) => name(a).localeCompare(name(b)));

  const items: V[] = [];
  let i = offset;
  while (i < entries.length && items.length < s.pageSize) {
    const chunk = entries.slice(i, i + (s.pageSize - items.length));
    for (const { facts, cls } of await s.classify(chunk)) {
      if ((cls.kind === 'standard' || cls.kind === 'vip') && grants.some((g) => g.scopeDns.some((d) => isBelow(facts.dn, d)))) items.push(s.view(facts, cls));
    }
    i += chunk.length;
  }
  const truncated = i < entries.length;
  const cursor = truncated ? seal(masterKey, JSON.stringify({ op: actor.identity.guid, q, ou, offset: i, exp: Date.now() + CURSOR_TTL_MS } satisfies CursorState), aad) : undefined;
  return { items, truncated, incomplete, ...(cursor ? { cursor } : {}) };
}
