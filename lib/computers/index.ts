import { z } from 'zod';
import { classifyComputer } from '../authz/classify';
import { decideOnComputer, type Actor, type DecisionContext } from '../authz/engine';
import { scopeQuerySchema, searchScope, type ScopeQuery } from '../authz/scoped-list';
import { escapeFilterValue, isGuid } from '../directory';
import { COMPUTER_ATTRIBUTES, fileTimeToIso, type ObjectFacts } from '../directory/objects';
import { notFound } from '../errors';
import { keyIdPrefixOf, RECOVERY_CLASS } from '../bitlocker/entries';

// Computer read views (console spec, Computer): never a password, never a never-manageable object.
export const computerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  dnsName: z.string().nullable(),
  os: z.string().nullable(),
  lastSignIn: z.string().nullable(),
  enabled: z.boolean(),
  lapsExpiry: z.string().nullable(),
  /** which LAPS manages it, from the expiration attribute it carries: Windows LAPS, legacy LAPS, none */
  lapsKind: z.enum(['windows', 'legacy']).nullable(),
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
    lapsKind: a['msLAPS-PasswordExpirationTime'] !== undefined ? 'windows' : a['ms-Mcs-AdmPwdExpirationTime'] !== undefined ? 'legacy' : null,
    protected: isVip,
    ou: parentDn(f.dn),
  };
}

/** The DN of an object's container: everything after its first unescaped comma. */
export function parentDn(dn: string): string {
  const m = /^(?:[^,\\]|\\.)*,(.*)$/.exec(dn);
  return m ? m[1] : '';
}

/** At most this many computers are found by one key id prefix (8 hex characters: a collision is rare). */
const MAX_BY_KEY = 20;

/**
 * Search by BitLocker key id (issue 33), the way a user reads it off the recovery screen: a query
 * of exactly 8 hexadecimal characters also finds the computers holding a recovery entry whose key
 * id starts with it. The entries are read with the console's read account (names only, never a
 * key); the computers they name are then searched like any other, within the operator's scope only
 * (searchScope: a computer outside it is not found, as for a name).
 */
async function computersByKeyIdPrefix(ctx: DecisionContext, q: string | undefined): Promise<string[]> {
  const prefix = q ? keyIdPrefixOf(q) : undefined;
  if (!prefix) return [];
  const found = await ctx.dir.search({ base: ctx.dir.baseDn, filter: `(&(objectClass=${RECOVERY_CLASS})(cn=*{${prefix}-*))`, attributes: ['objectGUID', 'cn'], max: MAX_BY_KEY });
  return [...new Set(found.entries.map((e) => parentDn(e.dn)).filter(Boolean))];
}

/** Detail view with display hints (the hints decide nothing: every action is decided again). */
export async function getComputer(ctx: DecisionContext, actor: Actor, guid: string, correlationId: string) {
  if (!isGuid(guid)) throw notFound();
  const d = await decideOnComputer(ctx, actor, 'computers.read', guid, { audit: true, correlationId });
  if (!d.allowed) throw notFound();
  // without the helpdesk (Helpdesk:Enabled=false) the LAPS routes do not exist: no hint offers them
  const hint = async (action: 'computers.laps.read' | 'computers.laps.expire' | 'computers.bitlocker.read') =>
    ctx.rt.config.Helpdesk.Enabled && (await decideOnComputer(ctx, actor, action, guid, { audit: false, correlationId })).allowed;
  const [revealLaps, expireLaps, revealBitlocker] = await Promise.all([hint('computers.laps.read'), hint('computers.laps.expire'), hint('computers.bitlocker.read')]);
  return { ...computerView(d.target, d.cls.kind === 'vip'), actions: { revealLaps, expireLaps, revealBitlocker } };
}

export const searchQuerySchema = scopeQuerySchema;

/**
 * Search, or without `q` enumerate the operator's scope (the one scoped list): a page of
 * Directory:MaxResults computers the operator may read, never-manageable ones left out.
 */
export async function searchComputers(ctx: DecisionContext, actor: Actor, query: ScopeQuery, masterKey: Buffer) {
  const [classCtx, byKey] = await Promise.all([ctx.classificationContext(), computersByKeyIdPrefix(ctx, query.q)]);
  const byKeyFilter = byKey.map((dn) => `(distinguishedName=${escapeFilterValue(dn)})`).join('');
  return searchScope(ctx, actor, query, masterKey, {
    kind: 'computers',
    readPermission: 'computers.read',
    filter: (q) => (q ? `(&(objectCategory=computer)(|(cn=*${escapeFilterValue(q)}*)(dNSHostName=*${escapeFilterValue(q)}*)${byKeyFilter}))` : '(objectCategory=computer)'),
    attributes: COMPUTER_ATTRIBUTES,
    pageSize: ctx.rt.config.Directory.MaxResults,
    classify: async (entries) => (await ctx.dir.withTokenGroups(entries)).map((facts) => ({ facts, cls: classifyComputer(facts, classCtx) })),
    view: (facts, cls) => computerView(facts, cls.kind === 'vip'),
  });
}
