import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { plainText, multilineText } from '../plain-text';
import { requireRecentStepUp } from '../auth/stepup';
import type { Session } from '../auth/sessions';
import { decideOn, type Actor, type Decision, type DecisionContext } from '../authz/engine';
import { PERMISSIONS, type Permission } from '../authz/permissions';
import { ID_PATTERN } from '../authz/rights';
import { isGuid } from '../directory';
import { ApiError, badRequest, conflict, forbidden, isApiError, notFound } from '../errors';
import { validationError } from '../http/middlewares/validate';
import { logger } from '../log';
import { notify } from './notify';
import type { ConsoleRuntime } from '../runtime';
import { getRecord, putRecord, queryRecords } from '../store/records';
import { actionParamsSchema, performAction, refusalError, targetKindOf, type ActionOutcome, type ActionParams, type ActionResult } from '../actions';
import { adminParamsSchema, executeAdminChange, isAdminAction, previewAdminChange, type AdminAction, type AdminParams } from './admin-changes';
import { abandonJob, createJob, JOB_LEASE_MS, jobOutcome, progressOf, readJob, readSteps, runJob, type Job, type JobExecutor, type JobStep, type RunOptions } from './jobs';
import { operatorRights } from '../authz/rights';
import { USER_ATTRIBUTES } from '../directory/objects';
import { ADMIN_APPROVERS, approversFor, isApprovable, isNamedApprover, type ApprovableAction, type ApprovalSettings, type RequestApprovers, type RequestSource } from './settings';
import { readApprovalSettings } from './settings';

// Approval requests (console spec, Approval request; States and transitions). One record per
// request with an optimistic version: every transition is a conditional write on the version it
// read, so two approvals racing execute the action once, and expiry is safe to run twice.

export type RequestState = 'pending' | 'executed' | 'rejected' | 'cancelled' | 'expired';
export const REQUEST_KINDS = ['action', 'bulk', 'leaver'] as const;

/**
 * Actions a bulk request may carry. A bulk password reset always needs a ticket, and its job runs
 * only as the approver's one download (./bulk-reset.ts; decision in docs/decisions.md, issue 31).
 */
export const BULK_ACTIONS = ['users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'users.password.reset'] as const;
/** A bulk password reset: its job is the approver's one download of the generated passwords. */
export const isBulkReset = (r: Pick<ApprovalRequest, 'kind' | 'action'>) => r.kind === 'bulk' && r.action === 'users.password.reset';
/** How long after the last approval the approver may take the one download (then the request ends, nothing changed). */
export const DOWNLOAD_WINDOW_MS = 24 * 3_600_000;
/** The leaver flow is filed as the disable of the leaving user; its group removals are decided at execution. */
export const LEAVER_ACTION = 'users.disable';
/** The schema's bound; the instance's is Directory:MaxResults (200 by default), like other pickers. */
const BULK_TARGETS_HARD_MAX = 5000;
const BULK_DECISION_LANES = 6;

export interface BulkTarget {
  id: string;
  name: string;
  dn: string;
}

export interface OperatorRef {
  guid: string;
  username: string;
}

export interface ApprovalRequest {
  id: string;
  kind: (typeof REQUEST_KINDS)[number];
  /** an approvable action, or a self-widening role or delegation change (decision 26) */
  action: ApprovableAction | AdminAction;
  state: RequestState;
  reason: string;
  ticket?: string;
  /** a user or group (by GUID), or a role or delegation (by id); a bulk request: its summary (`id` bulk, name `<n> users`) */
  target: { id: string; kind: 'user' | 'group' | 'role' | 'delegation'; name: string; dn?: string };
  /** kind bulk: the explicit accounts captured at request time */
  targets?: BulkTarget[];
  /** captured without any secret (a typed password is not part of any action's parameters) */
  parameters: ActionParams | AdminParams;
  requester: OperatorRef & { provider: string };
  source: RequestSource;
  /** captured at request time */
  approvers: RequestApprovers;
  approvalsNeeded: 1 | 2;
  approvals: Array<OperatorRef & { at: string }>;
  createdAt: string;
  expiresAt: string;
  correlationId: string;
  /** set while the last approver's execution runs (the claim that makes it run once) */
  execution?: { startedAt: string; by: OperatorRef };
  /** a bulk password reset, approved: its one download (the execution) by the last approver, until `until`; `takenAt` once taken */
  download?: { by: OperatorRef; until: string; takenAt?: string };
  closedAt?: string;
  closedBy?: OperatorRef;
  comment?: string;
  outcome?: ActionOutcome;
  result?: { code?: string; members?: ActionResult['members']; counts?: Record<string, number>; total?: number };
}

export const PK = 'APPROVAL';

/** Request ids sort by creation time (newest last) and carry 64 random bits. */
const newId = () => `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(8).toString('hex')}`;
const ID_RE = /^[0-9a-z]{9}-[0-9a-f]{16}$/;

export const createRequestSchema = z
  .object({
    kind: z.enum(REQUEST_KINDS),
    action: z.string().max(64),
    /** kind action and leaver: the one target (a user or group GUID; a role or delegation id) */
    target: z.string().max(64).optional(),
    /** kind bulk: the explicit accounts (user GUIDs), at most Directory:MaxResults (checked at creation) */
    targets: z.array(z.string().max(64)).min(1).max(BULK_TARGETS_HARD_MAX).optional(),
    parameters: z.record(z.string(), z.unknown()).default({}),
    reason: multilineText().trim().min(1).max(1000),
    ticket: plainText().trim().max(200).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.kind === 'bulk' && !b.targets) ctx.addIssue({ code: 'custom', path: ['targets'], message: 'a bulk request names its targets' });
    if (b.kind !== 'bulk' && b.target === undefined) ctx.addIssue({ code: 'custom', path: ['target'], message: 'required' });
  });
