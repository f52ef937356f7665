import { z } from 'zod';
import { actionParamsSchema } from '../../actions/common';
import { adminParamsSchema } from '../../approvals/admin-changes';
import { PERMISSIONS } from '../../authz/permissions';

// The console's answers about approval requests (lib/approvals/requests.ts, requestView).

const operatorRef = z.object({ guid: z.string(), username: z.string() }).meta({ id: 'OperatorRef' });
const memberOutcome = z.object({ id: z.string(), change: z.enum(['add', 'remove']), outcome: z.enum(['succeeded', 'failed', 'unchanged']), code: z.string().optional() });
const actionOutcomes = z.enum(['succeeded', 'partial', 'failed', 'denied', 'unknown']);

export const approvalRequest = z
  .object({
    id: z.string(),
    kind: z.enum(['action', 'bulk', 'leaver']),
    action: z.enum(['users.password.reset', 'users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'groups.members.write', 'roles.save', 'delegations.save']),
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
  })
  .meta({ id: 'ApprovalRequest' });

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
