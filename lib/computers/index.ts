import { z } from 'zod';
import { decideOnComputer, type Actor, type DecisionContext } from '../authz/engine';
import { classifyComputer, isBelow } from '../authz/classify';
import { openString, seal } from '../crypto/seal';
import { escapeFilterValue, isGuid } from '../directory';
import { COMPUTER_ATTRIBUTES, fileTimeToIso, withTokenGroups, type ObjectFacts } from '../directory/objects';
import { badRequest, notFound } from '../errors';

// Computer read views (console spec, Computer): never a password, never a never-manageable object.
export const computerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  dnsName: z.string().nullable(),
  os: z.string().nullable(),
  lastSignIn: z.string().nullable(),
  enabled: z.boolean(),
  lapsExpiry: z.string().nullable(),
  protected: z.boolean(),
  /** the OU the computer sits in (its parent DN), shown beside the name */
  ou: z.string(),
});
export type ComputerView = z.infer<typeof computerViewSchema>;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export function computerView(f: ObjectFacts, isVip: boolean): ComputerView {
  const a = f.attributes;
  return {
    id: f.guid,
    name: first(a.cn) ?? first(a.sAMAccountName)?.replace(/\$$/, '') ?? '',
    dnsName: first(a.dNSHostName) ?? null,
    os: first(a.operatingSystem) ?? null,
    // lastLogonTimestamp replicates lazily: it may lag up to about 14 days by design
    lastSignIn: fileTimeToIso(a.lastLogonTimestamp) ?? null,
    enabled: ((f.userAccountControl ?? 0) & 0x2) === 0,
    lapsExpiry: fileTimeToIso(a['msLAPS-PasswordExpirationTime']) ?? fileTimeToIso(a['ms-Mcs-AdmPwdExpirationTime']) ?? null,
    protected: isVip,
    ou: parentDn(f.dn),
  };
}

/** The DN of an object's container: everything after its first unescaped comma. */
export function parentDn(dn: string): string {
  const m = /^(?:[^,\\]|\\.)*,(.*)$/.exec(dn);
  return m ? m[1] : '';
}

/** Detail view with display hints (the hints decide nothing: every action is decided again). */
export async function getComputer(ctx: DecisionContext, actor: Actor, guid: string, correlationId: string) {
  if (!isGuid(guid)) throw notFound();
  const d = await decideOnComputer(ctx, actor, 'computers.read', guid, { audit: true, correlationId });
  if (!d.allowed) throw notFound();
  const hint = async (action: 'computers.laps.read' | 'computers.laps.expire') =>
    (await decideOnComputer(ctx, actor, action, guid, { audit: false, correlationId })).allowed;
  return { ...computerView(d.target, d.cls.kind === 'vip'), actions: { revealLaps: await hint('computers.laps.read'), expireLaps: await hint('computers.laps.expire') } };
}

export const searchQuerySchema = z.object({
  q: z.string().trim().max(64).optional(),
  ou: z.string().trim().max(1024).optional(),
  cursor: z.string().max(4096).optional(),
});

interface CursorState {
  op: string;
  q?: string;
  ou?: string;
  offset: number;
  exp: number;
}
const CURSOR_TTL_MS = 10 * 60_000;
const cursorAad = (operatorGuid: string) => `cursor:computers:${operatorGuid.toLowerCase()}`;

/**
 * Search, or without `q` enumerate the operator's scope: LDAP pages of Directory:PageSize, at most
 * Directory:SearchMaxResults (then `incomplete`), sorted by name; a page of Directory:MaxResults
 * computers the operator may read, never-manageable ones left out; `truncated` and an opaque
 * cursor (sealed, bound to this operator, valid 10 minutes) when there is more.
 */
export async function searchComputers(ctx: DecisionContext, actor: Actor, query: z.infer<typeof searchQuerySchema>, masterKey: Buffer) {
  let offset = 0;
  let { q, ou } = query;
  if (query.cursor) {
    let st: CursorState;
    try {
      st = JSON.parse(openString(masterKey, query.cursor, cursorAad(actor.identity.guid)));
    } catch {
      throw badRequest('invalid_cursor');
    }
    if (st.op !== actor.identity.guid || st.exp < Date.now()) throw badRequest('invalid_cursor');
    ({ q, ou, offset } = st);
  }
  const grants = (await ctx.grants(actor.rights)).filter((g) => g.permissions.has('computers.read'));
  let bases = [...new Set(grants.flatMap((g) => g.scopeDns))];
  if (ou) {
    // the filter narrows the scope, never widens it; an unknown, malformed or out-of-scope OU
    // answers like an empty one in scope (docs/decisions.md, the `ou` filter)
    const ouDn = await ctx.dir.filterOuDn(ou);
    bases = ouDn && bases.some((b) => b.toLowerCase() === ouDn.toLowerCase() || isBelow(ouDn, b)) ? [ouDn] : [];
  }
  bases = bases.filter((b) => !bases.some((o) => o !== b && isBelow(b, o)));
  const cfg = ctx.rt.config.Directory;
  const filter = q ? `(&(objectCategory=computer)(|(cn=*${escapeFilterValue(q)}*)(dNSHostName=*${escapeFilterValue(q)}*)))` : '(objectCategory=computer)';
  const creds = await ctx.dir.readCreds();
  let incomplete = false;
  const entries = [];
  for (const base of bases) {
    const left = cfg.SearchMaxResults - entries.length;
    if (left <= 0) {
      incomplete = true;
      break;
    }
    const page = await ctx.dir.pool.search(creds, base, { scope: 'sub', filter, attributes: COMPUTER_ATTRIBUTES, explicitBufferAttributes: ['objectGUID', 'objectSid'], max: left });
    incomplete ||= page.incomplete;
    entries.push(...page.entries);
  }
  const cn = (e: Record<string, unknown>) => String(Array.isArray(e.cn) ? e.cn[0] : (e.cn ?? ''));
  entries.sort((a, b) => cn(a as Record<string, unknown>).localeCompare(cn(b as Record<string, unknown>)));

  const classCtx = await ctx.classificationContext();
  const items: ComputerView[] = [];
  let i = offset;
  // classify in chunks: tokenGroups is one base read per computer
  while (i < entries.length && items.length < cfg.MaxResults) {
    const chunk = entries.slice(i, i + (cfg.MaxResults - items.length));
    for (const f of await withTokenGroups(ctx.dir, chunk)) {
      const cls = classifyComputer(f, classCtx);
      if ((cls.kind === 'standard' || cls.kind === 'vip') && grants.some((g) => g.scopeDns.some((s) => isBelow(f.dn, s)))) items.push(computerView(f, cls.kind === 'vip'));
    }
    i += chunk.length;
  }
  const truncated = i < entries.length;
  const cursor = truncated
    ? seal(masterKey, JSON.stringify({ op: actor.identity.guid, q, ou, offset: i, exp: Date.now() + CURSOR_TTL_MS } satisfies CursorState), cursorAad(actor.identity.guid))
    : undefined;
  return { items, truncated, incomplete, ...(cursor ? { cursor } : {}) };
}