export type CreateRequestBody = z.infer<typeof createRequestSchema>;

/**
 * The body of POST /api/approvals as the route takes it: any JSON, described by the schema above
 * (for the API description) but validated by `createRequest`, so that a rejected body is a refusal
 * audited `request.created` like the others.
 */
const { $schema: _drop, ...documented } = z.toJSONSchema(createRequestSchema, { io: 'input' }) as Record<string, unknown>;
export const createRequestBody = z.unknown().meta(documented);

export interface ApprovalsContext {
  rt: ConsoleRuntime;
  dc: DecisionContext;
  actor: Actor;
  session?: Session;
  correlationId: string;
}

export const auditActor = (a: Actor) => ({ id: a.identity.guid, name: a.identity.username, provider: a.identity.provider, ip: a.ip });
export const me = (a: Actor): OperatorRef => ({ guid: a.identity.guid, username: a.identity.username });
export const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function auditRequest(rt: ConsoleRuntime, event: string, outcome: string, reason: string, req: Partial<ApprovalRequest> & { id?: string }, actor: ReturnType<typeof auditActor> | { name: string; provider: string }, details: Record<string, unknown> = {}, correlationId?: string) {
  return rt.audit.append({
    event,
    outcome,
    reason,
    actor,
    ticket: req.ticket,
    target: req.target ? { id: req.target.id, kind: req.target.kind, name: req.target.name, dn: req.target.dn } : undefined,
    correlationId: req.correlationId ?? correlationId,
    details: { ...(req.id ? { request: req.id } : {}), ...(req.action ? { action: req.action } : {}), ...details },
  });
}

/** What the API shows of a request. */
export function requestView(r: ApprovalRequest, currentNeeded?: number) {
  const { execution, ...rest } = r;
  return { ...rest, approvalsNeeded: Math.max(r.approvalsNeeded, currentNeeded ?? 0), executing: !!execution };
}

export async function getRequest(rt: ConsoleRuntime, id: string) {
  if (!ID_RE.test(id)) return undefined;
  return getRecord<ApprovalRequest>(rt.store, PK, id);
}

/**
 * Who may see a request: its requester, its captured approvers, Super administrators, `audit.read`,
 * and the approvers the current settings name for its source (an approver added after the request
 * was filed reads it; approving or rejecting it stays refused `approver_not_allowed:not_captured`).
 */
export async function canSee(c: ApprovalsContext, r: ApprovalRequest, settings?: ApprovalSettings) {
  const { identity, rights } = c.actor;
  if (same(r.requester.guid, identity.guid) || isNamedApprover(r.approvers, identity, rights) || rights.superAdministrator || rights.permissions.has('audit.read')) return true;
  const current = settings ?? (await readApprovalSettings(c.rt.store)).settings;
  return isNamedApprover(approversFor(current, r.source).approvers, identity, rights);
}

