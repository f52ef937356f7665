import { z } from 'zod';
import { plainText } from '../plain-text';
import { requireStrictStepUp } from '../auth/stepup';
import type { Session } from '../auth/sessions';
import type { AuditInput } from '../audit';
import { decideUnrecorded, decisionAuditRow, type Actor } from '../authz/engine';
import { isGuid } from '../directory';
import { ApiError, badRequest, notFound } from '../errors';
import { HopTimes } from '../hop-times';
import { logger } from '../log';
import { loadLinkKey, openPassword } from '../password-service/link';
import { callPasswordService } from '../password-service/console-side/client';
import { processEnvironment } from '../config/environment';
import type { BitlockerPayload, LapsOperation, LapsPayload } from '../password-service/link';
import type { ConsoleDecisionContext } from '../runtime';

export const lapsRequestSchema = z.object({
  confirm: z.boolean().optional(),
  ticket: plainText().trim().max(200).optional(),
});

// What the password service's refusals mean to the API caller.
const SERVICE_CODES: Record<string, [number, string]> = {
  laps_no_password: [409, 'laps_no_password'],
  laps_encrypted_unsupported: [409, 'laps_encrypted_unsupported'],
  moved: [409, 'moved'],
  laps_not_managed: [409, 'laps_not_managed'],
  rate_limited: [429, 'rate_limited'],
  ad_denied: [403, 'ad_denied'],
  laps_not_configured: [503, 'laps_not_configured'],
  trust_not_pinned: [503, 'trust_not_pinned'],
  // the service's own checks disagree with the console's decision: answer like an unknown computer
  not_found: [404, 'not_found'],
  // BitLocker (issue 33): a key id the BitLocker account cannot see answers like an unknown one
  bitlocker_key_not_found: [404, 'not_found'],
  bitlocker_no_password: [409, 'bitlocker_no_password'],
  bitlocker_not_configured: [503, 'bitlocker_not_configured'],
  not_managed: [404, 'not_found'],
  not_manageable: [404, 'not_found'],
  vip_not_allowed: [404, 'not_found'],
};

/** The computer-secret operations of the password service: LAPS reveal and expiry, BitLocker reveal (issue 33). */
export type SecretOperation = LapsOperation | 'bitlocker.read';
const ACTION_OF = { 'laps.read': 'computers.laps.read', 'laps.expire': 'computers.laps.expire', 'bitlocker.read': 'computers.bitlocker.read' } as const;
/** The audit event is the permission's code. */
const eventOf = (op: SecretOperation) => ACTION_OF[op];
const MAX_AUDITED_ID = 200;

/**
 * The route's own row for a refusal the HTTP pipeline decides before `lapsAction` runs (missing
 * permission, a rejected body): the same event, the target
 * computer and the ticket as sent, so every refused reveal or expiry is found on the computer.
 */
export const lapsRefusalAudit =
  (op: SecretOperation) =>
  (req: { params: Record<string, string>; body: unknown }): { event: string; target: { id: string; kind: string }; ticket?: string } => {
    const ticket = (req.body as { ticket?: unknown } | undefined)?.ticket;
    return {
      event: eventOf(op),
      target: { id: String(req.params.id ?? '').slice(0, MAX_AUDITED_ID), kind: 'computer' },
      ...(typeof ticket === 'string' && ticket.trim() ? { ticket: ticket.trim().slice(0, 200) } : {}),
    };
  };

/**
 * Reveal or expire a computer's LAPS password (console spec, Reveal rules 1-6): ticket always,
 * explicit confirmation, strict step-up, one audited decision on fresh facts, then the password
 * service over the signed link. Every attempt is audited `computers.laps.read` (or
 * `computers.laps.expire`) with the target computer (GUID; name and DN once read), the ticket and
 * the outcome; a refusal's reason is its precise code (`ticket_required`, `out_of_scope`,
 * `rate_limited`, ...), also where the answer is a plain 404. The password never is.
 */
