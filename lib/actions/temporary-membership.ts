import { decideOn, type Actor, type Decision, type DecisionContext } from '../authz/engine';
import { directoryApiError, isDirectoryError, isGuid } from '../directory';
import { USER_ATTRIBUTES } from '../directory/objects';
import { ApiError, badRequest, conflict } from '../errors';
import { auditActor, refusalError, TEMPORARY_MEMBERSHIP_ACTION, TEMPORARY_MEMBERSHIP_PERMISSION, TEMPORARY_MIN_MINUTES, type ActionOptions, type ActionResult, type TemporaryMembership, type TemporaryParams } from './common';
import { decideMembers, type DecidedMember, type MemberRefusal } from './group-members';

// groups.members.add.temporary (issue 33): a member added to a group for a bounded time, always
// through a four-eyes request. The group and the member are decided by the group-members chain
// (the engine on the group as `groups.members.write`: scope, classification, approvals; the member
// rules of ./group-members.ts), plus: the group must be a standard one (never a protected or
// Tier 0 group, whatever vip.manage says), the member a user, who may be the requester (even
// outside the managed OUs, never a never-manageable or protected account), not a member already
// (the expiry would otherwise take away a membership it did not give). The approver's execution
// writes the membership and the request keeps its expiry; lib/approvals/temporary.ts removes it.

/** The longest duration the instance allows, in minutes. */
export const maxTemporaryMinutes = (ctx: Pick<DecisionContext, 'rt'>) => ctx.rt.config.Approvals.TemporaryMembershipMaxHours * 60;

/** Is the member (a user) a direct member of the group now? */
export async function isMemberNow(ctx: Pick<DecisionContext, 'dir'>, memberGuid: string, groupDn: string): Promise<boolean | undefined> {
  const f = await ctx.dir.readObject(memberGuid, USER_ATTRIBUTES);
  if (!f) return undefined;
  return f.memberOf.some((g) => g.toLowerCase() === groupDn.toLowerCase());
}

export type TemporaryDecision =
  | { ok: true; d: Decision; group: { id: string; name: string; dn: string }; member: DecidedMember }
  | { ok: false; error: ApiError; reason: string; target?: { id: string; dn?: string; name?: string } };

/**
 * Decide a temporary membership for `actor`: the requester filing it (`approval_required` is what
 * they need, and a directly allowed change is filed too: a temporary membership is always four-eyes),
 * or the approver executing it (`approval: 'approver'`). `self` is the requester's GUID.
 */
export async function decideTemporaryMembership(
  ctx: DecisionContext,
  actor: Actor,
  groupGuid: string,
  params: Pick<TemporaryParams, 'member' | 'durationMinutes'>,
  opts: { correlationId: string; self: string; approval?: 'direct' | 'approver' },
): Promise<TemporaryDecision> {
  const max = maxTemporaryMinutes(ctx);
  if (params.durationMinutes < TEMPORARY_MIN_MINUTES || params.durationMinutes > max)
    return { ok: false, error: badRequest('duration_out_of_range', { min: TEMPORARY_MIN_MINUTES, max }), reason: 'duration_out_of_range', target: { id: groupGuid } };
  if (!isGuid(groupGuid)) return { ok: false, error: refusalError({ allowed: false, status: 404, reason: 'not_found' }), reason: 'not_found', target: { id: groupGuid.slice(0, 64) } };
  const d = await decideOn(ctx, actor, 'group', TEMPORARY_MEMBERSHIP_PERMISSION, groupGuid, { audit: true, correlationId: opts.correlationId, approval: opts.approval });
  const target = d.target ? { id: groupGuid, dn: d.target.dn, name: String(d.target.attributes.cn ?? '') } : { id: groupGuid };
  const filing = (opts.approval ?? 'direct') === 'direct';
  if (!d.allowed && !(filing && d.reason === 'approval_required')) {
    const error = refusalError(d);
    return { ok: false, error, reason: error.code === 'forbidden' ? d.reason : error.code, target };
  }
  // never a protected (VIP) group: a temporary membership acts on standard groups only
  if (d.cls?.kind !== 'standard') return { ok: false, error: refusalError({ allowed: false, status: 403, reason: 'not_a_standard_group' }), reason: 'not_a_standard_group', target };
  const checked: { members: DecidedMember[] } | MemberRefusal = await decideMembers(ctx, actor, [{ id: params.member, change: 'add' }], {
    correlationId: opts.correlationId,
    vipManage: d.allowed ? d.vipManage : false,
    self: opts.self,
    usersOnly: true,
  });
  if ('error' in checked) return { ok: false, error: checked.error, reason: checked.reason, target };
  const member = checked.members[0];
  if (await isMemberNow(ctx, member.id, d.target!.dn)) return { ok: false, error: conflict('already_member', { member: member.id }), reason: 'already_member', target };
  return { ok: true, d, group: { id: d.target!.guid, name: target.name ?? '', dn: d.target!.dn }, member };
}

