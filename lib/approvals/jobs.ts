import { randomBytes } from 'node:crypto';
import { performAction, type ActionOutcome, type ActionParams, type ActionResult } from '../actions';
import type { Actor, DecisionContext } from '../authz/engine';
import { USER_ATTRIBUTES, type ObjectFacts } from '../directory/objects';
import { logger } from '../log';
import type { ConsoleRuntime } from '../runtime';
import { getRecord, putRecord, queryRecords } from '../store/records';

// Bulk jobs and the leaver flow (console spec, Approval request: "a bulk action (executed as the
// approver's bulk job) and the leaver flow"; their states are not shown: docs/approvals.md). A job
// is the execution of one approved request over many steps (one per target, or the leaver's
// disable and group removals). Its state lives in DynamoDB so a restarted function resumes it:
//  - one runner at a time: a lease on the job record, taken and renewed by conditional writes;
//  - each step records `running` with the target's state before it acts, then its outcome and the
//    state after; a step found `running` by a resumed runner was interrupted: if the directory
//    already shows the step's result it is recorded as done without acting again, else it runs.
// Every step is decided again by the one engine on fresh facts (performAction), under the
// approver's rights, and audited under the action's own name with the request's correlation id.

export type StepState = 'pending' | 'running' | ActionOutcome;
const FINAL = new Set<StepState>(['succeeded', 'partial', 'failed', 'denied', 'unknown']);

export interface JobStep {
  i: number;
  /** the object the step's action is decided on (a user; for a leaver's group removal, the group) */
  target: { id: string; kind: 'user' | 'group'; name?: string; dn?: string };
  params: ActionParams;
  /** a leaver's group removal: the leaving user (whose memberOf shows whether it is done) */
  member?: string;
  state: StepState;
  code?: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  /** recorded as done by a resumed runner that found the directory already changed */
  resumed?: boolean;
  at?: string;
}

export interface JobExecutor {
  guid: string;
  username: string;
  provider: string;
  ownGuids?: string[];
  mappedGroupSids?: string[];
}

export interface Job {
  requestId: string;
  kind: 'bulk' | 'leaver';
  action: string;
  executor: JobExecutor;
  correlationId: string;
  ticket?: string;
  total: number;
  state: 'running' | 'done';
  startedAt: string;
  heartbeatAt: string;
  finishedAt?: string;
  lease?: { holder: string; until: number };
  counts: Record<string, number>;
}

export interface JobProgress {
  state: Job['state'];
  total: number;
  done: number;
  counts: Record<string, number>;
  startedAt: string;
  heartbeatAt: string;
  finishedAt?: string;
}

/** How long a runner holds a job without renewing it (renewed at every step): a killed function's job is taken over after this. */
export const JOB_LEASE_MS = 45_000;
/** How long one invocation runs a job before it leaves the rest to the next (an HTTP API answers within 30 s). */
export const JOB_BUDGET_MS = 20_000;

const PK = (requestId: string) => `JOB#${requestId}`;
/** Records hold JSON only: an absent value is left out (the store refuses undefined). */
const json = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const JOB_SK = 'JOB';
const stepSk = (i: number) => `S#${String(i).padStart(5, '0')}`;

export interface JobContext {
  rt: ConsoleRuntime;
  dc: DecisionContext;
  actor: Actor;
}

export interface RunOptions {
  /** this invocation's time budget (default JOB_BUDGET_MS) */
  budgetMs?: number;
  /** the clock (tests: a later time, as a scheduled run would see it) */
  now?: () => number;
  /** test seam: throw after this many steps acted, before the last one's outcome is recorded (a killed function) */
  crashAfter?: number;
  /** each acted step's result as it comes, before its outcome is recorded (a bulk reset hands its password to the download; it is never recorded) */
  deliver?: (step: JobStep, result: ActionResult) => void;
}

export const readJob = (rt: ConsoleRuntime, requestId: string) => getRecord<Job>(rt.store, PK(requestId), JOB_SK);

export async function readSteps(rt: ConsoleRuntime, requestId: string) {
  return (await queryRecords<JobStep>(rt.store, PK(requestId), 'S#')).map((r) => ({ ...r.data, version: r.version }));
}

/**
 * Create the job of an approved request, once: the job record is written only if absent (two
 * approvers racing to start it create one job). Answers false when it already existed.
 */