export async function lapsAction(ctx: ConsoleDecisionContext, actor: Actor, session: Session, op: 'laps.read', guid: string, body: z.infer<typeof lapsRequestSchema>, correlationId: string): Promise<LapsPayload>;
export async function lapsAction(ctx: ConsoleDecisionContext, actor: Actor, session: Session, op: 'laps.expire', guid: string, body: z.infer<typeof lapsRequestSchema>, correlationId: string): Promise<{ expired: true }>;
/** The BitLocker reveal (issue 33): the same chain, one recovery entry by its key id, the BitLocker account on the service's side. */
export async function lapsAction(
  ctx: ConsoleDecisionContext,
  actor: Actor,
  session: Session,
  op: 'bitlocker.read',
  guid: string,
  body: z.infer<typeof lapsRequestSchema>,
  correlationId: string,
  keyId: string,
): Promise<BitlockerPayload>;
export async function lapsAction(
  ctx: ConsoleDecisionContext,
  actor: Actor,
  session: Session,
  op: SecretOperation,
  guid: string,
  body: z.infer<typeof lapsRequestSchema>,
  correlationId: string,
  keyId?: string,
): Promise<LapsPayload | BitlockerPayload | { expired: true }> {
  const action = ACTION_OF[op];
  const event = eventOf(op);
  // the decision's row, once decided, goes with the attempt's next row in one append (one write)
  let decisionRow: AuditInput | undefined;
  const audit = (outcome: string, reason: string, target?: { dn?: string; name?: string }) => {
    const row: AuditInput = {
      event,
      outcome,
      reason,
      ticket: body.ticket || undefined,
      actor: { id: actor.identity.guid, name: actor.identity.username, provider: actor.identity.provider, ip: actor.ip },
      target: { id: guid.slice(0, MAX_AUDITED_ID), kind: 'computer', ...target },
      correlationId,
    };
    const rows = decisionRow ? [decisionRow, row] : [row];
    decisionRow = undefined;
    return ctx.rt.audit.appendAll(rows);
  };
  const refuse = async (e: ApiError, target?: { dn?: string; name?: string }, reason = e.code) => {
    await audit(e.status >= 500 ? 'failed' : 'denied', reason, target);
    return e;
  };
  if (!isGuid(guid)) throw await refuse(notFound());
  // a key id that is not a GUID names no entry: like an unknown computer
  if (op === 'bitlocker.read' && !isGuid(keyId ?? '')) throw await refuse(notFound(), undefined, 'bitlocker_key_not_found');
  if (!body.ticket) throw await refuse(badRequest('ticket_required'));
  if (body.confirm !== true) throw await refuse(badRequest('confirmation_required'));
  const hops = new HopTimes();
  // the strict step-up and the decision's directory reads run together; a step-up refusal still
  // comes first and leaves no decision row (nothing is written before both are in)
  const [stepUp, decided] = await Promise.allSettled([
    hops.time('console.stepUp', () => requireStrictStepUp(ctx.rt, session, { sourceIp: actor.ip, correlationId })),
    hops.time('console.decisionReads', () => decideUnrecorded(ctx, actor, 'computer', action, guid)),
  ]);
  if (stepUp.status === 'rejected') throw await refuse(stepUp.reason as ApiError);
  if (decided.status === 'rejected') throw decided.reason;
  const d = decided.value;
  decisionRow = decisionAuditRow(actor, 'computer', action, guid, d, { correlationId, ticket: body.ticket });
  if (!d.allowed) {
    // the answer hides why (404 like an unknown computer); the rows record it
    const known = d.target ? { dn: d.target.dn, name: String(d.target.attributes.cn ?? '') } : undefined;
    throw await refuse(d.status === 404 ? notFound() : new ApiError(403, 'forbidden', { reason: d.reason }), known, d.reason);
  }
  const target = { dn: d.target.dn, name: String(d.target.attributes.cn ?? '') };
  // an expiry changes the directory: its decision is on record before the service is asked; a
  // reveal's decision row is written with its outcome, before the password is opened: no password
  // leaves without both on record
  if (op === 'laps.expire') {
    await hops.time('console.auditDecision', () => ctx.rt.audit.append(decisionRow!));
    decisionRow = undefined;
  }

  // when another writer was seen lately (or no head is known), the chain's head is read while the
  // service works, so the outcome's append starts from it; a head known wrongly costs one lost write
  const headRead = ctx.rt.audit.refreshHeadIfContended().catch(() => undefined);
  let res: Awaited<ReturnType<typeof callPasswordService>>;
  try {
    // .finally: the head's read is done before anything is appended, answer or failure
    res = await hops.time('console.invoke', () =>
      callPasswordService(
        {
          computerGuid: d.target.guid,
          expectedDn: d.target.dn,
          vipAllowed: d.cls.kind === 'vip' && d.vipManage,
          operator: { guid: actor.identity.guid, name: actor.identity.username },
          correlationId,
          ...(op === 'bitlocker.read' ? { op, keyId: keyId!.toUpperCase() } : { op }),
        },
        processEnvironment(),
        hops,
      ).finally(() => headRead),
    );
  } catch (e) {
    throw await refuse(e as ApiError, target);
  }
  const done = () => logger.info('laps_timing', { correlationId, operation: op, hops: hops.hops, total: hops.total() });
  if (!res.ok) {
    const [status, code] = SERVICE_CODES[res.code] ?? [503, 'laps_unavailable'];
    const outcome = code === 'laps_unavailable' || code === 'laps_not_configured' || code === 'bitlocker_not_configured' || code === 'trust_not_pinned' ? 'failed' : 'denied';
    await audit(outcome, res.code, target);
    // the rate window tells when the oldest operation in it leaves (the UI says "try again in N min")
    const retry = code === 'rate_limited' && typeof res.retryAfterMs === 'number' ? { retryAfterSeconds: Math.max(1, Math.ceil(res.retryAfterMs / 1000)) } : undefined;
    throw new ApiError(status, code, retry);
  }
  if (op === 'laps.expire') {
    await hops.time('console.auditOutcome', () => audit('success', 'expired', target));
    done();
    return { expired: true };
  }
  if (op === 'bitlocker.read') {
    const recovery = openPassword<BitlockerPayload>(await loadLinkKey(), res.sealed!, d.target.guid, correlationId);
    // the key id is what the user reads off the screen, not a secret: the row names it
    await hops.time('console.auditOutcome', () => audit('success', `key:${recovery.keyId}`, target));
    done();
    return recovery;
  }
  const payload = openPassword<LapsPayload>(await loadLinkKey(), res.sealed!, d.target.guid, correlationId);
  await hops.time('console.auditOutcome', () => audit('success', `source:${payload.source}`, target));
  done();
  return payload;
}
