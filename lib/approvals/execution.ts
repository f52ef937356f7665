import { requireRecentStepUp } from '../auth/stepup';
import { type Actor, type Decision, type DecisionContext } from '../authz/engine';
import { ApiError, conflict, forbidden, isApiError, notFound } from '../errors';
import { logger } from '../log';
import { notify } from './notify';
import type { ConsoleRuntime } from '../runtime';
import { putRecord, queryRecords } from '../store/records';
import { performAction, type ActionParams, type ActionResult } from '../actions';
import { executeAdminChange, isAdminAction, type AdminParams } from './admin-changes';
import { abandonJob, createJob, JOB_LEASE_MS, jobOutcome, progressOf, readJob, readSteps, runJob, type Job, type JobExecutor, type JobStep, type RunOptions } from './jobs';
import { operatorRights } from '../authz/rights';
import { USER_ATTRIBUTES } from '../directory/objects';
import { type ApprovalRequest, type ApprovalsContext, PK, auditActor, auditRequest, canSee, getRequest, isBulkReset, me, refuseUnseen, requestView, same } from './record';

// The execution of an approved request (console spec: "the single action runs at once under the
// approver's rights, decided again on fresh facts"): the single action, or the bulk or leaver job
// (./jobs.ts) run, resumed, closed; a bulk reset's job is its approver's download (./bulk-reset.ts).

/**
 * A refusal no approver could overcome: the target is gone, never-manageable now (a Tier 0 OU, a
 * protected account) or outside every managed OU; not one that depends on who decides (scope,
 * permission, VIP rights, own account).
 */
export function refusedOnTargetFacts(d: Decision): boolean {
  if (d.allowed) return false;
  return (d.reason === 'not_found' && !d.target) || d.reason.startsWith('never_manageable:') || (d.reason === 'out_of_scope' && d.cls?.kind === 'unmanaged') || d.reason === 'not_a_standard_group';
}

/**
 * The last approval: the single action runs at once under the approver's rights, decided again.
 * Refused then (`refusal`: the engine's reason at approval), the request ends executed with outcome
 * failed and that reason on `request.executed` (the action's own row says denied).
 */
export async function execute(c: ApprovalsContext, r: ApprovalRequest, version: number, refusal?: string) {
  let result: ActionResult;
  try {
    result = isAdminAction(r.action)
      ? await executeAdminChange({ rt: c.rt, actor: auditActor(c.actor), correlationId: r.correlationId, operator: { guid: c.actor.identity.guid }, requestId: r.id }, r.target.id, r.parameters as AdminParams)
      : await performAction(c.dc, c.actor, r.target.id, r.parameters as ActionParams, { correlationId: r.correlationId, ticket: r.ticket, approval: 'approver', requestId: r.id, requester: r.requester.guid });
  } catch (e) {
    logger.error('approval execution failed', { request: r.id, correlationId: r.correlationId, error: (e as Error).name });
    result = { outcome: 'unknown', error: isApiError(e) ? e : new ApiError(500, 'internal_error') };
  }
  // refused on fresh facts: the request ends as a failed execution (its reason on request.executed)
  const refusedNow = result.outcome === 'denied';
  if (refusedNow) result = { ...result, outcome: 'failed' };
  const reason = refusedNow ? (refusal ?? result.error?.code ?? 'denied') : (result.error?.code ?? result.outcome);
  const done: ApprovalRequest = {
    ...r,
    state: 'executed',
    execution: undefined,
    closedAt: new Date().toISOString(),
    closedBy: me(c.actor),
    outcome: result.outcome,
    result: { ...(result.error ? { code: result.error.code } : {}), ...(result.members ? { members: result.members } : {}) },
    // a temporary membership written: the request holds its expiry
    ...(result.temporary ? { temporary: result.temporary } : {}),
  };
  delete done.execution;
  if (!(await putRecord(c.rt.store, PK, r.id, done, { expectVersion: version }))) logger.error('approval: executed request could not be closed', { request: r.id });
  await auditRequest(c.rt, 'request.executed', result.outcome, reason, r, auditActor(c.actor), { ...(result.members ? { members: result.members } : {}), ...(refusedNow ? { refused: true } : {}) });
  await notify(c.rt, 'approval_decided', done);
  // the generated password goes to the approver who executed it, once; it is in no record
  return { request: requestView(done), result: { outcome: result.outcome, ...done.result, ...(result.password ? { password: result.password } : {}) } };
}

