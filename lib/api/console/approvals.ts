import { z } from 'zod';
import { actionParamsSchema } from '../../actions/common';
import { adminParamsSchema } from '../../approvals/admin-changes';
import { PERMISSIONS } from '../../authz/permissions';
import { errorCodes } from '../../http/answers';
import { ACTIONS, AUTHZ_SAVE, DELEGATION_EDITOR, DIRECTORY_WRITE, ROLE_EDITOR } from './errors';

// The console's answers about approval requests (lib/approvals/record.ts, requestView), and the error codes of the approvals routes.

const operatorRef = z.object({ guid: z.string(), username: z.string() }).meta({ id: 'OperatorRef' });
const memberOutcome = z.object({ id: z.string(), change: z.enum(['add', 'remove']), outcome: z.enum(['succeeded', 'failed', 'unchanged']), code: z.string().optional() });
const actionOutcomes = z.enum(['succeeded', 'partial', 'failed', 'denied', 'unknown']);
const named = z.object({ id: z.string(), name: z.string(), dn: z.string() });
/** groups.members.add.temporary, executed (issue 33): the membership written, its expiry, and how it ended */
export const temporaryMembership = z
  .object({
    group: named,
    member: named,
    durationMinutes: z.number(),
    addedAt: z.string(),
    expiresAt: z.string(),
    state: z.enum(['active', 'ended']),
    ended: z.object({ at: z.string(), how: z.enum(['expired', 'ended_early', 'removed_by_hand']), by: z.string() }).optional(),
    removal: z.object({ attempts: z.number(), lastAt: z.string(), lastCode: z.string() }).optional(),
  })
  .meta({ id: 'TemporaryMembership' });

