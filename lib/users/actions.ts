import { Attribute, Change, InsufficientAccessError } from 'ldapts';
import { z } from 'zod';
import { decideOn, type Actor, type ApprovalMode, type Decision, type DecisionContext, type TargetKind } from '../authz/engine';
import type { Permission } from '../authz/permissions';
import { isGuid } from '../directory';
import { ApiError, forbidden, isApiError, notFound } from '../errors';
import { callPasswordService } from '../password-service/client';
import { loadLinkKey } from '../password-service/link';
import { openResetPassword } from '../password-service/reset';

// The approvable actions on users, executed directly by an operator allowed them, or by the
// approver who gives the last approval of a request. Each is decided by the one engine on fresh
// facts (audited `authz.decision`), then audited under its own name with the ticket and the
// correlation id (shared with the request's rows when it runs through an approval).

/** Attributes `users.attributes.write` may change (the write account's rights); sensitive ones are never recorded. */
export const WRITABLE_ATTRIBUTES = ['description', 'displayName', 'givenName', 'sn', 'mail', 'telephoneNumber'] as const;
export const SENSITIVE_ATTRIBUTES = new Set<string>(['telephoneNumber']);

const attrValue = z.string().trim().max(256).nullable();
export const attributesSchema = z
  .object(Object.fromEntries(WRITABLE_ATTRIBUTES.map((a) => [a, attrValue.optional()])) as Record<(typeof WRITABLE_ATTRIBUTES)[number], z.ZodOptional<typeof attrValue>>)
  .strict()
  .refine((o) => Object.keys(o).length > 0, { message: 'at least one attribute' });

/** Parameters of an action, as captured by a request (never a secret: a reset password is generated at execution). */
export const actionParamsSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('users.unlock') }),
  z.object({ action: z.literal('users.disable') }),
  z.object({ action: z.literal('users.enable') }),
  z.object({ action: z.literal('users.password.reset'), mustChange: z.boolean().default(true), unlock: z.boolean().default(false) }),
  z.object({ action: z.literal('users.attributes.write'), attributes: attributesSchema }),
  z.object({
    action: z.literal('groups.members.write'),
    add: z.array(z.string().refine(isGuid, 'a member GUID')).max(50).default([]),
    remove: z.array(z.string().refine(isGuid, 'a member GUID')).max(50).default([]),
  }),
]);
export type ActionParams = z.infer<typeof actionParamsSchema>;

export const targetKindOf = (action: ActionParams['action']): 'user' | 'group' => (action === 'groups.members.write' ? 'group' : 'user');

export type ActionOutcome = 'succeeded' | 'partial' | 'failed' | 'denied' | 'unknown';
export interface ActionResult {
  outcome: ActionOutcome;
  /** the refusal or failure, when the outcome is not succeeded */
  error?: ApiError;
  /** users.password.reset only: shown once to whoever executed it */
  password?: string;
  /** groups.members.write: one line per member */
  members?: Array<{ id: string; change: 'add' | 'remove'; outcome: 'succeeded' | 'unchanged' | 'failed'; code?: string }>;
}

export interface ActionOptions {
  correlationId: string;
  ticket?: string;
  /** `approver`: the last approval of request `requestId` executes it */
  approval?: ApprovalMode;
  requestId?: string;
}

const auditActor = (a: Actor) => ({ id: a.identity.guid, name: a.identity.username, provider: a.identity.provider, ip: a.ip });
const nameOf = (d: Decision) => (d.target ? String(d.target.attributes.sAMAccountName ?? d.target.attributes.cn ?? '') : undefined);

/** The refusal an operator sees for a decision: unknown/unreadable → 404; otherwise the rule's code. */
export function refusalError(d: Extract<Decision, { allowed: false }>): ApiError {
  if (d.status === 404) return notFound();
  if (d.reason === 'approval_required') return forbidden('approval_required', d.approval?.kind === 'delegation' ? { delegation: d.approval.delegationId } : {});
  if (d.reason === 'own_account') return forbidden('own_account');
  return forbidden('forbidden', { reason: d.reason });
}

export function directoryError(e: unknown): ApiError {
  if (isApiError(e)) return e;
  if (e instanceof InsufficientAccessError || (e as { code?: number }).code === 50) return new ApiError(403, 'ad_denied');
  throw e;
}

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
  if (params.action === 'groups.members.write') {
    const { changeGroupMembers } = await import('../groups/members');
    return changeGroupMembers(ctx, actor, targetGuid, params, opts);
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

  let changes: Change[];
  let details: Record<string, unknown>;
  const replace = (type: string, values: string[]) => new Change({ operation: 'replace', modification: new Attribute({ type, values }) });
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
    const creds = await ctx.rt.writeCreds();
    await ctx.dir.pool.run(creds, 'write', (client) => client.modify(dn, changes));
  } catch (e) {
    return fail(directoryError(e), details);
  }
  await audit('success', 'succeeded', d, details);
  return { outcome: 'succeeded' };
}

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