// ---- bulk jobs and the leaver flow (executed as the approver's job; ./jobs.ts)

/** The approver's actor, as a resumed job sees it: rights read now; a disabled or deleted account holds none. */
async function executorActor(rt: ConsoleRuntime, dc: DecisionContext, e: JobExecutor): Promise<Actor> {
  const dn = await dc.dir.dnOfGuid(e.guid);
  const facts = dn ? await dc.dir.principalFacts(dn) : undefined;
  const identity = { guid: e.guid, username: e.username, provider: e.provider, ...(e.ownGuids ? { ownGuids: e.ownGuids } : {}) };
  if (!facts || facts.userAccountControl & 0x2) return { identity, rights: { superAdministrator: false, permissions: new Set(), grants: [] }, ip: 'job' };
  const rights = await operatorRights(rt.store, dc.settings, { guid: e.guid, sid: facts.sid, groupSids: [...facts.groupSids, ...(e.mappedGroupSids ?? [])] });
  return { identity, rights, ip: 'job' };
}

/** The steps of a job: one per bulk target; the leaver's disable, then one removal per group it is a direct member of now. */
export async function jobSteps(c: ApprovalsContext, r: ApprovalRequest): Promise<Array<Pick<JobStep, 'target' | 'params' | 'member'>>> {
  const params = r.parameters as ActionParams;
  if (r.kind === 'bulk') return (r.targets ?? []).map((t) => ({ target: { id: t.id, kind: 'user' as const, name: t.name, dn: t.dn }, params }));
  const steps: Array<Pick<JobStep, 'target' | 'params' | 'member'>> = [{ target: { id: r.target.id, kind: 'user', name: r.target.name, ...(r.target.dn ? { dn: r.target.dn } : {}) }, params }];
  const user = await c.dc.dir.readObject(r.target.id, USER_ATTRIBUTES);
  for (const dn of user?.memberOf ?? []) {
    const g = await c.dc.dir.readFactsByDn(dn, ['cn']);
    if (g) steps.push({ target: { id: g.guid, kind: 'group', name: String(g.attributes.cn ?? ''), dn: g.dn }, params: { action: 'groups.members.write', add: [], remove: [r.target.id] }, member: r.target.id });
  }
  return steps;
}

/**
 * The last approval of a bulk or leaver request: the job is created once (audit `bulk.start`,
 * sharing the request's correlation id) and run at once within this invocation's budget; what is
 * left is resumed by the scheduled check (`resumeJobs`) or by the approver (`resumeRequestJob`).
 */
export async function startJob(c: ApprovalsContext, r: ApprovalRequest, opts: RunOptions) {
  const steps = await jobSteps(c, r);
  const executor: JobExecutor = { ...me(c.actor), provider: c.actor.identity.provider, ...(c.actor.identity.ownGuids ? { ownGuids: c.actor.identity.ownGuids } : {}), ...(c.session?.operator?.mappedGroupSids?.length ? { mappedGroupSids: c.session.operator.mappedGroupSids } : {}) };
  if (await createJob(c.rt, { requestId: r.id, kind: r.kind as Job['kind'], action: r.action, executor, correlationId: r.correlationId, ...(r.ticket ? { ticket: r.ticket } : {}) }, steps)) {
    await auditRequest(c.rt, 'bulk.start', 'success', r.kind, r, auditActor(c.actor), { kind: r.kind, steps: steps.length });
  }
  return continueJob({ rt: c.rt, dc: c.dc, actor: c.actor }, r.id, auditActor(c.actor), opts);
}