/** A request the caller may not see (or an unknown id) answers 404 like an unknown one; the attempt is audited. */
export async function refuseUnseen(c: ApprovalsContext, event: string, id: string, r?: ApprovalRequest) {
  await auditRequest(c.rt, event, 'denied', 'not_found', r ?? (ID_RE.test(id) ? { id } : {}), auditActor(c.actor), {}, c.correlationId);
  return notFound();
}

/** An action code is recorded or echoed only when it is a permission code (never an arbitrary value). */
const knownAction = (action: string) => ((PERMISSIONS as readonly string[]).includes(action) || isAdminAction(action) ? action : undefined);

// ---- create

export async function createRequest(c: ApprovalsContext, raw: unknown) {
  const { rt } = c;
  const checked = createRequestSchema.safeParse(raw ?? {});
  if (!checked.success) {
    // the row names the fields that were wrong, never their values (a password may sit in any of them)
    const e = validationError(checked.error, 'body');
    const fields = [...new Set((e.details.errors as Array<{ field: string }>).map((x) => x.field))].sort();
    await auditRequest(rt, 'request.created', 'denied', e.code, {}, auditActor(c.actor), { fields }, c.correlationId);
    throw e;
  }
  const body = checked.data;
  const partial = { action: knownAction(body.action) as ApprovableAction | undefined, ticket: body.ticket || undefined, correlationId: c.correlationId };
  const refuse = async (e: ApiError, extra: Partial<ApprovalRequest> = {}, reason = e.code) => {
    await auditRequest(rt, 'request.created', 'denied', reason, { ...partial, ...extra }, auditActor(c.actor));
    return e;
  };
  if (body.kind === 'bulk') return createBulkRequest(c, body, refuse);
  if (body.kind === 'action' && isAdminAction(body.action)) return createAdminRequest(c, body, body.action, refuse);
  if (!isApprovable(body.action)) throw await refuse(badRequest('action_not_approvable', knownAction(body.action) ? { action: body.action } : {}));
  // the leaver flow is filed as the disable of the leaving user (its group removals are decided at execution)
  if (body.kind === 'leaver' && body.action !== LEAVER_ACTION) throw await refuse(badRequest('action_not_available', { kind: 'leaver', action: body.action }));
  // parameters are parsed per action: unknown keys (a typed password among them) are dropped
  const parsed = actionParamsSchema.safeParse({ ...body.parameters, action: body.action });
  if (!parsed.success) throw await refuse(badRequest('invalid_parameters'));
  const parameters = parsed.data;
  const { settings } = await readApprovalSettings(rt.store);
  if (settings.ticketRequired && !body.ticket) throw await refuse(badRequest('ticket_required'));
  if (!isGuid(body.target!)) throw await refuse(notFound());
  const kind = targetKindOf(parameters.action);
  const d = await decideOn(c.dc, c.actor, kind, parameters.action, body.target!, { audit: true, correlationId: c.correlationId });
  const target = d.target ? { id: d.target.guid, kind, name: String(d.target.attributes.sAMAccountName ?? d.target.attributes.cn ?? ''), dn: d.target.dn } : undefined;
  if (d.allowed) throw await refuse(conflict('approval_not_required'), { target });
  // any other refusal stays a refusal: approvals never widen the delegation
  if (d.reason !== 'approval_required' || !d.approval) throw await refuse(refusalError(d), { target }, d.reason);

  const { approvers, approvalsNeeded } = approversFor(settings, d.approval);
  return fileRequest(c, body, settings.requestLifetimeDays, { kind: body.kind, action: parameters.action, target: target!, parameters, source: d.approval, approvers, approvalsNeeded }, `approval_required:${sourceKey(d.approval)}`);
}

/** The fields of a new request that depend on what is asked; the rest is the same for every kind. */
type NewRequest = Pick<ApprovalRequest, 'kind' | 'action' | 'target' | 'parameters' | 'source' | 'approvers' | 'approvalsNeeded'> & Pick<Partial<ApprovalRequest>, 'targets'>;

