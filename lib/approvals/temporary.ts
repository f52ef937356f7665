import { isMemberNow, TEMPORARY_MEMBERSHIP_ACTION, type TemporaryMembership } from '../actions';
import type { DecisionContext } from '../authz/engine';
import { isDirectoryError } from '../directory';
import { ApiError, conflict, forbidden, isApiError } from '../errors';
import { logger } from '../log';
import type { ConsoleRuntime } from '../runtime';
import { putRecord, queryRecords } from '../store/records';
import { type ApprovalRequest, type ApprovalsContext, PK, auditActor, auditRequest, canSee, getRequest, refuseUnseen, same } from './record';

// Temporary group memberships (issue 33) after their execution: the request holds the membership
// and its expiry (lib/actions/temporary-membership.ts wrote it). Ended by the scheduled run
// (every Approvals:CheckInterval, functions/scheduled/approvals-expiry.ts) once expired, or early
// by its requester. Each end is audited `groups.members.removed` with the request's correlation id:
//  - reason `expired` or `ended_early`: the write account removed the member;
//  - outcome `unchanged`, reason `removed_by_hand`: the member was no longer in the group (removed
//    by hand, or the group or the member is gone): recorded, nothing fails;
//  - outcome `failed` (a DC down): the membership stays active and is retried by every run; the
//    diagnostics warn (`temporary_membership_removal_failed`) while one is overdue.
// The removal is not decided again by the engine: taking back a membership the console gave is
// never a widening, and must not wait for someone's rights (docs/decisions.md, issue 33).

type Closer = ReturnType<typeof auditActor> | { name: string; provider: string };
export type EndHow = 'expired' | 'ended_early';

/** A failed removal as the API's error: the directory's answer (directory_unavailable, ad_denied), or removal_failed. */
function removalError(e: unknown): ApiError {
  if (isApiError(e)) return e;
  if (isDirectoryError(e, 'denied')) return new ApiError(403, 'ad_denied');
  return new ApiError(503, 'removal_failed');
}

const isActive = (r: ApprovalRequest): r is ApprovalRequest & { temporary: TemporaryMembership } => r.action === TEMPORARY_MEMBERSHIP_ACTION && r.temporary?.state === 'active';

/** How long a removal's claim holds (a run that dies after claiming leaves it to the next run after this). */
const CLAIM_MS = 120_000;

/**
 * Remove one temporary membership now (`how`: at expiry, or ended early) and record it on the
 * request, once. The remover first claims it (a conditional write on the version read: a run and an
 * early end at once, or two runs, let one of them act), then acts and records the outcome on the
 * claimed version. Answers the request as recorded, or undefined when another transition holds or
 * ended it.
 */
async function endMembership(rt: ConsoleRuntime, dc: Pick<DecisionContext, 'dir'>, id: string, how: EndHow, closer: Closer, now: number): Promise<{ request: ApprovalRequest; removed: 'removed' | 'removed_by_hand' | 'failed'; error?: ApiError } | undefined> {
  const rec = await getRequest(rt, id);
  if (!rec || !isActive(rec.data)) return undefined;
  if (rec.data.temporary.removing && Date.parse(rec.data.temporary.removing.until) > now) return undefined; // another remover holds it
  const claimed: ApprovalRequest = { ...rec.data, temporary: { ...rec.data.temporary, removing: { by: closer.name, until: new Date(now + CLAIM_MS).toISOString() } } };
  if (!(await putRecord(rt.store, PK, id, claimed, { expectVersion: rec.version }))) return undefined;
  const r = rec.data;
  const { removing: _claim, ...t } = claimed.temporary!;
  const at = new Date(now).toISOString();
  const row = (outcome: string, reason: string, details: Record<string, unknown> = {}) =>
    rt.audit.append({
      event: 'groups.members.removed',
      outcome,
      reason,
      actor: closer,
      ...(r.ticket ? { ticket: r.ticket } : {}),
      target: { id: t.group.id, kind: 'group', name: t.group.name, dn: t.group.dn },
      correlationId: r.correlationId,
      details: { request: r.id, action: TEMPORARY_MEMBERSHIP_ACTION, member: t.member.id, memberName: t.member.name, expiresAt: t.expiresAt, ...details },
    });

  let removed: 'removed' | 'removed_by_hand' | 'failed';
  let error: ApiError | undefined;
  try {
    // fresh DNs by GUID: the group or the member may have moved or been renamed since
    const groupDn = await dc.dir.dnOfGuid(t.group.id);
    const present = groupDn ? await isMemberNow(dc, t.member.id, groupDn) : undefined;
    if (!groupDn || !present) removed = 'removed_by_hand';
    else {
      const memberDn = (await dc.dir.dnOfGuid(t.member.id)) ?? t.member.dn;
      await dc.dir.modify(groupDn, [{ operation: 'delete', attribute: 'member', values: [memberDn] }], { as: await rt.writeCreds() });
      removed = 'removed';
    }
  } catch (e) {
    // removed by someone else between the read and the write: nothing left to remove
    if (isDirectoryError(e, 'no_such_attribute')) removed = 'removed_by_hand';
    else {
      removed = 'failed';
      error = removalError(e);
    }
  }
  const code = error?.code;

  const next: ApprovalRequest =
    removed === 'failed'
      ? { ...r, temporary: { ...t, removal: { attempts: (t.removal?.attempts ?? 0) + 1, lastAt: at, lastCode: code! } } }
      : { ...r, temporary: { ...t, state: 'ended', ended: { at, how: removed === 'removed_by_hand' ? 'removed_by_hand' : how, by: closer.name } } };
  if (!(await putRecord(rt.store, PK, r.id, next, { expectVersion: rec.version + 1 }))) return undefined; // not ours any more (our claim outlived CLAIM_MS)
  if (removed === 'failed') {
    logger.warn('temporary membership: removal failed, retried at the next run', { request: r.id, code });
    await row(code === 'directory_outcome_unknown' ? 'unknown' : 'failed', code!, { how, attempts: next.temporary!.removal!.attempts });
  } else if (removed === 'removed_by_hand') await row('unchanged', 'removed_by_hand', { how });
  else await row('success', how);
  return { request: next, removed, ...(error ? { error } : {}) };
}

