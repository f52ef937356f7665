import { isTrue, USER_ATTRIBUTES, type ObjectFacts } from '../directory/objects';
import { alwaysRequired, isApprovable, requiresApproval, type ApprovalSource } from './approval-rules';
import { classifyComputer, classifyGroup, classifyUser, isAtOrBelow, isBelow, type TargetClass } from './classify';
import { DecisionContext, isOwnAccount, type OperatorRef, type ScopedGrant } from './context';
import type { Permission } from './permissions';
import { REQUIRES, type OperatorRights } from './rights';
import { AppendPastDeadline, type AuditInput } from '../audit';
import { overloaded } from '../errors';
import { requestDeadline } from '../request-scope';

export { DecisionContext, type DecisionHost, type OperatorRef, type ScopedGrant } from './context';

// The one authorization decision of the console: operator, action, target GUID → allow or refuse
// with a reason, decided on fresh facts read from the directory by GUID, audited `authz.decision`.

export interface Actor {
  identity: OperatorRef;
  rights: OperatorRights;
  ip: string;
}

export type TargetKind = 'computer' | 'user' | 'group';

export type Decision =
  | { allowed: true; target: ObjectFacts; cls: TargetClass; delegationId: string; vipManage: boolean; permissions: Set<Permission> }
  /** `approval` is set when the reason is `approval_required`: why, and under which delegation */
  | { allowed: false; status: 404 | 403; reason: string; target?: ObjectFacts; cls?: TargetClass; approval?: ApprovalSource };

/**
 * How approvals weigh on a decision: `direct` (a route, or a request being filed: approvable
 * actions the operator holds only with approval answer `approval_required`); `approver` (the
 * approver executing a request: the instance's 'always require' list is what the request
 * satisfies, but an approver who holds the action only with approval is not directly allowed).
 */
export type ApprovalMode = 'direct' | 'approver';

const inScope = (dn: string, g: ScopedGrant) => g.scopeDns.some((s) => isBelow(dn, s));

/** Which of these permissions one delegation covering `dn` holds together (same-delegation rules). */
function bestGrant(grants: ScopedGrant[], dn: string, needs: Permission[]): ScopedGrant | undefined {
  return grants.find((g) => inScope(dn, g) && needs.every((p) => g.permissions.has(p)));
}

const READ_PERMISSION: Record<TargetKind, Permission> = { computer: 'computers.read', user: 'users.read', group: 'groups.read' };

/** Fresh facts of the target, read by GUID, and its class for this kind (undefined: no such object). */
export const classifyTarget = (ctx: DecisionContext, kind: TargetKind, guid: string) => readAndClassify(ctx, kind, guid);

async function readAndClassify(ctx: DecisionContext, kind: TargetKind, guid: string): Promise<{ target: ObjectFacts; cls: TargetClass } | undefined> {
  // the target and the OUs that classify it are read together (both fresh, by GUID)
  if (kind === 'group') {
    const [classCtx, g] = await Promise.all([ctx.classificationContext(), ctx.dir.readGroup(guid)]);
    if (!g) return undefined;
    return { target: g, cls: classifyGroup({ ...g, criticalSystemObject: isTrue(g.attributes.isCriticalSystemObject) }, classCtx) };
  }
  const [classCtx, target] = await Promise.all([ctx.classificationContext(), ctx.dir.readObject(guid, kind === 'user' ? USER_ATTRIBUTES : undefined)]);
  if (!target) return undefined;
  if (kind === 'computer') return { target, cls: classifyComputer(target, classCtx) };
  const sam = target.attributes.sAMAccountName;
  return { target, cls: classifyUser({ ...target, samAccountName: Array.isArray(sam) ? sam[0] : sam, criticalSystemObject: isTrue(target.attributes.isCriticalSystemObject) }, classCtx) };
}

