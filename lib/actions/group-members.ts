import { z } from 'zod';
import { decideOn, type Actor, type DecisionContext } from '../authz/engine';
import { isOwnAccount } from '../authz/context';
import { directoryApiError, isDirectoryError, isGuid } from '../directory';
import { ApiError, badRequest, forbidden, notFound } from '../errors';
import { refusalError, type ActionOptions, type ActionParams, type ActionResult } from './common';
import { ticketField } from './management';

// groups.members.write: add or remove members of a group, decided on the group (the engine:
// scope, classification, VIP, approvals) and on every member on fresh facts. A member must be a
// user or group the operator can read (`users.read` / `groups.read` in scope), never their own
// account; a protected (VIP) member also needs `vip.manage` in the delegation that allows the
// change. One audit row per member change: `groups.members.add` / `groups.members.remove`.

type MembersParams = Extract<ActionParams, { action: 'groups.members.write' }>;

/** A member named by its GUID. */
export const memberGuid = z.string().refine(isGuid, 'a GUID');
/** The body of a member change (POST /api/groups/{id}/members, and the owned-group route): GUIDs, at most 50 each way. */
export const groupMembersChangeSchema = z.object({ add: z.array(memberGuid).max(50).default([]), remove: z.array(memberGuid).max(50).default([]), ticket: ticketField });
/** The path of one member's removal (DELETE /api/groups/{id}/members/{memberId}). */
export const removeMemberParams = z.object({ id: z.string(), memberId: memberGuid });
/** What a member change answers: the outcome per member. */
export const groupMembersResultSchema = z.object({ outcome: z.enum(['succeeded', 'partial']), members: z.array(z.object({ id: z.string(), change: z.enum(['add', 'remove']), outcome: z.string(), code: z.string().optional() })) });

/** A member refused: the error the caller sees and the audit row's reason. */
export interface MemberRefusal {
  error: ApiError;
  reason: string;
}
export interface DecidedMember {
  id: string;
  change: 'add' | 'remove';
  dn: string;
  name: string;
}

/**
 * The member rules of a group change, decided on fresh facts: a member is a user or group the
 * operator can read (`users.read` / `groups.read` in scope), never the operator's own account; a
 * protected (VIP) member also needs `vip.manage` (`vipManage`: the delegation allowing the change
 * holds it). `self` (a temporary membership, ./temporary-membership.ts): the requester's own account
 * may be the member even outside the managed OUs (operators' accounts usually are), never when it
 * is never-manageable (Tier 0, protected, privileged) or VIP; `usersOnly`: a group is refused.
 * One refused member refuses them all.
 */
export async function decideMembers(
  ctx: DecisionContext,
  actor: Actor,
  changes: Array<{ id: string; change: 'add' | 'remove' }>,
  opts: { correlationId: string; vipManage: boolean; self?: string; usersOnly?: boolean },
): Promise<{ members: DecidedMember[] } | MemberRefusal> {
  const members: DecidedMember[] = [];
  for (const c of changes) {
    const isSelf = !!opts.self && opts.self.toLowerCase() === c.id.toLowerCase();
    if (!isSelf && isOwnAccount(actor.identity, c.id)) return { error: forbidden('own_account', { member: c.id }), reason: 'own_account' };
    let md = await decideOn(ctx, actor, 'user', 'users.read', c.id, { audit: false, correlationId: opts.correlationId });
    if (!md.allowed && md.reason === 'never_manageable:not_a_user' && !opts.usersOnly) md = await decideOn(ctx, actor, 'group', 'groups.read', c.id, { audit: false, correlationId: opts.correlationId });
    // the requester's own account outside the operator's scope (operators' accounts usually are): allowed as its own temporary member (classified, never Tier 0 or protected)
    const selfOutside = isSelf && !md.allowed && md.reason === 'out_of_scope' && (md.cls?.kind === 'unmanaged' || md.cls?.kind === 'standard') && !!md.target;
    if (!md.allowed && !selfOutside) return { error: badRequest('member_not_allowed', { member: c.id }), reason: `member_not_allowed:${md.reason}` };
    const cls = md.cls;
    if (cls?.kind === 'vip' && (isSelf || !opts.vipManage)) return { error: forbidden('forbidden', { reason: 'vip_requires_vip_manage', member: c.id }), reason: 'member_vip_requires_vip_manage' };
    const target = md.target!;
    members.push({ ...c, dn: target.dn, name: String(target.attributes.sAMAccountName ?? target.attributes.cn ?? '') });
  }
  return { members };
}