/**
 * The scheduled run: every active temporary membership past its expiry is removed (or found
 * removed), and one whose removal failed before is retried. `now`: the clock (tests move it).
 */
export async function expireTemporaryMemberships(rt: ConsoleRuntime, dc: Pick<DecisionContext, 'dir'>, now = Date.now()): Promise<{ removed: number; removedByHand: number; failed: number }> {
  const counts = { removed: 0, removedByHand: 0, failed: 0 };
  const system = { name: 'approvals-expiry', provider: 'system' };
  for (const rec of await queryRecords<ApprovalRequest>(rt.store, PK)) {
    const r = rec.data;
    if (!isActive(r) || Date.parse(r.temporary.expiresAt) > now) continue;
    const done = await endMembership(rt, dc, r.id, 'expired', system, now).catch((e) => {
      logger.error('temporary membership: expiry run failed', { request: r.id, error: (e as Error).name });
      return undefined;
    });
    if (!done) continue;
    if (done.removed === 'removed') counts.removed++;
    else if (done.removed === 'removed_by_hand') counts.removedByHand++;
    else counts.failed++;
  }
  return counts;
}

/**
 * The requester ends their temporary membership early (audited `groups.members.removed`, reason
 * `ended_early`). Anyone else: 403 `not_requester`; not active (ended, or not a temporary
 * membership): 409 `membership_not_active`; both audited `groups.members.removed` denied. A removal
 * that fails answers the directory's error; the membership stays active and the scheduled run retries it at expiry.
 */
export async function endTemporaryMembership(c: ApprovalsContext, id: string) {
  const rec = await getRequest(c.rt, id);
  // a request the caller may not see answers like an unknown one; one they see but did not file: not_requester
  if (!rec || !(await canSee(c, rec.data))) throw await refuseUnseen(c, 'groups.members.removed', id, rec?.data);
  if (!same(rec.data.requester.guid, c.actor.identity.guid)) {
    await auditRequest(c.rt, 'groups.members.removed', 'denied', 'not_requester', rec.data, auditActor(c.actor), {}, c.correlationId);
    throw forbidden('not_requester');
  }
  if (!isActive(rec.data)) {
    await auditRequest(c.rt, 'groups.members.removed', 'denied', 'membership_not_active', rec.data, auditActor(c.actor), {}, c.correlationId);
    throw conflict('membership_not_active');
  }
  const done = await endMembership(c.rt, c.dc, id, 'ended_early', auditActor(c.actor), Date.now());
  if (!done) {
    // ended, or being removed by the scheduled run, in the meantime
    await auditRequest(c.rt, 'groups.members.removed', 'denied', 'membership_not_active', rec.data, auditActor(c.actor), {}, c.correlationId);
    throw conflict('membership_not_active');
  }
  if (done.error) throw done.error;
  return { membership: membershipView(done.request) };
}

/** What the API shows of a temporary membership: its request's id, reason and state, and the membership. */
export function membershipView(r: ApprovalRequest) {
  const { removing: _claim, ...m } = r.temporary!;
  return { request: r.id, reason: r.reason, requester: r.requester, ...m };
}

/**
 * The caller's temporary memberships: those they asked for, or whose member they are, active first
 * (soonest expiry first), then the last ended ones; at most Directory:MaxResults.
 */
export async function listTemporaryMemberships(c: ApprovalsContext) {
  const mine = (await queryRecords<ApprovalRequest>(c.rt.store, PK))
    .map((x) => x.data)
    .filter((r) => r.action === TEMPORARY_MEMBERSHIP_ACTION && r.temporary && (same(r.requester.guid, c.actor.identity.guid) || same(r.temporary.member.id, c.actor.identity.guid)));
  const active = mine.filter(isActive).sort((a, b) => a.temporary.expiresAt.localeCompare(b.temporary.expiresAt));
  const ended = mine.filter((r) => !isActive(r)).sort((a, b) => (b.temporary!.ended?.at ?? '').localeCompare(a.temporary!.ended?.at ?? ''));
  const all = [...active, ...ended];
  const max = c.rt.config.Directory.MaxResults;
  return { items: all.slice(0, max).map(membershipView), truncated: all.length > max };
}

/** Memberships still active after a removal failed (the diagnostics' warning; a run only removes expired ones): request ids and groups. */
export async function overdueTemporaryMemberships(rt: ConsoleRuntime) {
  return (await queryRecords<ApprovalRequest>(rt.store, PK))
    .map((x) => x.data)
    .filter((r): r is ApprovalRequest & { temporary: TemporaryMembership } => isActive(r) && (r.temporary.removal?.attempts ?? 0) > 0)
    .map((r) => ({ request: r.id, group: r.temporary.group.name, member: r.temporary.member.name, expiresAt: r.temporary.expiresAt, attempts: r.temporary.removal!.attempts, lastCode: r.temporary.removal!.lastCode }));
}
