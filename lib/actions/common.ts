import { z } from 'zod';
import { plainText } from '../plain-text';
import type { Actor, ApprovalMode, Decision } from '../authz/engine';
import { isGuid } from '../directory/guid';
import { ApiError, forbidden, notFound } from '../errors';

// What the approvable actions share (the action runner, the group members change, approvals):
// their parameters, results and refusals. Kept below both so neither imports the other.

/** Attributes `users.attributes.write` may change (the write account's rights); sensitive ones are never recorded. */
export const WRITABLE_ATTRIBUTES = ['description', 'displayName', 'givenName', 'sn', 'mail', 'telephoneNumber'] as const;
export const SENSITIVE_ATTRIBUTES = new Set<string>(['telephoneNumber']);

const attrValue = plainText().trim().max(256).nullable();
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
  // captured at filing: the member is a user GUID (the requester's own when they asked for themselves)
  z.object({
    action: z.literal('groups.members.add.temporary'),
    member: z.string().refine(isGuid, 'a member GUID'),
    /** the member's account name as filing read it (for the approvers; set by filing, never taken from the body) */
    memberName: plainText().max(256).optional(),
    // the range (15 minutes to Approvals:TemporaryMembershipMaxHours) is a refusal of its own: duration_out_of_range
    durationMinutes: z.number().int().min(1).max(168 * 60),
  }),
  z.object({
    action: z.literal('groups.members.write'),
    add: z.array(z.string().refine(isGuid, 'a member GUID')).max(50).default([]),
    remove: z.array(z.string().refine(isGuid, 'a member GUID')).max(50).default([]),
  }),
]);
export type ActionParams = z.infer<typeof actionParamsSchema>;

export const targetKindOf = (action: ActionParams['action']): 'user' | 'group' => (action === 'groups.members.write' || action === TEMPORARY_MEMBERSHIP_ACTION ? 'group' : 'user');

// ---- groups.members.add.temporary (issue 33; ./temporary-membership.ts)
export const TEMPORARY_MEMBERSHIP_ACTION = 'groups.members.add.temporary' as const;
export type TemporaryMembershipAction = typeof TEMPORARY_MEMBERSHIP_ACTION;
/** The permission a temporary membership is decided on (filing, approval, execution). */
export const TEMPORARY_MEMBERSHIP_PERMISSION = 'groups.members.write' as const;
/** The shortest temporary membership; the longest is Approvals:TemporaryMembershipMaxHours (default 8 h). */
export const TEMPORARY_MIN_MINUTES = 15;
export type TemporaryParams = Extract<ActionParams, { action: TemporaryMembershipAction }>;

/** A temporary membership as its request holds it once written. */
export interface TemporaryMembership {
  group: { id: string; name: string; dn: string };
  member: { id: string; name: string; dn: string };
  durationMinutes: number;
  addedAt: string;
  expiresAt: string;
  state: 'active' | 'ended';
  /** how it ended: removed at expiry, ended early by the requester, or found already removed (by hand, or the group or member gone) */
  ended?: { at: string; how: 'expired' | 'ended_early' | 'removed_by_hand'; by: string };
  /** removals that failed (a DC down): retried by every scheduled run until one succeeds */
  removal?: { attempts: number; lastAt: string; lastCode: string };
  /** a removal in progress (its claim, so that one remover acts at a time) */
  removing?: { by: string; until: string };
}


export type ActionOutcome = 'succeeded' | 'partial' | 'failed' | 'denied' | 'unknown';
export interface ActionResult {
  outcome: ActionOutcome;
  /** the refusal or failure, when the outcome is not succeeded */
  error?: ApiError;
  /** users.password.reset only: shown once to whoever executed it */
  password?: string;
  /** groups.members.write: one line per member */
  members?: Array<{ id: string; change: 'add' | 'remove'; outcome: 'succeeded' | 'unchanged' | 'failed'; code?: string }>;
  /** groups.members.add.temporary: the membership written, for its request */
  temporary?: TemporaryMembership;
}

export interface ActionOptions {
  correlationId: string;
  ticket?: string;
  /** `approver`: the last approval of request `requestId` executes it */
  approval?: ApprovalMode;
  requestId?: string;
  /** the request's requester (a temporary membership may name them as its member) */
  requester?: string;
}

export const auditActor = (a: Actor) => ({ id: a.identity.guid, name: a.identity.username, provider: a.identity.provider, ip: a.ip });
export const nameOf = (d: Decision) => (d.target ? String(d.target.attributes.sAMAccountName ?? d.target.attributes.cn ?? '') : undefined);

/** The refusal an operator sees for a decision: unknown/unreadable → 404; otherwise the rule's code. */
export function refusalError(d: Extract<Decision, { allowed: false }>): ApiError {
  if (d.status === 404) return notFound();
  if (d.reason === 'approval_required') return forbidden('approval_required', d.approval?.kind === 'delegation' ? { delegation: d.approval.delegationId } : {});
  if (d.reason === 'own_account') return forbidden('own_account');
  return forbidden('forbidden', { reason: d.reason });
}

/** Display hints per approvable action: `direct`, `approval` (a request is needed) or `no`. */
export type ActionHint = 'direct' | 'approval' | 'no';
export const hintOf = (d: Decision): ActionHint => (d.allowed ? 'direct' : d.reason === 'approval_required' ? 'approval' : 'no');
