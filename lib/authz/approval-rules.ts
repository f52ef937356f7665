import type { Permission } from './permissions';

// How approvals weigh on a decision, as pure rules over the approval settings the caller passes
// in (lib/approvals/settings reads and validates them): the engine reads no settings itself.

/** The approvable actions (console spec, States and transitions). */
export const APPROVABLE_ACTIONS = [
  'users.password.reset',
  'users.unlock',
  'users.disable',
  'users.enable',
  'users.attributes.write',
  'groups.members.write',
] as const satisfies readonly Permission[];
export type ApprovableAction = (typeof APPROVABLE_ACTIONS)[number];
export const isApprovable = (p: string): p is ApprovableAction => (APPROVABLE_ACTIONS as readonly string[]).includes(p);

/** What a decision needs of the approval settings: the instance's 'always require' list and each delegation's set. */
export interface ApprovalRules {
  alwaysRequire: readonly string[];
  delegations: Record<string, { requiresApproval: readonly string[] } | undefined>;
}

/** Why a request needs approval: the instance's 'always require' list, or a delegation's set. */
export type ApprovalSource = { kind: 'always' } | { kind: 'delegation'; delegationId: string };

/** Does this delegation (or the instance list) require approval for this action? */
export function requiresApproval(s: ApprovalRules, action: Permission, delegationId?: string): boolean {
  if (!isApprovable(action)) return false;
  return !!delegationId && !!s.delegations[delegationId]?.requiresApproval.includes(action);
}
export const alwaysRequired = (s: ApprovalRules, action: Permission) => isApprovable(action) && s.alwaysRequire.includes(action);
