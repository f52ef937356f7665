import { decideOn, type Actor, type Decision, type DecisionContext } from '../authz/engine';
import type { Permission } from '../authz/permissions';
import { directoryApiError, isGuid, type DirectoryChange } from '../directory';
import { ApiError, isApiError, notFound } from '../errors';
import { callPasswordService } from '../password-service/console-side/client';
import { loadLinkKey, openResetPassword } from '../password-service/link';
import { auditActor, nameOf, refusalError, SENSITIVE_ATTRIBUTES, type ActionOptions, type ActionOutcome, type ActionParams, type ActionResult } from './common';
import { changeGroupMembers } from './group-members';
import { addTemporaryMember } from './temporary-membership';

export * from './common';
export { changeGroupMembers, groupMembersChangeSchema, groupMembersResultSchema, removeMemberParams } from './group-members';
export * from './management';
export * from './user-management';
export * from './group-management';
export { addTemporaryMember, decideTemporaryMembership, isMemberNow, maxTemporaryMinutes } from './temporary-membership';

// The approvable actions on users, executed directly by an operator allowed them, or by the
// approver who gives the last approval of a request. Each is decided by the one engine on fresh
// facts (audited `authz.decision`), then audited under its own name with the ticket and the
// correlation id (shared with the request's rows when it runs through an approval).

// What the password service's refusals of a reset mean to the caller.
const RESET_CODES: Record<string, [number, string]> = {
  moved: [409, 'moved'],
  ad_denied: [403, 'ad_denied'],
  password_policy: [409, 'password_policy'],
  own_account: [403, 'own_account'],
  trust_not_pinned: [503, 'trust_not_pinned'],
  reset_not_configured: [503, 'reset_not_configured'],
  not_found: [404, 'not_found'],
  not_managed: [404, 'not_found'],
  not_manageable: [404, 'not_found'],
  vip_not_allowed: [404, 'not_found'],
};

/**
 * Run one approvable action on a user or a group for `actor`: decide (audited), refuse (audited
 * under the action's name, outcome denied), or execute with the write account (the reset with the
 * password service) and audit the outcome. Never throws for a refusal or a directory failure:
 * the result carries it (an approval records it as the execution's outcome).
 */
