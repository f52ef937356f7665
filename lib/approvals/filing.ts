import { requireRecentStepUp } from '../auth/stepup';
import { decideOn, type Decision } from '../authz/engine';
import { ID_PATTERN } from '../authz/rights';
import { isGuid } from '../directory';
import { ApiError, badRequest, conflict, forbidden, isApiError, notFound } from '../errors';
import { validationError } from '../http/middlewares/validate';
import { notify } from './notify';
import { putRecord } from '../store/records';
import { actionParamsSchema, decideTemporaryMembership, refusalError, targetKindOf, TEMPORARY_MEMBERSHIP_ACTION } from '../actions';
import { adminParamsSchema, isAdminAction, previewAdminChange, type AdminAction } from './admin-changes';
import { ADMIN_APPROVERS, approversFor, isApprovable, type ApprovableAction, type RequestSource } from './settings';
import { readApprovalSettings } from './settings';
import { type ApprovalRequest, type ApprovalsContext, BULK_ACTIONS, BULK_DECISION_LANES, type BulkTarget, type CreateRequestBody, LEAVER_ACTION, PK, auditActor, auditRequest, createRequestSchema, knownAction, me, newId, requestView, same } from './record';

// Filing a request (console spec, States and transitions: the rows from (none)): a single action,
// a bulk action over explicit accounts, the leaver flow, a self-widening role or delegation change.

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
  if (body.action === TEMPORARY_MEMBERSHIP_ACTION) return createTemporaryRequest(c, body, refuse);
  if (!isApprovable(body.action)) throw await refuse(badRequest('action_not_approvable', knownAction(body.action) ? { action: body.action } : {}));
  // without the helpdesk there is no password service: a reset could never be executed
  if (body.action === 'users.password.reset' && !rt.config.Helpdesk.Enabled) throw await refuse(badRequest('action_not_available', { action: body.action }), {}, 'helpdesk_disabled');
  // the leaver flow is filed as the disable of the leaving user (its group removals are decided at execution)
  if (body.kind === 'leaver' && body.action !== LEAVER_ACTION) throw await refuse(badRequest('action_not_available', { kind: 'leaver', action: body.action }));
  // parameters are parsed per action: unknown keys (a typed password among them) are dropped
  const parsed = actionParamsSchema.safeParse({ ...body.parameters, action: body.action });
  if (!parsed.success) throw await refuse(badRequest('invalid_parameters'));
  const parameters = parsed.data;
  if (parameters.action === TEMPORARY_MEMBERSHIP_ACTION) throw await refuse(badRequest('invalid_parameters'));
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

export const sourceKey = (s: RequestSource) => (s.kind === 'delegation' ? `delegation:${s.delegationId}` : s.kind);

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
  if (body.action === 'users.password.reset' && !rt.config.Helpdesk.Enabled) throw await refuseBulk(badRequest('action_not_available', { kind: 'bulk', action: body.action }), 'helpdesk_disabled');
  const parsed = actionParamsSchema.safeParse({ ...body.parameters, action: body.action });
  if (!parsed.success) throw await refuseBulk(badRequest('invalid_parameters'));
  const parameters = parsed.data;
  if (parameters.action === TEMPORARY_MEMBERSHIP_ACTION) throw await refuseBulk(badRequest('invalid_parameters'));
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
 * A temporary group membership (issue 33): a group (target), a member (`self`, the default, or a
 * user GUID) and a duration (durationMinutes, 15 to Approvals:TemporaryMembershipMaxHours). Always
 * four-eyes: the requester needs `groups.members.write` on the group, held directly or only with
 * approval; directly allowed, the instance approvers decide. Refused like the other group changes
 * (lib/actions/temporary-membership.ts), each refusal audited `request.created`.
 */
async function createTemporaryRequest(c: ApprovalsContext, body: CreateRequestBody, refuse: Refuse) {
  if (body.kind !== 'action') throw await refuse(badRequest('action_not_available', { kind: body.kind, action: body.action }));
  const raw = body.parameters as { member?: unknown };
  const member = raw.member === undefined || raw.member === 'self' ? c.actor.identity.guid : raw.member;
  const parsed = actionParamsSchema.safeParse({ ...body.parameters, member, memberName: undefined, action: TEMPORARY_MEMBERSHIP_ACTION });
  if (!parsed.success || parsed.data.action !== TEMPORARY_MEMBERSHIP_ACTION) throw await refuse(badRequest('invalid_parameters'));
  const params = parsed.data;
  const { settings } = await readApprovalSettings(c.rt.store);
  if (settings.ticketRequired && !body.ticket) throw await refuse(badRequest('ticket_required'));
  const decided = await decideTemporaryMembership(c.dc, c.actor, body.target!, params, { correlationId: c.correlationId, self: c.actor.identity.guid, approval: 'direct' });
  const named = (t?: { id: string; dn?: string; name?: string }) => (t ? { target: { id: t.id, kind: 'group' as const, name: t.name ?? '', ...(t.dn ? { dn: t.dn } : {}) } } : {});
  if (!decided.ok) throw await refuse(decided.error, named(decided.target), decided.reason);
  const { d, group } = decided;
  const source: RequestSource = !d.allowed && d.approval ? d.approval : { kind: 'always' };
  const { approvers, approvalsNeeded } = approversFor(settings, source);
  const self = same(decided.member.id, c.actor.identity.guid);
  return fileRequest(
    c,
    body,
    settings.requestLifetimeDays,
    { kind: 'action', action: TEMPORARY_MEMBERSHIP_ACTION, target: { id: group.id, kind: 'group', name: group.name, dn: group.dn }, parameters: { action: TEMPORARY_MEMBERSHIP_ACTION, member: decided.member.id, memberName: decided.member.name, durationMinutes: params.durationMinutes }, source, approvers, approvalsNeeded },
    d.allowed ? 'approval_required:temporary_membership' : `approval_required:${sourceKey(source)}`,
    { member: decided.member.id, memberName: decided.member.name, self, durationMinutes: params.durationMinutes },
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