/**
 * The one decision on a directory object (computer, user or group), on fresh facts read by GUID:
 * the kind's read permission (`computers.read`, `users.read`, `groups.read`) in a delegation
 * covering the object, else it answers like an unknown one (404); an action also needs the read
 * permission in the same delegation, and `vip.manage` there too for a protected object; nobody
 * acts on their own account; never-manageable and unmanaged objects answer 404. An approvable
 * action held only with approval (or in the instance's 'always require' list) answers
 * `approval_required` (see ApprovalMode). Audited `authz.decision` when asked.
 */
export async function decideOn(
  ctx: DecisionContext,
  actor: Actor,
  kind: TargetKind,
  action: Permission,
  guid: string,
  opts: { audit: boolean; correlationId: string; approval?: ApprovalMode; ticket?: string },
): Promise<Decision> {
  const decision = await decideUnrecorded(ctx, actor, kind, action, guid, opts.approval);
  if (opts.audit) await recordDecision(ctx, actor, kind, action, guid, decision, opts);
  return decision;
}

/** The decision alone (its facts read, nothing written): the caller records it with `recordDecision` before acting on it. */
export const decideUnrecorded = (ctx: DecisionContext, actor: Actor, kind: TargetKind, action: Permission, guid: string, approval: ApprovalMode = 'direct') =>
  decide(ctx, actor, kind, action, guid, approval);

/** The decision's `authz.decision` row. */
export async function recordDecision(
  ctx: DecisionContext,
  actor: Actor,
  kind: TargetKind,
  action: Permission,
  guid: string,
  decision: Decision,
  opts: { correlationId: string; ticket?: string },
): Promise<void> {
  // a read's decision is written within its deadline or not at all: the read is then refused
  // 503 `overloaded`, before anything is shown (issue 28)
  try {
    await ctx.rt.audit.append(decisionAuditRow(actor, kind, action, guid, decision, opts), { deadline: requestDeadline() });
  } catch (e) {
    if (e instanceof AppendPastDeadline) throw overloaded('deadline', e.deadline.retryAfterSeconds);
    throw e;
  }
}

/** The `authz.decision` row of a decision (written by `recordDecision`, or with the action's own row in one append). */
export function decisionAuditRow(actor: Actor, kind: TargetKind, action: Permission, guid: string, decision: Decision, opts: { correlationId: string; ticket?: string }): AuditInput {
  const t = decision.target;
  const reason = decision.allowed
    ? `delegation:${decision.delegationId}`
    : decision.approval
      ? `approval_required:${decision.approval.kind === 'always' ? 'always' : `delegation:${decision.approval.delegationId}`}`
      : decision.reason;
  return {
    event: 'authz.decision',
    outcome: decision.allowed ? 'allowed' : 'denied',
    reason,
    actor: { id: actor.identity.guid, name: actor.identity.username, provider: actor.identity.provider, ip: actor.ip },
    target: { id: guid, ...(t ? { name: String(t.attributes.cn ?? ''), dn: t.dn } : {}), kind },
    ...(opts.ticket ? { ticket: opts.ticket } : {}),
    correlationId: opts.correlationId,
    details: { action, ...(decision.cls ? { class: decision.cls.kind === 'never' ? `never:${decision.cls.why}` : decision.cls.kind } : {}) },
  };
}

/** decideOnComputer: `decideOn` for computers (LAPS actions need `computers.read` in the same delegation). */
export const decideOnComputer = (ctx: DecisionContext, actor: Actor, action: Permission, guid: string, opts: { audit: boolean; correlationId: string; ticket?: string }) =>
  decideOn(ctx, actor, 'computer', action, guid, opts);
export const decideOnUser = (ctx: DecisionContext, actor: Actor, action: Permission, guid: string, opts: { audit: boolean; correlationId: string; approval?: ApprovalMode }) =>
  decideOn(ctx, actor, 'user', action, guid, opts);
export const decideOnGroup = (ctx: DecisionContext, actor: Actor, action: Permission, guid: string, opts: { audit: boolean; correlationId: string; approval?: ApprovalMode }) =>
  decideOn(ctx, actor, 'group', action, guid, opts);