/** Run what is left of a request's job; close the request when the job is done. */
async function continueJob(jc: { rt: ConsoleRuntime; dc: DecisionContext; actor: Actor }, id: string, closer: ReturnType<typeof auditActor> | { name: string; provider: string }, opts: RunOptions) {
  const { job } = await runJob(jc, id, opts);
  if (job.state === 'done') await finishJob(jc.rt, id, job, closer);
  const rec = await getRequest(jc.rt, id);
  return { request: requestView(rec!.data), job: progressOf((await readJob(jc.rt, id))?.data ?? job) };
}

/** Close a request whose job is done: executed, outcome from its steps (succeeded, partial, failed), `request.executed` with the counts. Once. */
export async function finishJob(rt: ConsoleRuntime, id: string, job: Job, closer: ReturnType<typeof auditActor> | { name: string; provider: string }) {
  const rec = await getRequest(rt, id);
  if (!rec || rec.data.state !== 'pending' || !rec.data.execution) return;
  const r = rec.data;
  const outcome = jobOutcome(job);
  const done: ApprovalRequest = { ...r, state: 'executed', closedAt: new Date().toISOString(), closedBy: r.execution!.by, outcome, result: { counts: job.counts, total: job.total } };
  delete done.execution;
  if (!(await putRecord(rt.store, PK, r.id, done, { expectVersion: rec.version }))) return; // another runner closed it
  await auditRequest(rt, 'request.executed', outcome, outcome, r, closer, { kind: r.kind, total: job.total, counts: job.counts });
  await notify(rt, 'approval_decided', done);
}

/**
 * The executing approver resumes a job left unfinished (a function restart, the budget): recent
 * step-up; refused while another runner holds it (409 `job_running`). Audited `bulk.resume`.
 */
export async function resumeRequestJob(c: ApprovalsContext, id: string) {
  const rec = await getRequest(c.rt, id);
  if (!rec || !(await canSee(c, rec.data))) throw await refuseUnseen(c, 'bulk.resume', id, rec?.data);
  const r = rec.data;
  const refuse = async (e: ApiError) => {
    await auditRequest(c.rt, 'bulk.resume', 'denied', e.code, r, auditActor(c.actor));
    return e;
  };
  const job = await readJob(c.rt, id);
  if (!job || r.state !== 'pending' || !r.execution) throw await refuse(conflict('job_not_running', { state: r.state }));
  if (!same(job.data.executor.guid, c.actor.identity.guid)) throw await refuse(forbidden('not_executor'));
  try {
    await requireRecentStepUp(c.rt, c.session!, { sourceIp: c.actor.ip, correlationId: c.correlationId });
  } catch (e) {
    if (isApiError(e)) throw await refuse(e);
    throw e;
  }
  if (job.data.state === 'running' && job.data.lease && job.data.lease.until > Date.now()) throw await refuse(conflict('job_running'));
  await auditRequest(c.rt, 'bulk.resume', 'success', 'resumed', r, auditActor(c.actor), { done: progressOf(job.data).done, total: job.data.total });
  return continueJob({ rt: c.rt, dc: c.dc, actor: c.actor }, id, auditActor(c.actor), {});
}

/**
 * Scheduled (with the expiry check): every job whose runner is gone (its lease expired) is resumed
 * as its approver, whose rights are read again; a job done but its request not closed is closed.
 * A request claimed for execution whose job was never created (the function died in between) gets it now.
 */
