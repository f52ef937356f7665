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
