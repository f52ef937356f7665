import { z } from 'zod';
import { hintOf, type ActionHint } from '../actions/common';
import { APPROVABLE_ACTIONS } from '../approvals/settings';
import { classifyUser, type TargetClass } from '../authz/classify';
import { decideOnUser, type Actor, type DecisionContext } from '../authz/engine';
import { scopeQuerySchema, searchScope, type ScopeQuery } from '../authz/scoped-list';
import { escapeFilterValue, isGuid } from '../directory';
import { fileTimeToIso, isTrue, USER_ATTRIBUTES, type ObjectFacts } from '../directory/objects';
import { notFound } from '../errors';
import type { Directory } from '../directory';

export { hintOf, type ActionHint };

// User read views (users.read): never a password, never a never-manageable account.

export const userViewSchema = z.object({
  id: z.string(),
  username: z.string(),
  upn: z.string().nullable(),
  displayName: z.string().nullable(),
  givenName: z.string().nullable(),
  sn: z.string().nullable(),
  mail: z.string().nullable(),
  telephoneNumber: z.string().nullable(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  lockedOut: z.boolean(),
  lastSignIn: z.string().nullable(),
  passwordLastSet: z.string().nullable(),
  protected: z.boolean(),
});
export type UserView = z.infer<typeof userViewSchema>;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;

export function userView(f: ObjectFacts, cls: TargetClass): UserView {
  const a = f.attributes;
  const uac = f.userAccountControl ?? 0;
  const computed = Number(first(a['msDS-User-Account-Control-Computed']) ?? 0);
  const lockout = first(a.lockoutTime);
  return {
    id: f.guid,
    username: first(a.sAMAccountName) ?? '',
    upn: first(a.userPrincipalName),
    displayName: first(a.displayName),
    givenName: first(a.givenName),
    sn: first(a.sn),
    mail: first(a.mail),
    telephoneNumber: first(a.telephoneNumber),
    description: first(a.description),
    enabled: (uac & 0x2) === 0,
    lockedOut: (computed & 0x10) !== 0 || (!!lockout && lockout !== '0' && a['msDS-User-Account-Control-Computed'] === undefined),
    // lastLogonTimestamp replicates lazily: it may lag up to about 14 days by design
    lastSignIn: fileTimeToIso(a.lastLogonTimestamp) ?? null,
    passwordLastSet: fileTimeToIso(a.pwdLastSet) ?? null,
    protected: cls.kind === 'vip',
  };
}

/**
 * What a helpdesk asks about a sign-in problem. `lockedOutAt` replicates urgently (every DC says
 * the same); `badPasswordCount` and `lastBadPassword` are kept by each DC for itself and come from
 * the DC that answered the read, named in `dc` (docs/decisions.md, issue 29).
 */
export const signInFactsSchema = z.object({
  lockedOutAt: z.string().nullable(),
  badPasswordCount: z.number().int().nullable(),
  lastBadPassword: z.string().nullable(),
  dc: z.string().nullable(),
});
export const userGroupSchema = z.object({ name: z.string(), dn: z.string() });
const SIGN_IN_ATTRIBUTES = ['lockoutTime', 'badPwdCount', 'badPasswordTime'];

export async function signInFacts(dir: Directory, dn: string, lockedOut: boolean): Promise<z.infer<typeof signInFactsSchema>> {
  const read = dir.readAttributesWithDc ? await dir.readAttributesWithDc(dn, SIGN_IN_ATTRIBUTES) : { dc: null, entry: await dir.readAttributes(dn, SIGN_IN_ATTRIBUTES) };
  const a = (read.entry ?? {}) as Record<string, string | string[] | undefined>;
  const count = first(a.badPwdCount);
  return {
    lockedOutAt: lockedOut ? (fileTimeToIso(a.lockoutTime) ?? null) : null,
    badPasswordCount: count !== null && /^\d+$/.test(count) ? Number(count) : null,
    lastBadPassword: fileTimeToIso(a.badPasswordTime) ?? null,
    dc: read.entry ? read.dc : null,
  };
}

const rdnValue = (dn: string) => (/^[^=]+=((?:\\.|[^,\\])*)/.exec(dn)?.[1] ?? dn).replace(/\\(.)/g, '$1');
/** The groups the user is a direct member of (memberOf; the primary group is not listed there), by name. */
export const userGroups = (memberOf: string[] | undefined) => (memberOf ?? []).map((dn) => ({ name: rdnValue(dn), dn })).sort((x, y) => x.name.localeCompare(y.name));

/** Detail view with display hints (the hints decide nothing: every action is decided again). */
export async function getUser(ctx: DecisionContext, actor: Actor, guid: string, correlationId: string) {
  if (!isGuid(guid)) throw notFound();
  const d = await decideOnUser(ctx, actor, 'users.read', guid, { audit: true, correlationId });
  if (!d.allowed) throw notFound();
  const actions: Record<string, ActionHint> = {};
  for (const a of [...APPROVABLE_ACTIONS.filter((x) => x.startsWith('users.')), 'users.move', 'users.rename', 'users.rename.login'] as const) actions[a] = hintOf(await decideOnUser(ctx, actor, a, guid, { audit: false, correlationId }));
  // without the helpdesk (Helpdesk:Enabled=false) there is no password service to reset with
  if (!ctx.rt.config.Helpdesk.Enabled) actions['users.password.reset'] = 'no';
  const view = userView(d.target, d.cls);
  return { ...view, dn: d.target.dn, cn: first(d.target.attributes.cn), signIn: await signInFacts(ctx.dir, d.target.dn, view.lockedOut), groups: userGroups(d.target.memberOf), actions };
}

export const userSearchQuerySchema = scopeQuerySchema;
/** Users list page: 50 rows (console spec, Limits); the cursor loads the next 50. */
export const USERS_PAGE = 50;

export async function searchUsers(ctx: DecisionContext, actor: Actor, query: ScopeQuery, masterKey: Buffer, opts: { pageSize?: number; only?: string } = {}) {
  const classCtx = await ctx.classificationContext();
  // `only`: an extra LDAP filter the users must also match (watch lists)
  const only = opts.only ?? '';
  return searchScope(ctx, actor, query, masterKey, {
    kind: 'users',
    readPermission: 'users.read',
    filter: (q) => {
      const base = `(&(objectCategory=person)(objectClass=user)${only})`;
      if (!q) return base;
      const v = escapeFilterValue(q);
      return `(&(objectCategory=person)(objectClass=user)${only}(|(cn=*${v}*)(sAMAccountName=*${v}*)(displayName=*${v}*)(mail=*${v}*)(userPrincipalName=*${v}*)))`;
    },
    attributes: USER_ATTRIBUTES,
    pageSize: opts.pageSize ?? USERS_PAGE,
    classify: async (entries) =>
      (await ctx.dir.withTokenGroups(entries)).map((facts) => {
        const sam = facts.attributes.sAMAccountName;
        return { facts, cls: classifyUser({ ...facts, samAccountName: Array.isArray(sam) ? sam[0] : sam, criticalSystemObject: isTrue(facts.attributes.isCriticalSystemObject) }, classCtx) };
      }),
    view: userView,
  });
}
