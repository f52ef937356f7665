import { z } from 'zod';
import { multilineText } from '@lib/plain-text';
import { approveRequest, cancelRequest, countRequests, createRequest, createRequestBody, getRequestJob, getRequestView, listRequests, rejectRequest, resumeRequestJob, type ApprovalsContext } from '@lib/approvals/requests';
import { decisionContext } from '@lib/runtime';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, type RouteContext } from '@lib/http/route';
import { approvalClosed, approvalCount, approvalDecided, approvalDetail, approvalJob, approvalList, approvalRequest, approvalResumed, passwordsFileHeaders } from '@lib/api/console/approvals';
import { ACTIONS, AUTHZ_SAVE, DELEGATION_EDITOR, DIRECTORY_WRITE, ROLE_EDITOR } from '@lib/api/console/errors';
import { errorCodes, file, json } from '@lib/http/answers';
import { downloadBulkPasswords } from '@lib/approvals/bulk-reset';

// what filing runs: the request's checks, and for a role or delegation change the editor's rules
const FILING = errorCodes(ROLE_EDITOR, DELEGATION_EDITOR, {
  400: ['action_not_approvable', 'action_not_available', 'assignee_not_found', 'assignee_not_security_group', 'bulk_sources_differ', 'duplicate_target', 'invalid_id', 'invalid_parameters', 'ou_in_tier', 'ou_not_found', 'ou_not_managed', 'role_not_delegable', 'role_not_found', 'ticket_required', 'too_many_targets', 'unknown_permission', 'validation_failed'],
  401: ['session_revoked'],
  403: ['approval_required', 'bulk_target_refused', 'forbidden', 'own_account', 'reauth_required', 'role_read_only', 'strict_reauth_required'],
  404: ['not_found'],
  409: ['approval_not_required', 'not_configured', 'request_id_collision', 'role_name_taken', 'version_conflict'],
  503: ['directory_unavailable'],
});
// an approval: the approver's own rules, then (the last one) the action or the admin change executed
const APPROVING = errorCodes(ACTIONS, DIRECTORY_WRITE, ROLE_EDITOR, DELEGATION_EDITOR, AUTHZ_SAVE, {
  400: ['assignee_not_found', 'assignee_not_security_group', 'invalid_id', 'ou_in_tier', 'ou_not_found', 'ou_not_managed', 'role_not_delegable', 'role_not_found', 'too_many_changes', 'unknown_permission', 'validation_failed'],
  401: ['session_revoked'],
  // approver_not_allowed:<why>: not captured, not named, already approved, widens own rights, or the engine's reason
  403: ['approver_not_allowed:*', 'reauth_required', 'requester_disabled', 'role_read_only', 'self_approval', 'strict_reauth_required'],
  409: ['authz_changed_concurrently', 'not_configured', 'request_changed_concurrently', 'request_not_pending', 'role_name_taken', 'version_conflict'],
  503: ['laps_unavailable'],
});
const CLOSING = { 404: ['not_found'], 409: ['request_changed_concurrently', 'request_not_pending'] };

// Approval requests (console spec, Approvals endpoints). Any operator may call them: who may
// file, approve, reject or cancel is decided in lib/approvals (the step-up of an approval is one
// of its audited rules, so the route itself does not ask for it).
const idParam = z.object({ id: z.string().max(64) });

const approvalsContext = async (c: RouteContext): Promise<ApprovalsContext> => ({
  rt: c.rt,
  dc: await decisionContext(c.rt),
  actor: { identity: c.operator!, rights: c.rights!, ip: c.sourceIp },
  session: c.session,
  correlationId: c.correlationId,
});

const list = defineRoute({
  method: 'GET',
  path: '/api/approvals',
  summary: 'Requests: view=mine (filed by the caller), to_approve (awaiting the caller), history (closed)',
  access: 'operator',
  query: z.object({ view: z.enum(['mine', 'to_approve', 'history']).default('mine') }),
  responses: { 200: approvalList },
  async handle(c) {
    return { body: await listRequests(await approvalsContext(c), c.query.view) };
  },
});

const count = defineRoute({
  method: 'GET',
  path: '/api/approvals/count',
  summary: 'Counts for the caller: requests awaiting them (toApprove) and their own pending ones (minePending)',
  access: 'operator',
  responses: { 200: approvalCount },
  async handle(c) {
    return { body: await countRequests(await approvalsContext(c)) };
  },
});

const one = defineRoute({
  method: 'GET',
  path: '/api/approvals/{id}',
  summary: 'One request (its requester, its approvers, Super administrators and audit.read); 404 otherwise',
  access: 'operator',
  params: idParam,
  responses: { 200: approvalDetail },
  async handle(c) {
    return { body: await getRequestView(await approvalsContext(c), c.params.id) };
  },
});