/**
 * `action` is `groups.members.write` (approvable), or `groups.owned.members.write` for a group the
 * operator manages (managedBy is their own account: decided by the engine); the member rules and
 * the audit rows are the same, the latter marked `owned`.
 */
export async function changeGroupMembers(
  ctx: DecisionContext,
  actor: Actor,
  groupGuid: string,
  params: Pick<MembersParams, 'add' | 'remove'>,
  opts: ActionOptions,
  action: 'groups.members.write' | 'groups.owned.members.write' = 'groups.members.write',
): Promise<ActionResult> {
  const auditActor = { id: actor.identity.guid, name: actor.identity.username, provider: actor.identity.provider, ip: actor.ip };
  const row = (event: string, outcome: string, reason: string, target: { dn?: string; name?: string }, details: Record<string, unknown>) =>
    ctx.rt.audit.append({
      event,
      outcome,
      reason,
      ticket: opts.ticket,
      actor: auditActor,
      target: { id: groupGuid, kind: 'group', ...target },
      correlationId: opts.correlationId,
      details: { ...(opts.requestId ? { request: opts.requestId } : {}), ...(action === 'groups.owned.members.write' ? { action } : {}), ...details },
    });
  const changes = [...params.add.map((id) => ({ id, change: 'add' as const })), ...params.remove.map((id) => ({ id, change: 'remove' as const }))];
  const eventOf = (c: 'add' | 'remove') => (c === 'add' ? 'groups.members.add' : 'groups.members.remove');
  const refuseAll = async (error: ApiError, target: { dn?: string; name?: string } = {}, reason = error.code) => {
    for (const c of changes.length ? changes : [{ id: undefined, change: 'add' as const }]) await row(eventOf(c.change), 'denied', reason, target, c.id ? { member: c.id } : {});
    return { outcome: 'denied' as const, error };
  };
  if (!isGuid(groupGuid)) return { outcome: 'denied', error: notFound() };
  if (!changes.length) return refuseAll(badRequest('no_member_change'));
  if (new Set(changes.map((c) => c.id.toLowerCase())).size !== changes.length) return refuseAll(badRequest('duplicate_member'));

  const d = await decideOn(ctx, actor, 'group', action, groupGuid, { audit: true, correlationId: opts.correlationId, approval: opts.approval });
  if (!d.allowed) {
    const error = refusalError(d);
    return refuseAll(error, d.target ? { dn: d.target.dn } : {}, error.code === 'forbidden' ? d.reason : error.code);
  }
  const group = { dn: d.target.dn, name: String(d.target.attributes.cn ?? '') };

  // every member first: one refused member refuses the whole change (nothing written)
  const checked = await decideMembers(ctx, actor, changes, { correlationId: opts.correlationId, vipManage: d.vipManage });
  if ('error' in checked) return refuseAll(checked.error, group, checked.reason);
  const members = checked.members;

  const results: NonNullable<ActionResult['members']> = [];
  const creds = await ctx.rt.writeCreds();
  let lastError: ApiError | undefined;
  for (const m of members) {
    const details = { member: m.id, memberName: m.name, memberDn: m.dn };
    try {
      await ctx.dir.modify(group.dn, [{ operation: m.change === 'add' ? 'add' : 'delete', attribute: 'member', values: [m.dn] }], { as: creds });
      results.push({ id: m.id, change: m.change, outcome: 'succeeded' });
      await row(eventOf(m.change), 'success', 'succeeded', group, details);
    } catch (e) {
      // already a member / not a member: nothing to change
      if ((m.change === 'add' && isDirectoryError(e, 'value_exists')) || (m.change === 'remove' && isDirectoryError(e, 'no_such_attribute', 'unwilling'))) {
        results.push({ id: m.id, change: m.change, outcome: 'unchanged' });
        await row(eventOf(m.change), 'success', 'unchanged', group, details);
        continue;
      }
      lastError = directoryApiError(e);
      results.push({ id: m.id, change: m.change, outcome: 'failed', code: lastError.code });
      await row(eventOf(m.change), lastError.code === 'directory_outcome_unknown' ? 'unknown' : 'failed', lastError.code, group, details);
    }
  }
  const failed = results.filter((r) => r.outcome === 'failed').length;
  if (!failed) return { outcome: 'succeeded', members: results };
  if (failed < results.length) return { outcome: 'partial', members: results, error: lastError };
  return { outcome: lastError?.code === 'directory_outcome_unknown' ? 'unknown' : 'failed', members: results, error: lastError };
}