/** Record a new pending request (a new id, or 409), audit `request.created` with the decision that made it, tell its approvers. */
async function fileRequest(c: ApprovalsContext, body: CreateRequestBody, lifetimeDays: number, fields: NewRequest, decision: string, details: Record<string, unknown> = {}) {
  const now = new Date();
  const req: ApprovalRequest = {
    id: newId(),
    kind: fields.kind,
    action: fields.action,
    state: 'pending',
    reason: body.reason,
    ...(body.ticket ? { ticket: body.ticket } : {}),
    target: fields.target,
    ...(fields.targets ? { targets: fields.targets } : {}),
    parameters: fields.parameters,
    requester: { ...me(c.actor), provider: c.actor.identity.provider },
    source: fields.source,
    approvers: fields.approvers,
    approvalsNeeded: fields.approvalsNeeded,
    approvals: [],
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + lifetimeDays * 86_400_000).toISOString(),
    correlationId: c.correlationId,
  };
  if (!(await putRecord(c.rt.store, PK, req.id, req, { expectVersion: 0 }))) throw conflict('request_id_collision');
  await auditRequest(c.rt, 'request.created', 'success', decision, req, auditActor(c.actor), { approvalsNeeded: fields.approvalsNeeded, approvers: fields.approvers, ...details });
  await notify(c.rt, 'approval_requested', req);
  return requestView(req);
}

type Refuse = (e: ApiError, extra?: Partial<ApprovalRequest>, reason?: string) => Promise<ApiError>;

const sourceKey = (s: RequestSource) => (s.kind === 'delegation' ? `delegation:${s.delegationId}` : s.kind);

/**
 * A bulk request: one approvable action over explicit accounts (at most Directory:MaxResults).
 * Every target is decided now by the engine for the requester (audited): each must need the
 * approval, under one source (one set of approvers); any other refusal refuses the request with
 * the targets' codes (unknown and out-of-scope alike `not_found`: no existence oracle); targets
 * directly allowed are named in `approval_not_required`. Approvals never widen a delegation.
 */
async function createBulkRequest(c: ApprovalsContext, body: CreateRequestBody, refuse: Refuse) {
  const { rt } = c;
  const summary = (n: number): ApprovalRequest['target'] => ({ id: 'bulk', kind: 'user', name: `${n} users` });
  const targets = body.targets!;
  const refuseBulk = (e: ApiError, reason = e.code) => refuse(e, { target: summary(targets.length) }, reason);
  if (!isApprovable(body.action)) throw await refuseBulk(badRequest('action_not_approvable', knownAction(body.action) ? { action: body.action } : {}));
  if (!(BULK_ACTIONS as readonly string[]).includes(body.action)) throw await refuseBulk(badRequest('action_not_available', { kind: 'bulk', action: body.action }));
  const parsed = actionParamsSchema.safeParse({ ...body.parameters, action: body.action });
  if (!parsed.success) throw await refuseBulk(badRequest('invalid_parameters'));
  const parameters = parsed.data;
  const { settings } = await readApprovalSettings(rt.store);
  // "ticket: required per instance rule; always for a bulk password reset"
  if ((settings.ticketRequired || parameters.action === 'users.password.reset') && !body.ticket) throw await refuseBulk(badRequest('ticket_required'));
  const max = rt.config.Directory.MaxResults;
  if (targets.length > max) throw await refuseBulk(badRequest('too_many_targets', { max, count: targets.length }));
  if (new Set(targets.map((t) => t.toLowerCase())).size !== targets.length) throw await refuseBulk(badRequest('duplicate_target'));

  const refused: Array<{ id: string; code: string; reason?: string }> = [];
  const direct: string[] = [];
  const captured: BulkTarget[] = [];
  const sources = new Map<string, RequestSource>();
  // the decisions in a few parallel lanes (each is its own directory read and audit row), kept in the targets' order
  const decisions: Array<Decision | undefined> = new Array(targets.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < targets.length; i = next++) if (isGuid(targets[i])) decisions[i] = await decideOn(c.dc, c.actor, 'user', parameters.action, targets[i], { audit: true, correlationId: c.correlationId });
  };
  await Promise.all(Array.from({ length: BULK_DECISION_LANES }, lane));
  for (const [i, id] of targets.entries()) {
    const d = decisions[i];
    if (!d) {
      refused.push({ id: id.slice(0, 64), code: 'not_found' });
      continue;
    }
    if (d.allowed) direct.push(id);
    else if (d.reason === 'approval_required' && d.approval) {
      sources.set(sourceKey(d.approval), d.approval);
      captured.push({ id: d.target!.guid, name: String(d.target!.attributes.sAMAccountName ?? d.target!.attributes.cn ?? ''), dn: d.target!.dn });
    } else {
      const e = refusalError(d);
      refused.push({ id, code: e.code, ...(e.code === 'forbidden' ? { reason: d.reason } : {}) });
    }
  }
  if (refused.length) throw await refuseBulk(forbidden('bulk_target_refused', { targets: refused }), `bulk_target_refused:${refused.length}`);
  if (direct.length) throw await refuseBulk(conflict('approval_not_required', { targets: direct }));
  if (sources.size !== 1) throw await refuseBulk(badRequest('bulk_sources_differ', { sources: [...sources.keys()] }));
  const source = [...sources.values()][0];

  const { approvers, approvalsNeeded } = approversFor(settings, source);
  return fileRequest(
    c,
    body,
    settings.requestLifetimeDays,
    { kind: 'bulk', action: parameters.action, target: summary(captured.length), targets: captured, parameters, source, approvers, approvalsNeeded },
    `approval_required:${sourceKey(source)}`,
    { targets: captured.length },
  );
}