export const approvalRequest = z
  .object({
    id: z.string(),
    kind: z.enum(['action', 'bulk', 'leaver']),
    action: z.enum(['users.password.reset', 'users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'groups.members.write', 'groups.members.add.temporary', 'roles.save', 'delegations.save']),
    state: z.enum(['pending', 'executed', 'rejected', 'cancelled', 'expired']),
    reason: z.string(),
    ticket: z.string().optional(),
    target: z.object({ id: z.string(), kind: z.enum(['user', 'group', 'role', 'delegation']), name: z.string(), dn: z.string().optional() }),
    targets: z.array(z.object({ id: z.string(), name: z.string(), dn: z.string() })).optional(),
    /** never a secret: a reset password is generated at execution */
    parameters: z.union([actionParamsSchema, adminParamsSchema]),
    requester: operatorRef.extend({ provider: z.string() }),
    source: z.union([z.object({ kind: z.literal('always') }), z.object({ kind: z.literal('delegation'), delegationId: z.string() }), z.object({ kind: z.literal('admin') })]),
    approvers: z.object({ roles: z.array(z.string()), operators: z.array(z.string()), permission: z.enum(PERMISSIONS).optional() }),
    approvalsNeeded: z.number(),
    approvals: z.array(operatorRef.extend({ at: z.string() })),
    createdAt: z.string(),
    expiresAt: z.string(),
    correlationId: z.string(),
    /** the last approval's execution is running now */
    executing: z.boolean(),
    /** a bulk password reset, approved: the approver's one download (POST /api/approvals/{id}/passwords) runs it, until `until`; `takenAt` once taken */
    download: z.object({ by: operatorRef, until: z.string(), takenAt: z.string().optional() }).optional(),
    closedAt: z.string().optional(),
    closedBy: operatorRef.optional(),
    comment: z.string().optional(),
    outcome: actionOutcomes.optional(),
    result: z.object({ code: z.string().optional(), members: z.array(memberOutcome).optional(), counts: z.record(z.string(), z.number()).optional(), total: z.number().optional() }).optional(),
    temporary: temporaryMembership.optional(),
  })
  .meta({ id: 'ApprovalRequest' });

/** One temporary membership of the caller (GET /api/temporary-memberships): its request, and the membership */
export const temporaryMembershipView = temporaryMembership.extend({ request: z.string(), reason: z.string(), requester: operatorRef.extend({ provider: z.string() }) }).meta({ id: 'TemporaryMembershipView' });
export const temporaryMembershipList = z.object({ items: z.array(temporaryMembershipView), truncated: z.boolean() });
export const temporaryMembershipEnded = z.object({ membership: temporaryMembershipView });
// ending one early: the requester only; the removal's directory answer when it fails (the run retries it at expiry)
export const END_MEMBERSHIP_ERRORS = { 403: ['ad_denied', 'not_requester'], 404: ['not_found'], 409: ['membership_not_active'], 503: ['directory_unavailable', 'removal_failed'] };

export const jobProgress = z
  .object({
    state: z.enum(['running', 'done']),
    total: z.number(),
    done: z.number(),
    counts: z.record(z.string(), z.number()),
    startedAt: z.string(),
    heartbeatAt: z.string(),
    finishedAt: z.string().optional(),
  })
  .meta({ id: 'JobProgress' });

export const approvalList = z.object({ items: z.array(approvalRequest), truncated: z.boolean() });
export const approvalCount = z.object({ toApprove: z.number(), minePending: z.number() });
export const approvalDetail = approvalRequest.extend({ job: jobProgress.optional() }).meta({ id: 'ApprovalRequestDetail' });
export const approvalClosed = z.object({ request: approvalRequest });
/** An approval: the request, and when it was the last one the action's result (a reset password shown once), or the job it started. */
export const approvalDecided = z.object({
  request: approvalRequest,
  result: z.object({ outcome: actionOutcomes, code: z.string().optional(), members: z.array(memberOutcome).optional(), password: z.string().optional() }).optional(),
  job: jobProgress.optional(),
});
export const approvalJob = z.object({
  progress: jobProgress,
  steps: z.array(
    z.object({
      i: z.number(),
      target: z.object({ id: z.string(), kind: z.enum(['user', 'group']), name: z.string().optional(), dn: z.string().optional() }),
      member: z.string().optional(),
      state: z.enum(['pending', 'running', 'succeeded', 'partial', 'failed', 'denied', 'unknown']),
      code: z.string().optional(),
      before: z.record(z.string(), z.unknown()).optional(),
      after: z.record(z.string(), z.unknown()).optional(),
      resumed: z.boolean().optional(),
      at: z.string().optional(),
    }),
  ),
});
export const approvalResumed = z.object({ request: approvalRequest, job: jobProgress });

/** The headers of a bulk reset's passwords file. */
export const passwordsFileHeaders = {
  'Content-Disposition': { description: 'attachment; filename="passwords-<request>.csv"', required: true },
  'X-Row-Count': { description: 'the number of targets (lines after the header)', required: true },
};

// ---- the error codes of the approvals routes (functions/console/approvals.ts), by status
// what filing runs: the request's checks, and for a role or delegation change the editor's rules
export const FILING_ERRORS = errorCodes(ROLE_EDITOR, DELEGATION_EDITOR, {
  400: ['action_not_approvable', 'action_not_available', 'assignee_not_found', 'assignee_not_security_group', 'bulk_sources_differ', 'duplicate_target', 'duration_out_of_range', 'invalid_id', 'member_not_allowed', 'invalid_parameters', 'ou_in_tier', 'ou_not_found', 'ou_not_managed', 'role_not_delegable', 'role_not_found', 'ticket_required', 'too_many_targets', 'unknown_permission', 'validation_failed'],
  401: ['session_revoked'],
  403: ['approval_required', 'bulk_target_refused', 'forbidden', 'own_account', 'reauth_required', 'role_read_only', 'strict_reauth_required'],
  404: ['not_found'],
  409: ['already_member', 'approval_not_required', 'not_configured', 'request_id_collision', 'role_name_taken', 'version_conflict'],
  503: ['directory_unavailable'],
});
// an approval: the approver's own rules, then (the last one) the action or the admin change executed
export const APPROVING_ERRORS = errorCodes(ACTIONS, DIRECTORY_WRITE, ROLE_EDITOR, DELEGATION_EDITOR, AUTHZ_SAVE, {
  400: ['assignee_not_found', 'assignee_not_security_group', 'invalid_id', 'ou_in_tier', 'ou_not_found', 'ou_not_managed', 'role_not_delegable', 'role_not_found', 'too_many_changes', 'unknown_permission', 'validation_failed'],
  401: ['session_revoked'],
  // approver_not_allowed:<why>: not captured, not named, already approved, widens own rights, or the engine's reason
  403: ['approver_not_allowed:*', 'reauth_required', 'requester_disabled', 'role_read_only', 'self_approval', 'strict_reauth_required'],
  409: ['authz_changed_concurrently', 'not_configured', 'request_changed_concurrently', 'request_not_pending', 'role_name_taken', 'version_conflict'],
  503: ['laps_unavailable'],
});
export const CLOSING_ERRORS = { 404: ['not_found'], 409: ['request_changed_concurrently', 'request_not_pending'] };
export const REJECT_ERRORS = errorCodes(CLOSING_ERRORS, { 403: ['approver_not_allowed:not_captured', 'approver_not_allowed:not_named', 'self_approval'] });
export const CANCEL_ERRORS = errorCodes(CLOSING_ERRORS, { 403: ['not_requester'] });
export const RESUME_ERRORS = errorCodes(ACTIONS, { 403: ['not_executor', 'reauth_required', 'strict_reauth_required'], 409: ['job_not_running', 'job_running'], 503: ['laps_unavailable'] });
// each target's reset is decided and run as the single one (its refusals are its line's code, never the answer's)
export const PASSWORDS_ERRORS = errorCodes(ACTIONS, { 403: ['not_executor', 'reauth_required', 'strict_reauth_required'], 404: ['not_found'], 409: ['already_downloaded', 'download_expired', 'download_not_available'], 503: ['laps_unavailable'] });
