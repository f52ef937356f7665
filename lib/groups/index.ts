import { z } from 'zod';
import { hintOf } from '../actions/common';
import { membersConfirmation } from '../actions/group-management';
import { classifyComputer, classifyGroup, classifyUser, type TargetClass } from '../authz/classify';
import { decideOnGroup, type Actor, type DecisionContext } from '../authz/engine';
import { scopeQuerySchema, searchScope, type ScopeQuery } from '../authz/scoped-list';
import { escapeFilterValue, isGuid } from '../directory';
import { GROUP_ATTRIBUTES, isTrue, USER_ATTRIBUTES, type ObjectFacts } from '../directory/objects';
import { notFound } from '../errors';

// Group read views (groups.read): search, detail, members; never a never-manageable group.

export const groupViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  mail: z.string().nullable(),
  securityGroup: z.boolean(),
  protected: z.boolean(),
});
export type GroupView = z.infer<typeof groupViewSchema>;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;

export function groupView(f: ObjectFacts, cls: TargetClass): GroupView {
  const a = f.attributes;
  return {
    id: f.guid,
    name: first(a.sAMAccountName) ?? first(a.cn) ?? '',
    description: first(a.description),
    mail: first(a.mail),
    securityGroup: (Number(first(a.groupType) ?? 0) & 0x80000000) !== 0,
    protected: cls.kind === 'vip',
  };
}

async function classifyGroups(ctx: DecisionContext, entries: ObjectFacts[]) {
  const classCtx = await ctx.classificationContext();
  // the nesting reads are independent: they run together
  const parents = await Promise.all(entries.map((facts) => ctx.dir.parentGroupSids(facts.dn)));
  return entries.map((facts, i) => ({
    facts,
    cls: classifyGroup({ ...facts, parentSids: parents[i], criticalSystemObject: isTrue(facts.attributes.isCriticalSystemObject) }, classCtx) as TargetClass,
  }));
}

export const groupSearchQuerySchema = scopeQuerySchema;

/** Search groups in scope: Directory:MaxResults (200) per page. */
export async function searchGroups(ctx: DecisionContext, actor: Actor, query: ScopeQuery, masterKey: Buffer) {
  return searchScope(ctx, actor, query, masterKey, {
    kind: 'groups',
    readPermission: 'groups.read',
    filter: (q) => (q ? `(&(objectClass=group)(|(cn=*${escapeFilterValue(q)}*)(sAMAccountName=*${escapeFilterValue(q)}*)))` : '(objectClass=group)'),
    attributes: GROUP_ATTRIBUTES,
    pageSize: ctx.rt.config.Directory.MaxResults,
    classify: (entries) => classifyGroups(ctx, entries),
    view: groupView,
  });
}

export async function getGroup(ctx: DecisionContext, actor: Actor, guid: string, correlationId: string) {
  if (!isGuid(guid)) throw notFound();
  const d = await decideOnGroup(ctx, actor, 'groups.read', guid, { audit: true, correlationId });
  if (!d.allowed) throw notFound();
  const actions: Record<string, ReturnType<typeof hintOf>> = {};
  for (const a of ['groups.members.write', 'groups.owned.members.write', 'groups.attributes.write', 'groups.delete'] as const) actions[a] = hintOf(await decideOnGroup(ctx, actor, a, guid, { audit: false, correlationId }));
  return { ...groupView(d.target, d.cls), dn: d.target.dn, managedBy: first(d.target.attributes.managedBy), info: first(d.target.attributes.info), actions };
}

export interface MemberView {
  id: string;
  kind: 'user' | 'group' | 'computer';
  name: string;
  displayName: string | null;
  /** inside a managed OU and manageable (it may still be outside the operator's own scope) */
  managed: boolean;
  protected: boolean;
}

/**
 * Members of a group, at most Directory:MaxResults (then `truncated`). Never-manageable members
 * are left out and only counted (`omitted`): their names are not the operator's to see here.
 */
export async function groupMembers(ctx: DecisionContext, actor: Actor, guid: string, correlationId: string) {
  if (!isGuid(guid)) throw notFound();
  const d = await decideOnGroup(ctx, actor, 'groups.read', guid, { audit: true, correlationId });
  if (!d.allowed) throw notFound();
  const group = await ctx.dir.readAttributes(d.target.dn, ['member']);
  const raw = Object.entries(group ?? {}).find(([k]) => k.toLowerCase().startsWith('member'))?.[1];
  const dns = (raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)]).sort();
  const max = ctx.rt.config.Directory.MaxResults;
  const classCtx = await ctx.classificationContext();
  const items: MemberView[] = [];
  let omitted = 0;
  for (const dn of dns.slice(0, max)) {
    const e = await ctx.dir.readFactsByDn(dn, [...new Set([...USER_ATTRIBUTES, ...GROUP_ATTRIBUTES])]).catch(() => undefined);
    if (!e) continue; // a foreign security principal or a deleted object
    const classes = e.objectClasses.map((c) => c.toLowerCase());
    let facts: ObjectFacts;
    let cls: TargetClass;
    let kind: MemberView['kind'];
    if (classes.includes('group')) {
      facts = e;
      cls = classifyGroup({ ...facts, parentSids: await ctx.dir.parentGroupSids(e.dn), criticalSystemObject: isTrue(facts.attributes.isCriticalSystemObject) }, classCtx);
      kind = 'group';
    } else {
      [facts] = await ctx.dir.withTokenGroups([e]);
      const sam = facts.attributes.sAMAccountName;
      kind = classes.includes('computer') ? 'computer' : 'user';
      cls = kind === 'computer' ? classifyComputer(facts, classCtx) : classifyUser({ ...facts, samAccountName: Array.isArray(sam) ? sam[0] : sam, criticalSystemObject: isTrue(facts.attributes.isCriticalSystemObject) }, classCtx);
    }
    if (cls.kind === 'never') {
      omitted++;
      continue;
    }
    const a = facts.attributes;
    items.push({ id: facts.guid, kind, name: first(a.sAMAccountName) ?? first(a.cn) ?? '', displayName: first(a.displayName), managed: cls.kind !== 'unmanaged', protected: cls.kind === 'vip' });
  }
  // what a groups.delete of a group with members must send back: this exact member list was seen
  return { items, omitted, truncated: dns.length > max, count: dns.length, confirmMembers: dns.length ? membersConfirmation(dns) : undefined };
}
