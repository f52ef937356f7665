import { notFound } from '../errors';
import { queryRecords } from '../store/records';
import { progressOf, readJob } from './jobs';
import { approversFor, isNamedApprover } from './settings';
import { readApprovalSettings } from './settings';
import { type ApprovalRequest, type ApprovalsContext, PK, canSee, getRequest, requestView, same } from './record';

// Reading requests: one, the lists (mine, to approve, history) and the counts.

// ---- read

export async function getRequestView(c: ApprovalsContext, id: string) {
  const rec = await getRequest(c.rt, id);
  const { settings } = await readApprovalSettings(c.rt.store);
  if (!rec || !(await canSee(c, rec.data, settings))) throw notFound();
  const view = requestView(rec.data, rec.data.state === 'pending' ? approversFor(settings, rec.data.source).approvalsNeeded : undefined);
  const job = rec.data.kind === 'action' ? undefined : await readJob(c.rt, id);
  return job ? { ...view, job: progressOf(job.data) } : view;
}

export type ListView = 'mine' | 'to_approve' | 'history';

/** Requests awaiting this operator: pending, not theirs, captured approver and still named, not yet approved by them. */
async function awaiting(c: ApprovalsContext, all: ApprovalRequest[]) {
  const { settings } = await readApprovalSettings(c.rt.store);
  const { identity, rights } = c.actor;
  return all.filter(
    (r) =>
      r.state === 'pending' &&
      !r.execution &&
      !same(r.requester.guid, identity.guid) &&
      !r.approvals.some((a) => same(a.guid, identity.guid)) &&
      isNamedApprover(r.approvers, identity, rights) &&
      isNamedApprover(approversFor(settings, r.source).approvers, identity, rights),
  );
}

export async function listRequests(c: ApprovalsContext, view: ListView) {
  const all = (await queryRecords<ApprovalRequest>(c.rt.store, PK)).map((x) => x.data).reverse(); // newest first
  const max = c.rt.config.Directory.MaxResults;
  let items: ApprovalRequest[];
  if (view === 'mine') items = all.filter((r) => same(r.requester.guid, c.actor.identity.guid));
  else if (view === 'to_approve') items = await awaiting(c, all);
  else {
    const { settings } = await readApprovalSettings(c.rt.store);
    const seen = await Promise.all(all.map(async (r) => r.state !== 'pending' && (await canSee(c, r, settings))));
    items = all.filter((_, i) => seen[i]);
  }
  return { items: items.slice(0, max).map((r) => requestView(r)), truncated: items.length > max };
}

export async function countRequests(c: ApprovalsContext) {
  const all = (await queryRecords<ApprovalRequest>(c.rt.store, PK)).map((x) => x.data);
  return {
    toApprove: (await awaiting(c, all)).length,
    minePending: all.filter((r) => r.state === 'pending' && same(r.requester.guid, c.actor.identity.guid)).length,
  };
}