async function decide(ctx: DecisionContext, actor: Actor, kind: TargetKind, action: Permission, guid: string, mode: ApprovalMode): Promise<Decision> {
  const read = await readAndClassify(ctx, kind, guid);
  if (!read) return { allowed: false, status: 404, reason: 'not_found' };
  const { target, cls } = read;
  if (cls.kind === 'never') return { allowed: false, status: 404, reason: `never_manageable:${cls.why}`, target, cls };
  if (cls.kind === 'unmanaged') return { allowed: false, status: 404, reason: 'out_of_scope', target, cls };
  const readPermission = READ_PERMISSION[kind];
  const grants = await ctx.grants(actor.rights);
  if (!bestGrant(grants, target.dn, [readPermission])) return { allowed: false, status: 404, reason: 'out_of_scope', target, cls };
  if (action === readPermission) {
    const g = bestGrant(grants, target.dn, [readPermission])!;
    return { allowed: true, target, cls, delegationId: g.delegationId, vipManage: g.permissions.has('vip.manage'), permissions: g.permissions };
  }
  // nobody acts on their own account (console spec, user classification)
  if (kind === 'user' && isOwnAccount(actor.identity, target.guid)) return { allowed: false, status: 403, reason: 'own_account', target, cls };
  // "Delegation must also hold" (console spec, Moves, renames and groups): users.rename.login needs users.rename
  const needs: Permission[] = [...new Set<Permission>([readPermission, action, ...(REQUIRES[action] ? [REQUIRES[action]!] : [])])];
  // groups.delete acts on standard groups only, whatever vip.manage says
  if (STANDARD_ONLY.has(action) && cls.kind !== 'standard') return { allowed: false, status: 403, reason: 'not_a_standard_group', target, cls };
  const vipNeeded = cls.kind === 'vip';
  const holding = grants.filter((g) => inScope(target.dn, g) && [...needs, ...(vipNeeded ? (['vip.manage'] as Permission[]) : [])].every((p) => g.permissions.has(p)));
  if (!holding.length) {
    const reason = vipNeeded && bestGrant(grants, target.dn, needs) ? 'vip_requires_vip_manage' : `missing_permission:${action}`;
    return { allowed: false, status: 403, reason, target, cls };
  }
  // groups.owned.members.write: only groups whose manager (managedBy) is the operator's own account, now
  if (action === 'groups.owned.members.write') {
    const manager = String(([] as string[]).concat(target.attributes.managedBy ?? [])[0] ?? '');
    const own = await ctx.dir.dnOfGuid(actor.identity.guid);
    if (!own || manager.toLowerCase() !== own.toLowerCase()) return { allowed: false, status: 403, reason: 'not_group_owner', target, cls };
  }
  // an action no approval can concern (LAPS, reads) is decided without reading the approval settings
  if (!isApprovable(action)) {
    const g = holding[0];
    return { allowed: true, target, cls, delegationId: g.delegationId, vipManage: g.permissions.has('vip.manage'), permissions: g.permissions };
  }
  const approvals = await ctx.approvalSettings();
  // approvals never widen a delegation: they only narrow what it allows directly
  if (mode === 'direct' && alwaysRequired(approvals, action)) return { allowed: false, status: 403, reason: 'approval_required', target, cls, approval: { kind: 'always' } };
  const direct = holding.find((g) => !requiresApproval(approvals, action, g.delegationId));
  if (!direct) return { allowed: false, status: 403, reason: 'approval_required', target, cls, approval: { kind: 'delegation', delegationId: holding[0].delegationId } };
  return { allowed: true, target, cls, delegationId: direct.delegationId, vipManage: direct.permissions.has('vip.manage'), permissions: direct.permissions };
}

const STANDARD_ONLY = new Set<Permission>(['groups.delete']);