/**
 * A role or delegation change that widens the requester's own rights (decision 26): filed by an
 * administrator (`settings.manage`, recent step-up), validated as its save would be, refused
 * `approval_not_required` when it widens nothing; approved by another administrator.
 */
async function createAdminRequest(c: ApprovalsContext, body: CreateRequestBody, action: AdminAction, refuse: Refuse) {
  const { rt } = c;
  const kind = action === 'roles.save' ? 'role' : 'delegation';
  const named = ID_PATTERN.test(body.target!) ? { target: { id: body.target!, kind, name: body.target! } as ApprovalRequest['target'] } : {};
  if (!c.actor.rights.permissions.has('settings.manage')) throw await refuse(forbidden('forbidden', { reason: 'missing_permission:settings.manage' }), named, 'missing_permission:settings.manage');
  try {
    await requireRecentStepUp(rt, c.session!, { sourceIp: c.actor.ip, correlationId: c.correlationId });
  } catch (e) {
    if (isApiError(e)) throw await refuse(e, named);
    throw e;
  }
  const { settings } = await readApprovalSettings(rt.store);
  if (settings.ticketRequired && !body.ticket) throw await refuse(badRequest('ticket_required'), named);
  if (!named.target) throw await refuse(badRequest('invalid_id'));
  const parsed = adminParamsSchema.safeParse({ ...body.parameters, action });
  if (!parsed.success) throw await refuse(badRequest('invalid_parameters', { fields: [...new Set(parsed.error.issues.map((i) => i.path.join('.')))].sort() }), named);
  let preview: Awaited<ReturnType<typeof previewAdminChange>>;
  try {
    preview = await previewAdminChange(rt, body.target!, parsed.data, c.actor.identity.guid);
  } catch (e) {
    if (isApiError(e)) throw await refuse(e, named);
    throw e;
  }
  if (!preview.widens.length) throw await refuse(conflict('approval_not_required'), { target: preview.target });

  return fileRequest(
    c,
    body,
    settings.requestLifetimeDays,
    { kind: 'action', action, target: preview.target, parameters: preview.params, source: { kind: 'admin' }, approvers: ADMIN_APPROVERS, approvalsNeeded: 1 },
    'approval_required:self_widening',
    { widens: preview.widens },
  );
}

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
      const d = await decideOn(c.dc, c.actor, r.target.kind as 'user' | 'group', r.action, r.target.id, { audit: true, correlationId: r.correlationId, approval: 'approver' });
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
async function execute(c: ApprovalsContext, r: ApprovalRequest, version: number, refusal?: string) {
  let result: ActionResult;
  try {
    result = isAdminAction(r.action)
      ? await executeAdminChange({ rt: c.rt, actor: auditActor(c.actor), correlationId: r.correlationId, operator: { guid: c.actor.identity.guid }, requestId: r.id }, r.target.id, r.parameters as AdminParams)
      : await performAction(c.dc, c.actor, r.target.id, r.parameters as ActionParams, { correlationId: r.correlationId, ticket: r.ticket, approval: 'approver', requestId: r.id });
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
async function startJob(c: ApprovalsContext, r: ApprovalRequest, opts: RunOptions) {
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

export const newCorrelationId = () => randomUUID();