export async function resumeJobs(rt: ConsoleRuntime, dc: DecisionContext, opts: RunOptions = {}): Promise<{ resumed: number; closed: number }> {
  let resumed = 0;
  let closed = 0;
  const system = { name: 'approvals-jobs', provider: 'system' };
  const now = opts.now ?? Date.now;
  for (const rec of await queryRecords<ApprovalRequest>(rt.store, PK)) {
    const r = rec.data;
    if (r.state !== 'pending' || !r.execution || (r.kind !== 'bulk' && r.kind !== 'leaver')) continue;
    const job = await readJob(rt, r.id);
    if (job?.data.state === 'done') {
      await finishJob(rt, r.id, job.data, system);
      closed++;
      continue;
    }
    if (isBulkReset(r)) {
      // a bulk reset is never resumed (a password set now would reach nobody): ended instead
      if (await settleBulkReset(rt, rec, job?.data, system, now())) closed++;
      continue;
    }
    if (job?.data.lease && job.data.lease.until > now()) continue; // its runner is alive
    const actor = await executorActor(rt, dc, job?.data.executor ?? { ...r.execution.by, provider: 'ad' });
    if (!job) {
      // the approving call may still be writing the steps: only a claim older than a lease is orphaned
      if (now() - Date.parse(r.execution.startedAt) < JOB_LEASE_MS) continue;
      await startJob({ rt, dc, actor, correlationId: r.correlationId }, r, opts);
      resumed++;
      continue;
    }
    await auditRequest(rt, 'bulk.resume', 'success', 'resumed:scheduled', r, system, { done: progressOf(job.data).done, total: job.data.total });
    const out = await continueJob({ rt, dc, actor }, r.id, system, opts);
    resumed++;
    if (out.request.state === 'executed') closed++;
  }
  return { resumed, closed };
}

/**
 * A bulk reset whose download is not running: not taken within its window, or taken and its
 * runner gone (a killed function). Its request ends executed, outcome failed (`download_expired`:
 * nothing changed) or from the steps recorded (the steps not run failed, one found running unknown:
 * `download_interrupted`). Answers whether it was ended.
 */
async function settleBulkReset(rt: ConsoleRuntime, rec: { data: ApprovalRequest; version: number }, job: Job | undefined, closer: { name: string; provider: string }, now: number): Promise<boolean> {
  const r = rec.data;
  if (job) {
    if ((job.lease && job.lease.until > now) || now - Date.parse(job.heartbeatAt) < JOB_LEASE_MS) return false; // its download runs
    const done = await abandonJob(rt, r.id, 'download_interrupted');
    if (done?.state === 'done') await finishJob(rt, r.id, done, closer);
    return true;
  }
  const d = r.download;
  const expired = !d?.takenAt && (!d || Date.parse(d.until) <= now);
  const interrupted = !!d?.takenAt && now - Date.parse(d.takenAt) >= JOB_LEASE_MS; // taken, but the job was never created
  if (!expired && !interrupted) return false;
  const code = expired ? 'download_expired' : 'download_interrupted';
  const next: ApprovalRequest = { ...r, state: 'executed', closedAt: new Date(now).toISOString(), closedBy: r.execution?.by ?? r.download?.by, outcome: 'failed', result: { code, counts: {}, total: r.targets?.length ?? 0 } };
  delete next.execution;
  if (!(await putRecord(rt.store, PK, r.id, next, { expectVersion: rec.version }))) return false;
  await auditRequest(rt, 'request.executed', 'failed', code, r, closer, { kind: r.kind, total: r.targets?.length ?? 0, counts: {} });
  await notify(rt, 'approval_decided', next);
  return true;
}

/** A job's progress and its steps (who may see the request sees them); 404 otherwise or without a job. */
export async function getRequestJob(c: ApprovalsContext, id: string) {
  const rec = await getRequest(c.rt, id);
  if (!rec || !(await canSee(c, rec.data))) throw notFound();
  const job = await readJob(c.rt, id);
  if (!job) throw notFound();
  const steps = (await readSteps(c.rt, id)).map(({ version: _v, params: _p, ...s }) => s);
  return { progress: progressOf(job.data), steps };
}