/** An OU as the target of a move (destination) or a group creation. */
export type OuDecision =
  | { allowed: true; ou: { dn: string; guid: string }; delegationId: string }
  | { allowed: false; status: 404 | 403; reason: string; ou?: { dn: string; guid: string } };

/**
 * The decision on an OU an action puts an object into: the destination of `users.move`, the OU of
 * `groups.create`. Read fresh by GUID. Unknown, not an organizationalUnit (a container that is not
 * an OU), at or below a Tier 0/1 OU, or outside every managed OU and the operator's read scope:
 * 404, like an unknown object. In scope without the action: 403 `missing_permission:<action>`;
 * a protected (VIP) object moved there also needs `vip.manage` in that delegation. Audited
 * `authz.decision` (target kind `ou`).
 */
export async function decideOnOu(
  ctx: DecisionContext,
  actor: Actor,
  action: 'users.move' | 'groups.create',
  ouGuid: string,
  opts: { correlationId: string; vip?: boolean; audit: boolean },
): Promise<OuDecision> {
  const d = await decideOuUnrecorded(ctx, actor, action, ouGuid, opts.vip ?? false);
  if (opts.audit) {
    await ctx.rt.audit.append({
      event: 'authz.decision',
      outcome: d.allowed ? 'allowed' : 'denied',
      reason: d.allowed ? `delegation:${d.delegationId}` : d.reason,
      actor: { id: actor.identity.guid, name: actor.identity.username, provider: actor.identity.provider, ip: actor.ip },
      target: { id: ouGuid, kind: 'ou', ...(d.ou ? { dn: d.ou.dn } : {}) },
      correlationId: opts.correlationId,
      details: { action, ...(opts.vip ? { vip: true } : {}) },
    });
  }
  return d;
}

async function decideOuUnrecorded(ctx: DecisionContext, actor: Actor, action: 'users.move' | 'groups.create', ouGuid: string, vip: boolean): Promise<OuDecision> {
  const dn = await ctx.dir.dnOfGuid(ouGuid);
  const facts = dn ? await ctx.dir.readFactsByDn(dn, ['objectClass']) : undefined;
  if (!dn || !facts) return { allowed: false, status: 404, reason: 'not_found' };
  const ou = { dn: facts.dn, guid: facts.guid };
  if (!facts.objectClasses.some((c) => c.toLowerCase() === 'organizationalunit')) return { allowed: false, status: 404, reason: 'never_manageable:not_an_ou', ou };
  const classCtx = await ctx.classificationContext();
  if (classCtx.tierOuDns.some((t) => isAtOrBelow(ou.dn, t))) return { allowed: false, status: 404, reason: 'never_manageable:tier0_ou', ou };
  if (!classCtx.managedOuDns.some((m) => isAtOrBelow(ou.dn, m))) return { allowed: false, status: 404, reason: 'out_of_scope', ou };
  const readPermission: Permission = action === 'users.move' ? 'users.read' : 'groups.read';
  const covering = (await ctx.grants(actor.rights)).filter((g) => g.scopeDns.some((s) => isAtOrBelow(ou.dn, s)));
  if (!covering.some((g) => g.permissions.has(readPermission))) return { allowed: false, status: 404, reason: 'out_of_scope', ou };
  const withAction = covering.filter((g) => g.permissions.has(readPermission) && g.permissions.has(action));
  if (!withAction.length) return { allowed: false, status: 403, reason: `missing_permission:${action}`, ou };
  const g = vip ? withAction.find((x) => x.permissions.has('vip.manage')) : withAction[0];
  if (!g) return { allowed: false, status: 403, reason: 'vip_requires_vip_manage', ou };
  return { allowed: true, ou, delegationId: g.delegationId };
}

/** The actor of a signed-in request (the route pipeline has loaded the operator and their rights). */
export function actorOf(c: { operator?: OperatorRef; rights?: OperatorRights; sourceIp: string }): Actor {
  return { identity: c.operator!, rights: c.rights!, ip: c.sourceIp };
}
