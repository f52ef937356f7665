import { z } from 'zod';
import { multilineText } from '@lib/plain-text';
import { approveRequest, cancelRequest, countRequests, createRequest, createRequestBody, getRequestJob, getRequestView, listRequests, rejectRequest, resumeRequestJob, type ApprovalsContext } from '@lib/approvals/requests';
import { decisionContext } from '@lib/runtime';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, type RouteContext } from '@lib/http/route';

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
  async handle(c) {
    return { body: await listRequests(await approvalsContext(c), c.query.view) };
  },
});

const count = defineRoute({
  method: 'GET',
  path: '/api/approvals/count',
  summary: 'Counts for the caller: requests awaiting them (toApprove) and their own pending ones (minePending)',
  access: 'operator',
  response: z.object({ toApprove: z.number(), minePending: z.number() }),
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
  async handle(c) {
    return { body: await getRequestJob(await approvalsContext(c), c.params.id) };
  },
});

const resume = defineRoute({
  method: 'POST',
  path: '/api/approvals/{id}/resume',
  summary: 'Resume an unfinished bulk or leaver job (the approver who executed it, recent step-up); 409 job_running while its runner is alive',
  access: 'operator',
  params: idParam,
  async handle(c) {
    return { body: await resumeRequestJob(await approvalsContext(c), c.params.id) };
  },
});

export const routes = [list, count, one, create, approve, reject, cancel, job, resume];
export const handler = consoleHandler(routes);
