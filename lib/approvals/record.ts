import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { plainText, multilineText } from '../plain-text';
import type { Session } from '../auth/sessions';
import { type Actor, type DecisionContext } from '../authz/engine';
import { PERMISSIONS } from '../authz/permissions';
import { notFound } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { getRecord } from '../store/records';
import { TEMPORARY_MEMBERSHIP_ACTION, type ActionOutcome, type ActionParams, type ActionResult, type TemporaryMembership, type TemporaryMembershipAction } from '../actions';
import { isAdminAction, type AdminAction, type AdminParams } from './admin-changes';
import { approversFor, isNamedApprover, type ApprovableAction, type ApprovalSettings, type RequestApprovers, type RequestSource } from './settings';
import { readApprovalSettings } from './settings';

// The approval request record (console spec, Approval request): its fields, its view, who may see
// it, and the audit rows of its transitions. One record per request with an optimistic version:
// every transition is a conditional write on the version it read (./transitions.ts).

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
export const BULK_TARGETS_HARD_MAX = 5000;
export const BULK_DECISION_LANES = 6;

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
  /** an approvable action, a temporary group membership (issue 33), or a self-widening role or delegation change (decision 26) */
  action: ApprovableAction | TemporaryMembershipAction | AdminAction;
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
  /** groups.members.add.temporary, executed: the membership written and its expiry (./temporary.ts ends it) */
  temporary?: TemporaryMembership;
}

export const PK = 'APPROVAL';

/** Request ids sort by creation time (newest last) and carry 64 random bits. */
export const newId = () => `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(8).toString('hex')}`;
export const ID_RE = /^[0-9a-z]{9}-[0-9a-f]{16}$/;

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
  // a temporary membership's removal claim is internal (./temporary.ts)
  const temporary = r.temporary ? (({ removing: _claim, ...m }) => m)(r.temporary) : undefined;
  return { ...rest, ...(temporary ? { temporary } : {}), approvalsNeeded: Math.max(r.approvalsNeeded, currentNeeded ?? 0), executing: !!execution };
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
export const knownAction = (action: string) => ((PERMISSIONS as readonly string[]).includes(action) || isAdminAction(action) || action === TEMPORARY_MEMBERSHIP_ACTION ? action : undefined);

export const newCorrelationId = () => randomUUID();
