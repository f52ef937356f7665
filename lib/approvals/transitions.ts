import { requireRecentStepUp } from '../auth/stepup';
import { decideOn } from '../authz/engine';
import { type Permission } from '../authz/permissions';
import { TEMPORARY_MEMBERSHIP_ACTION, TEMPORARY_MEMBERSHIP_PERMISSION } from '../actions';
import { ApiError, conflict, forbidden, isApiError } from '../errors';
import { notify } from './notify';
import type { ConsoleRuntime } from '../runtime';
import { putRecord, queryRecords } from '../store/records';
import { isAdminAction, previewAdminChange, type AdminParams } from './admin-changes';
import { type RunOptions } from './jobs';
import { approversFor, isNamedApprover } from './settings';
import { readApprovalSettings } from './settings';
import { type ApprovalRequest, type ApprovalsContext, DOWNLOAD_WINDOW_MS, PK, auditActor, auditRequest, canSee, getRequest, isBulkReset, me, refuseUnseen, requestView, same } from './record';
import { execute, refusedOnTargetFacts, startJob } from './execution';

// The state table of approval requests (console spec, States and transitions): approve, reject,
// cancel, expire. Each is a conditional write on the version read, so two approvals racing execute
// the action once and expiry is safe to run twice; the execution itself is ./execution.ts.

/** Would the captured admin change widen this approver's own rights? (a change that no longer validates is left to the execution, which reports it) */
async function widensApprover(c: ApprovalsContext, r: ApprovalRequest): Promise<boolean> {
  try {
    return (await previewAdminChange(c.rt, r.target.id, r.parameters as AdminParams, c.actor.identity.guid)).widens.length > 0;
  } catch (e) {
    if (isApiError(e)) return false;
    throw e;
  }
}

// ---- approve

/** The permission an approver must hold directly: a temporary membership is a group-members change. */
const permissionOf = (action: ApprovalRequest['action']): Permission => (action === TEMPORARY_MEMBERSHIP_ACTION ? TEMPORARY_MEMBERSHIP_PERMISSION : (action as Permission));

/** Refuse an approval: audited as `request.approved`, outcome denied, with the rule's code. */
async function refuseApproval(c: ApprovalsContext, r: ApprovalRequest, e: ApiError, reason = e.code) {
  await auditRequest(c.rt, 'request.approved', 'denied', reason, r, auditActor(c.actor));
  return e;
}

async function requesterEnabled(c: ApprovalsContext, r: ApprovalRequest): Promise<boolean> {
  const dn = await c.dc.dir.dnOfGuid(r.requester.guid);
  const facts = dn ? await c.dc.dir.principalFacts(dn) : undefined;
  return !!facts && (facts.userAccountControl & 0x2) === 0;
}