export async function performAction(ctx: DecisionContext, actor: Actor, targetGuid: string, params: ActionParams, opts: ActionOptions): Promise<ActionResult> {
  if (params.action === 'groups.members.write') return changeGroupMembers(ctx, actor, targetGuid, params, opts);
  if (params.action === 'groups.members.add.temporary') {
    if (!opts.requester) throw new Error('a temporary membership runs only as the execution of its request');
    return addTemporaryMember(ctx, actor, targetGuid, params, { ...opts, requester: opts.requester });
  }
  const action = params.action as Permission;
  const audit = (outcome: string, reason: string, d?: Decision, details?: Record<string, unknown>) =>
    ctx.rt.audit.append({
      event: action,
      outcome,
      reason,
      ticket: opts.ticket,
      actor: auditActor(actor),
      target: { id: targetGuid, kind: 'user', ...(d?.target ? { dn: d.target.dn, name: nameOf(d) } : {}) },
      correlationId: opts.correlationId,
      details: { ...(opts.requestId ? { request: opts.requestId } : {}), ...details },
    });
  if (!isGuid(targetGuid)) return { outcome: 'denied', error: notFound() };
  const d = await decideOn(ctx, actor, 'user', action, targetGuid, { audit: true, correlationId: opts.correlationId, approval: opts.approval });
  if (!d.allowed) {
    const error = refusalError(d);
    await audit('denied', d.reason === 'approval_required' ? 'approval_required' : error.code === 'forbidden' ? d.reason : error.code, d);
    return { outcome: 'denied', error };
  }
  const dn = d.target.dn;
  const fail = async (error: ApiError, details?: Record<string, unknown>) => {
    const outcome: ActionOutcome = error.code === 'directory_outcome_unknown' ? 'unknown' : 'failed';
    await audit(outcome, error.code, d, details);
    return { outcome, error };
  };

  if (params.action === 'users.password.reset') {
    // a request filed before the helpdesk was turned off: no password service to call
    if (!ctx.rt.config.Helpdesk.Enabled) return fail(new ApiError(503, 'reset_unavailable'), { helpdesk: 'disabled' });
    const res = await callPasswordService({
      op: 'users.password.reset',
      userGuid: d.target.guid,
      expectedDn: dn,
      vipAllowed: d.cls.kind === 'vip' && d.vipManage,
      mustChange: params.mustChange,
      unlock: params.unlock,
      operator: { guid: actor.identity.guid, name: actor.identity.username },
      correlationId: opts.correlationId,
    }).catch((e: ApiError) => e);
    if (isApiError(res)) return fail(new ApiError(503, 'reset_unavailable'));
    if (!res.ok) {
      const [status, code] = RESET_CODES[res.code] ?? [503, 'reset_unavailable'];
      return fail(new ApiError(status, code), { serviceCode: res.code });
    }
    const { password } = openResetPassword(await loadLinkKey(), res.sealed!, d.target.guid, opts.correlationId);
    await audit('success', 'succeeded', d, { mustChange: params.mustChange, unlock: params.unlock });
    return { outcome: 'succeeded', password };
  }

  let changes: DirectoryChange[];
  let details: Record<string, unknown>;
  const replace = (attribute: string, values: string[]): DirectoryChange => ({ operation: 'replace', attribute, values });
  if (params.action === 'users.unlock') {
    changes = [replace('lockoutTime', ['0'])];
    const computed = d.target.attributes['msDS-User-Account-Control-Computed'];
    const lockoutTime = String(d.target.attributes.lockoutTime ?? '0');
    details = { wasLockedOut: computed !== undefined ? (Number(computed) & 0x10) !== 0 : lockoutTime !== '0' };
  } else if (params.action === 'users.disable' || params.action === 'users.enable') {
    const uac = d.target.userAccountControl ?? 0;
    const next = params.action === 'users.disable' ? uac | 0x2 : uac & ~0x2;
    changes = [replace('userAccountControl', [String(next)])];
    details = { old: { enabled: (uac & 0x2) === 0 }, new: { enabled: (next & 0x2) === 0 } };
  } else {
    // sensitive values are never recorded; the others with old and new values
    const old: Record<string, unknown> = {};
    const now: Record<string, unknown> = {};
    changes = [];
    for (const [name, value] of Object.entries(params.attributes)) {
      if (value === undefined) continue;
      const before = d.target.attributes[name];
      changes.push(replace(name, value === null || value === '' ? [] : [value]));
      if (SENSITIVE_ATTRIBUTES.has(name)) {
        old[name] = '[sensitive]';
        now[name] = '[sensitive]';
      } else {
        old[name] = before === undefined ? null : before;
        now[name] = value === '' ? null : value;
      }
    }
    details = { old, new: now };
  }
  try {
    await ctx.dir.modify(dn, changes, { as: await ctx.rt.writeCreds() });
  } catch (e) {
    return fail(directoryApiError(e), details);
  }
  await audit('success', 'succeeded', d, details);
  return { outcome: 'succeeded' };
}

/** A members change's answer: each member's outcome. */
export const membersAnswer = (result: ActionResult) => ({ ...actionAnswer(result), members: result.members ?? [] });

/** A direct action's answer: the refusal or failure as an ApiError; otherwise the outcome (and a reset password, once). */
export function actionAnswer(result: ActionResult) {
  if (result.outcome === 'denied' || result.outcome === 'failed' || result.outcome === 'unknown') throw result.error ?? new ApiError(500, 'internal_error');
  return {
    outcome: result.outcome,
    ...(result.error ? { code: result.error.code } : {}),
    ...(result.members ? { members: result.members } : {}),
    ...(result.password ? { password: result.password } : {}),
  };
}