/**
 * The approver's execution: decided again on fresh facts under the approver's rights (audited
 * `authz.decision`), then the membership written with the write account and audited
 * `groups.members.add` (details.temporary, the expiry). Refusals and failures are audited there
 * too and returned, never thrown. On success the result carries the membership for the request.
 */
export async function addTemporaryMember(ctx: DecisionContext, actor: Actor, groupGuid: string, params: TemporaryParams, opts: ActionOptions & { requester: string }): Promise<ActionResult> {
  const row = (outcome: string, reason: string, target: { id: string; dn?: string; name?: string }, details: Record<string, unknown>) =>
    ctx.rt.audit.append({
      event: 'groups.members.add',
      outcome,
      reason,
      ticket: opts.ticket,
      actor: auditActor(actor),
      target: { kind: 'group', ...target },
      correlationId: opts.correlationId,
      details: { ...(opts.requestId ? { request: opts.requestId } : {}), action: TEMPORARY_MEMBERSHIP_ACTION, temporary: true, member: params.member, durationMinutes: params.durationMinutes, ...details },
    });
  const decided = await decideTemporaryMembership(ctx, actor, groupGuid, params, { correlationId: opts.correlationId, self: opts.requester, approval: opts.approval ?? 'approver' });
  if (!decided.ok) {
    const failed = decided.reason === 'already_member';
    await row(failed ? 'failed' : 'denied', decided.reason, decided.target ?? { id: groupGuid }, {});
    return { outcome: failed ? 'failed' : 'denied', error: decided.error };
  }
  const { group, member } = decided;
  const details = { memberName: member.name, memberDn: member.dn };
  try {
    await ctx.dir.modify(group.dn, [{ operation: 'add', attribute: 'member', values: [member.dn] }], { as: await ctx.rt.writeCreds() });
  } catch (e) {
    // added by someone else between the check and the write: not ours to remove at expiry
    const error = isDirectoryError(e, 'value_exists') ? conflict('already_member', { member: member.id }) : directoryApiError(e);
    const outcome = error.code === 'directory_outcome_unknown' ? 'unknown' : 'failed';
    await row(outcome, error.code, group, details);
    return { outcome, error, members: [{ id: member.id, change: 'add', outcome: 'failed', code: error.code }] };
  }
  const added = new Date();
  const expiresAt = new Date(added.getTime() + params.durationMinutes * 60_000).toISOString();
  await row('success', 'succeeded', group, { ...details, expiresAt });
  return {
    outcome: 'succeeded',
    members: [{ id: member.id, change: 'add', outcome: 'succeeded' }],
    temporary: { group, member: { id: member.id, name: member.name, dn: member.dn }, durationMinutes: params.durationMinutes, addedAt: added.toISOString(), expiresAt, state: 'active' },
  };
}