export async function approveRequest(c: ApprovalsContext, id: string, jobOptions: RunOptions = {}) {
  const { rt } = c;
  for (let attempt = 0; attempt < 5; attempt++) {
    const rec = await getRequest(rt, id);
    if (!rec || !(await canSee(c, rec.data))) throw await refuseUnseen(c, 'request.approved', id, rec?.data);
    const r = rec.data;
    if (r.state !== 'pending' || r.execution) throw await refuseApproval(c, r, conflict('request_not_pending', { state: r.state }));
    if (same(r.requester.guid, c.actor.identity.guid)) throw await refuseApproval(c, r, forbidden('self_approval'));
    try {
      await requireRecentStepUp(rt, c.session!, { sourceIp: c.actor.ip, correlationId: c.correlationId });
    } catch (e) {
      if (isApiError(e)) throw await refuseApproval(c, r, e);
      throw e;
    }
    // captured with the request AND still named by the current settings
    const { settings } = await readApprovalSettings(rt.store);
    const current = approversFor(settings, r.source);
    if (!isNamedApprover(r.approvers, c.actor.identity, c.actor.rights)) throw await refuseApproval(c, r, forbidden('approver_not_allowed:not_captured'));
    if (!isNamedApprover(current.approvers, c.actor.identity, c.actor.rights)) throw await refuseApproval(c, r, forbidden('approver_not_allowed:not_named'));
    if (r.approvals.some((a) => same(a.guid, c.actor.identity.guid))) throw await refuseApproval(c, r, forbidden('approver_not_allowed:already_approved'));
    if (!(await requesterEnabled(c, r))) throw await refuseApproval(c, r, forbidden('requester_disabled'));
    // a raised approval count applies to pending requests
    const needed = Math.max(r.approvalsNeeded, current.approvalsNeeded);
    const last = r.approvals.length + 1 >= needed;
    // the last approval of an action refused on the target's fresh facts (gone, never-manageable, outside every
    // managed OU): no approver could run it, so it is executed and refused, and the request ends (issue 31)
    let refusedTarget: string | undefined;
    if (isAdminAction(r.action)) {
      // an administrator approving the change must not be widened by it either (decision 26)
      if (await widensApprover(c, r)) throw await refuseApproval(c, r, forbidden('approver_not_allowed:widens_own_rights'));
    } else if (r.kind === 'bulk') {
      // the approver must be directly allowed the action on the targets: decided on fresh facts
      // until one is (each target is decided again at execution, under the approver's rights)
      let reason = 'not_found';
      let everyTargetGone = true;
      for (const t of r.targets ?? []) {
        const d = await decideOn(c.dc, c.actor, 'user', r.action as Permission, t.id, { audit: true, correlationId: r.correlationId, approval: 'approver' });
        if (d.allowed) {
          reason = '';
          break;
        }
        reason = d.reason;
        everyTargetGone &&= refusedOnTargetFacts(d);
      }
      // every target refused on its own facts: the job runs and refuses each step (audited), and the request ends
      if (reason && !(last && everyTargetGone)) throw await refuseApproval(c, r, forbidden(`approver_not_allowed:${reason}`));
    } else {
      // the approver must be directly allowed the action, decided on fresh facts
      const d = await decideOn(c.dc, c.actor, r.target.kind as 'user' | 'group', permissionOf(r.action), r.target.id, { audit: true, correlationId: r.correlationId, approval: 'approver' });
      if (!d.allowed && !(last && refusedOnTargetFacts(d))) throw await refuseApproval(c, r, forbidden(`approver_not_allowed:${d.reason}`));
      if (!d.allowed) refusedTarget = d.reason;
    }

    const at = new Date();
    const approvals = [...r.approvals, { ...me(c.actor), at: at.toISOString() }];
    const execution = { startedAt: at.toISOString(), by: me(c.actor) };
    const download = isBulkReset(r) ? { download: { by: me(c.actor), until: new Date(at.getTime() + DOWNLOAD_WINDOW_MS).toISOString() } } : {};
    const next: ApprovalRequest = { ...r, approvals, ...(last ? { execution, ...download } : {}) };
    if (!(await putRecord(rt.store, PK, r.id, next, { expectVersion: rec.version }))) continue; // another transition won: decide again
    await auditRequest(rt, 'request.approved', 'success', `approval:${approvals.length}/${needed}`, r, auditActor(c.actor));
    if (!last) return { request: requestView(next, needed) };
    // a bulk reset runs only as the approver's one download (POST /api/approvals/{id}/passwords)
    if (isBulkReset(next)) return { request: requestView(next) };
    // a leaver refused on its target's facts runs no job: its disable is executed (and refused) like a single action
    if ((next.kind === 'bulk' || next.kind === 'leaver') && !refusedTarget) return startJob(c, next, jobOptions);
    return execute(c, next, rec.version + 1, refusedTarget);
  }
  throw conflict('request_changed_concurrently');
}

// ---- reject, cancel

