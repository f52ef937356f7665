import { z } from 'zod';
import { multilineText } from '@lib/plain-text';
import { approveRequest, cancelRequest, countRequests, createRequest, createRequestBody, getRequestJob, getRequestView, listRequests, rejectRequest, resumeRequestJob } from '@lib/approvals/requests';
import { approvalsContext } from '@lib/approvals/context';
import { downloadBulkPasswords } from '@lib/approvals/bulk-reset';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { file, json } from '@lib/http/answers';
import * as A from '@lib/api/console/approvals';
import { temporaryMembershipRoutes } from './temporary-memberships';

// Approval requests (console spec, Approvals endpoints). Any operator may call them: who may
// file, approve, reject or cancel is decided in lib/approvals (the step-up of an approval is one
// of its audited rules, so the route itself does not ask for it).
const idParam = z.object({ id: z.string().max(64) });

const list = defineRoute({
  method: 'GET',
  path: '/api/approvals',
  summary: 'Requests: view=mine (filed by the caller), to_approve (awaiting the caller), history (closed)',
  access: 'operator',
  query: z.object({ view: z.enum(['mine', 'to_approve', 'history']).default('mine') }),
  responses: { 200: A.approvalList },
  async handle(c) {
    return { body: await listRequests(await approvalsContext(c), c.query.view) };
  },
});

const count = defineRoute({
  method: 'GET',
  path: '/api/approvals/count',
  summary: 'Counts for the caller: requests awaiting them (toApprove) and their own pending ones (minePending)',
  access: 'operator',
  responses: { 200: A.approvalCount },
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
  responses: { 200: A.approvalDetail },
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
  responses: { 201: json(A.approvalRequest, { description: 'The request, pending' }) },
  errors: A.FILING_ERRORS,
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
  responses: { 200: A.approvalDecided },
  errors: A.APPROVING_ERRORS,
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
  responses: { 200: A.approvalClosed },
  errors: A.REJECT_ERRORS,
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
  responses: { 200: A.approvalClosed },
  errors: A.CANCEL_ERRORS,
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
  responses: { 200: A.approvalJob },
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
  responses: { 200: file('text/csv', 'One line per target: its outcome, and its new password when it was reset', A.passwordsFileHeaders) },
  errors: A.PASSWORDS_ERRORS,
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
  responses: { 200: A.approvalResumed },
  errors: A.RESUME_ERRORS,
  async handle(c) {
    return { body: await resumeRequestJob(await approvalsContext(c), c.params.id) };
  },
});

// one function with the temporary memberships' routes (functions/console/temporary-memberships.ts)
export const routes = [list, count, one, create, approve, reject, cancel, job, resume, passwords, ...temporaryMembershipRoutes];
export const handler = consoleHandler(routes);