export async function createJob(rt: ConsoleRuntime, job: Omit<Job, 'state' | 'startedAt' | 'heartbeatAt' | 'counts' | 'total'>, steps: Array<Pick<JobStep, 'target' | 'params' | 'member'>>): Promise<boolean> {
  const now = new Date().toISOString();
  // the steps first: a job record always has all its steps (a crash in between leaves orphan steps, rewritten by the retry)
  for (const [i, s] of steps.entries()) await putRecord<JobStep>(rt.store, PK(job.requestId), stepSk(i), json({ i, ...s, state: 'pending' }));
  const full: Job = { ...job, total: steps.length, state: 'running', startedAt: now, heartbeatAt: now, counts: {} };
  return putRecord(rt.store, PK(job.requestId), JOB_SK, json(full), { expectVersion: 0 });
}

export function progressOf(job: Job): JobProgress {
  const done = Object.values(job.counts).reduce((a, b) => a + b, 0);
  return { state: job.state, total: job.total, done, counts: job.counts, startedAt: job.startedAt, heartbeatAt: job.heartbeatAt, ...(job.finishedAt ? { finishedAt: job.finishedAt } : {}) };
}

/** The outcome of a finished job for its request: every step succeeded, none did, or some. */
export function jobOutcome(job: Job): ActionOutcome {
  const ok = job.counts.succeeded ?? 0;
  if (ok === job.total) return 'succeeded';
  if (ok === 0) return (job.counts.unknown ?? 0) > 0 && (job.counts.unknown ?? 0) === job.total ? 'unknown' : 'failed';
  return 'partial';
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const enabledOf = (f: ObjectFacts) => ((f.userAccountControl ?? 0) & 0x2) === 0;
const lockedOf = (f: ObjectFacts) => {
  const computed = f.attributes['msDS-User-Account-Control-Computed'];
  if (computed !== undefined) return (Number(first(computed)) & 0x10) !== 0;
  const t = first(f.attributes.lockoutTime);
  return !!t && t !== '0';
};

/** What a step changes, as read now: recorded before and after it acts (never a sensitive value). */
async function stateOf(dc: DecisionContext, step: JobStep): Promise<Record<string, unknown> | undefined> {
  const userGuid = step.member ?? step.target.id;
  const f = await dc.dir.readObject(userGuid, USER_ATTRIBUTES);
  if (!f) return undefined;
  const p = step.params;
  if (step.member) return { member: f.memberOf.some((g) => g.toLowerCase() === (step.target.dn ?? '').toLowerCase()) };
  if (p.action === 'users.disable' || p.action === 'users.enable') return { enabled: enabledOf(f) };
  if (p.action === 'users.unlock') return { lockedOut: lockedOf(f) };
  if (p.action === 'users.attributes.write') return Object.fromEntries(Object.keys(p.attributes).map((a) => [a, a === 'telephoneNumber' ? '[sensitive]' : (first(f.attributes[a]) ?? null)]));
  return {};
}

/** Does the directory already show this step's result? (a resumed runner then records it without acting again) */
async function alreadyDone(dc: DecisionContext, step: JobStep): Promise<boolean> {
  const userGuid = step.member ?? step.target.id;
  const f = await dc.dir.readObject(userGuid, USER_ATTRIBUTES);
  if (!f) return false;
  const p = step.params;
  if (step.member) return !f.memberOf.some((g) => g.toLowerCase() === (step.target.dn ?? '').toLowerCase());
  if (p.action === 'users.disable') return !enabledOf(f);
  if (p.action === 'users.enable') return enabledOf(f);
  if (p.action === 'users.unlock') return !lockedOf(f);
  if (p.action === 'users.attributes.write')
    return Object.entries(p.attributes).every(([a, v]) => v === undefined || (first(f.attributes[a]) ?? null) === (v === '' ? null : v));
  return false; // a step whose result cannot be read back is never taken as done
}

export interface RunResult {
  job: Job;
  /** false when another runner holds the job (nothing was done here) */
  ran: boolean;
}

/**
 * Run (or resume) a job's remaining steps as `c.actor`, within the budget. The job record is the
 * lease: taken when free or expired, renewed at every step by a conditional write; losing it (a
 * takeover) stops this runner before its next step.
 */
export async function runJob(c: JobContext, requestId: string, opts: RunOptions = {}): Promise<RunResult> {
  const { rt } = c;
  const now = opts.now ?? Date.now;
  const started = Date.now();
  const budget = opts.budgetMs ?? JOB_BUDGET_MS;
  const holder = randomBytes(8).toString('hex');
  let rec = await readJob(rt, requestId);
  if (!rec) throw new Error(`job ${requestId} not found`);
  if (rec.data.state === 'done') return { job: rec.data, ran: false };
  if (rec.data.lease && rec.data.lease.until > now()) return { job: rec.data, ran: false };
  let job: Job = { ...rec.data, lease: { holder, until: now() + JOB_LEASE_MS }, heartbeatAt: new Date(now()).toISOString() };
  if (!(await putRecord(rt.store, PK(requestId), JOB_SK, json(job), { expectVersion: rec.version }))) return { job: rec.data, ran: false };
  let version = rec.version + 1;
  const save = async (next: Job) => {
    if (!(await putRecord(rt.store, PK(requestId), JOB_SK, json(next), { expectVersion: version }))) return false;
    version++;
    job = next;
    return true;
  };

  let acted = 0;
  for (const step of await readSteps(rt, requestId)) {
    if (FINAL.has(step.state)) continue;
    if (Date.now() - started > budget) break;
    // renew the lease (and lose the job to a runner that took it over)
    if (!(await save({ ...job, lease: { holder, until: now() + JOB_LEASE_MS }, heartbeatAt: new Date(now()).toISOString() }))) return { job, ran: true };
    const { version: stepVersion, ...s } = step;
    let outcome: JobStep;
    if (s.state === 'running' && (await alreadyDone(c.dc, s))) {
      // interrupted after it acted: the directory shows it done; never acted on twice
      outcome = { ...s, state: 'succeeded', resumed: true, after: await stateOf(c.dc, s), at: new Date().toISOString() };
      if (!(await putRecord(rt.store, PK(requestId), stepSk(s.i), json(outcome), { expectVersion: stepVersion }))) return { job, ran: true };
    } else {
      const running: JobStep = { ...s, state: 'running', before: s.before ?? (await stateOf(c.dc, s)), at: new Date().toISOString() };
      if (!(await putRecord(rt.store, PK(requestId), stepSk(s.i), json(running), { expectVersion: stepVersion }))) return { job, ran: true };
      const result = await performAction(c.dc, c.actor, s.target.id, s.params, { correlationId: job.correlationId, ticket: job.ticket, approval: 'approver', requestId });
      acted++;
      opts.deliver?.(s, result);
      if (opts.crashAfter !== undefined && acted >= opts.crashAfter) throw new Error('injected crash (test seam)');
      const code = result.error?.code ?? (result.members?.find((m) => m.code)?.code || undefined);
      outcome = { ...running, state: result.outcome, ...(code ? { code } : {}), after: result.outcome === 'denied' ? undefined : await stateOf(c.dc, s), at: new Date().toISOString() };
      if (!(await putRecord(rt.store, PK(requestId), stepSk(s.i), json(outcome), { expectVersion: stepVersion + 1 }))) return { job, ran: true };
    }
    // progress as it goes (recounted from the steps at the end)
    const counts = { ...job.counts, [outcome.state]: (job.counts[outcome.state] ?? 0) + 1 };
    if (!(await save({ ...job, counts }))) {
      logger.warn('bulk job: lease lost after a step', { request: requestId, step: s.i });
      return { job, ran: true };
    }
  }
  // the counts as the steps record them (exact, whoever recorded which step)
  const counts: Record<string, number> = {};
  for (const st of await readSteps(rt, requestId)) if (FINAL.has(st.state)) counts[st.state] = (counts[st.state] ?? 0) + 1;
  const finished = Object.values(counts).reduce((a, b) => a + b, 0) >= job.total;
  const { lease: _released, ...rest } = job;
  await save({ ...rest, counts, ...(finished ? { state: 'done' as const, finishedAt: new Date(now()).toISOString() } : {}) });
  return { job, ran: true };
}

/**
 * End a job that must not be resumed (a bulk reset: a password set after its download ended would
 * reach nobody): each step not started is recorded failed with `code`, a step found running (it may
 * have acted) unknown; the job is then done. Run by the download itself when its budget ends, or
 * by the scheduled check when its runner is gone (its lease expired).
 */
export async function abandonJob(rt: ConsoleRuntime, requestId: string, code: string): Promise<Job | undefined> {
  const at = new Date().toISOString();
  for (const { version, ...s } of await readSteps(rt, requestId)) {
    if (FINAL.has(s.state)) continue;
    const state: StepState = s.state === 'running' ? 'unknown' : 'failed';
    await putRecord<JobStep>(rt.store, PK(requestId), stepSk(s.i), json({ ...s, state, code, at }), { expectVersion: version });
  }
  const counts: Record<string, number> = {};
  for (const st of await readSteps(rt, requestId)) if (FINAL.has(st.state)) counts[st.state] = (counts[st.state] ?? 0) + 1;
  const rec = await readJob(rt, requestId);
  if (!rec) return undefined;
  if (rec.data.state === 'done') return rec.data;
  const { lease: _gone, ...rest } = rec.data;
  const done: Job = { ...rest, counts, state: 'done', finishedAt: at };
  return (await putRecord(rt.store, PK(requestId), JOB_SK, json(done), { expectVersion: rec.version })) ? done : (await readJob(rt, requestId))?.data;
}