async function close(c: ApprovalsContext, id: string, event: 'request.rejected' | 'request.cancelled', check: (r: ApprovalRequest) => Promise<void>, comment?: string) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const rec = await getRequest(c.rt, id);
    if (!rec || !(await canSee(c, rec.data))) throw await refuseUnseen(c, event, id, rec?.data);
    const r = rec.data;
    const refuse = async (e: ApiError) => {
      await auditRequest(c.rt, event, 'denied', e.code, r, auditActor(c.actor));
      return e;
    };
    if (r.state !== 'pending' || r.execution) throw await refuse(conflict('request_not_pending', { state: r.state }));
    try {
      await check(r);
    } catch (e) {
      if (isApiError(e)) throw await refuse(e);
      throw e;
    }
    const next: ApprovalRequest = {
      ...r,
      state: event === 'request.rejected' ? 'rejected' : 'cancelled',
      closedAt: new Date().toISOString(),
      closedBy: me(c.actor),
      ...(comment ? { comment } : {}),
    };
    if (!(await putRecord(c.rt.store, PK, r.id, next, { expectVersion: rec.version }))) continue;
    await auditRequest(c.rt, event, 'success', event === 'request.rejected' ? 'rejected' : 'cancelled', r, auditActor(c.actor), comment ? { comment } : {});
    await notify(c.rt, 'approval_decided', next);
    return { request: requestView(next) };
  }
  throw conflict('request_changed_concurrently');
}

/** Reject: a comment is required; by an approver captured with the request and still named. */
export function rejectRequest(c: ApprovalsContext, id: string, comment: string) {
  return close(
    c,
    id,
    'request.rejected',
    async (r) => {
      if (same(r.requester.guid, c.actor.identity.guid)) throw forbidden('self_approval');
      const { settings } = await readApprovalSettings(c.rt.store);
      if (!isNamedApprover(r.approvers, c.actor.identity, c.actor.rights)) throw forbidden('approver_not_allowed:not_captured');
      if (!isNamedApprover(approversFor(settings, r.source).approvers, c.actor.identity, c.actor.rights)) throw forbidden('approver_not_allowed:not_named');
    },
    comment,
  );
}

/** Cancel: by the requester only, pending only. */
export function cancelRequest(c: ApprovalsContext, id: string) {
  return close(c, id, 'request.cancelled', async (r) => {
    if (!same(r.requester.guid, c.actor.identity.guid)) throw forbidden('not_requester');
  });
}

// ---- expiry (scheduled, Approvals:CheckInterval)

const STUCK_EXECUTION_MS = 15 * 60_000;

/**
 * Expire pending requests past their lifetime (`request.expired`). Each is a conditional write on
 * the version read: two runs at once expire (and audit) each request once. An execution claimed
 * but never closed (the function died mid-way) is closed as executed with outcome `unknown`.
 */
export async function expireRequests(rt: ConsoleRuntime, now = Date.now()): Promise<{ expired: number; unknown: number }> {
  let expired = 0;
  let unknown = 0;
  const system = { name: 'approvals-expiry', provider: 'system' };
  for (const rec of await queryRecords<ApprovalRequest>(rt.store, PK)) {
    const r = rec.data;
    if (r.state !== 'pending') continue;
    if (r.execution) {
      // a bulk or leaver job is resumed, never closed as interrupted (resumeJobs)
      if (r.kind === 'bulk' || r.kind === 'leaver') continue;
      if (now - Date.parse(r.execution.startedAt) < STUCK_EXECUTION_MS) continue;
      const next: ApprovalRequest = { ...r, state: 'executed', closedAt: new Date(now).toISOString(), closedBy: r.execution.by, outcome: 'unknown', result: { code: 'execution_interrupted' } };
      delete next.execution;
      if (await putRecord(rt.store, PK, r.id, next, { expectVersion: rec.version })) {
        unknown++;
        await auditRequest(rt, 'request.executed', 'unknown', 'execution_interrupted', r, system);
        await notify(rt, 'approval_decided', next);
      }
      continue;
    }
    if (Date.parse(r.expiresAt) > now) continue;
    const next: ApprovalRequest = { ...r, state: 'expired', closedAt: new Date(now).toISOString() };
    if (!(await putRecord(rt.store, PK, r.id, next, { expectVersion: rec.version }))) continue; // another run (or a decision) won
    expired++;
    await auditRequest(rt, 'request.expired', 'success', 'lifetime_elapsed', r, system, { expiresAt: r.expiresAt });
    await notify(rt, 'approval_decided', next);
  }
  return { expired, unknown };
}