const create = defineRoute({
  method: 'POST',
  path: '/api/approvals',
  summary: 'File a request for an action the caller holds only with approval, or for a role or delegation change widening the caller’s own rights (roles.save, delegations.save); 409 approval_not_required otherwise. A rejected body is audited request.created',
  access: 'operator',
  body: createRequestBody,
  responses: { 201: json(approvalRequest, { description: 'The request, pending' }) },
  errors: FILING,
  async handle(c) {
    return { status: 201, body: await createRequest(await approvalsContext(c), c.body) };
  },
});

const approve = defineRoute({
  method: 'POST',
  path: '/api/approvals/{id}/approve',
  summary: 'Approve (recent step-up); the last approval executes the action under the approver’s rights',
  access: 'operator',
  params: idParam,
  responses: { 200: approvalDecided },
  errors: APPROVING,
  async handle(c) {
    return { body: await approveRequest(await approvalsContext(c), c.params.id) };
  },
});

const reject = defineRoute({
  method: 'POST',
  path: '/api/approvals/{id}/reject',
  summary: 'Reject with a comment (an approver of the request)',
  access: 'operator',
  params: idParam,
  body: z.object({ comment: multilineText().trim().min(1).max(1000) }),
  responses: { 200: approvalClosed },
  errors: errorCodes(CLOSING, { 403: ['approver_not_allowed:not_captured', 'approver_not_allowed:not_named', 'self_approval'] }),
  async handle(c) {
    return { body: await rejectRequest(await approvalsContext(c), c.params.id, c.body.comment) };
  },
});

const cancel = defineRoute({
  method: 'POST',
  path: '/api/approvals/{id}/cancel',
  summary: 'Cancel (the requester, pending only)',
  access: 'operator',
  params: idParam,
  responses: { 200: approvalClosed },
  errors: errorCodes(CLOSING, { 403: ['not_requester'] }),
  async handle(c) {
    return { body: await cancelRequest(await approvalsContext(c), c.params.id) };
  },
});

const job = defineRoute({
  method: 'GET',
  path: '/api/approvals/{id}/job',
  summary: 'A bulk or leaver request’s job: progress (state, total, done, counts) and one line per step with its outcome, code, and the state before and after; 404 without a job',
  access: 'operator',
  params: idParam,
  responses: { 200: approvalJob },
  async handle(c) {
    return { body: await getRequestJob(await approvalsContext(c), c.params.id) };
  },
});

const passwords = defineRoute({
  method: 'POST',
  path: '/api/approvals/{id}/passwords',
  summary: 'A bulk password reset, approved: its one download, by the approver whose approval executed it (recent step-up). The download runs the job: each password is generated, set and written into this CSV (username, dn, outcome, password, code), never stored, logged or audited. A second download 409 already_downloaded, anyone else 403 not_executor, both audited bulk.download',
  access: 'operator',
  params: idParam,
  responses: { 200: file('text/csv', 'One line per target: its outcome, and its new password when it was reset', passwordsFileHeaders) },
  // each target's reset is decided and run as the single one (its refusals are its line's code, never the answer's)
  errors: errorCodes(ACTIONS, { 403: ['not_executor', 'reauth_required', 'strict_reauth_required'], 404: ['not_found'], 409: ['already_downloaded', 'download_expired', 'download_not_available'], 503: ['laps_unavailable'] }),
  async handle(c) {
    const f = await downloadBulkPasswords(await approvalsContext(c), c.params.id);
    return { text: f.csv, contentType: 'text/csv; charset=utf-8', headers: { 'content-disposition': `attachment; filename="${f.filename}"`, 'x-row-count': String(f.rows) } };
  },
});

const resume = defineRoute({
  method: 'POST',
  path: '/api/approvals/{id}/resume',
  summary: 'Resume an unfinished bulk or leaver job (the approver who executed it, recent step-up); 409 job_running while its runner is alive',
  access: 'operator',
  params: idParam,
  responses: { 200: approvalResumed },
  errors: errorCodes(ACTIONS, { 403: ['not_executor', 'reauth_required', 'strict_reauth_required'], 409: ['job_not_running', 'job_running'], 503: ['laps_unavailable'] }),
  async handle(c) {
    return { body: await resumeRequestJob(await approvalsContext(c), c.params.id) };
  },
});

export const routes = [list, count, one, create, approve, reject, cancel, job, resume, passwords];
export const handler = consoleHandler(routes);
