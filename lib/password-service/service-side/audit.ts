import type { AuditInput } from '../../audit';
import type { ServiceRequest, ServiceResponse } from '../link';

export { SERVICE_CHAIN, serviceAuditChain } from '../link/service-chain';

// The password service's own audit chain (beyond the spec): one row per operation it was asked
// for, whoever asked, refusals and link refusals included, written before the answer leaves. The
// console's chain records the operator's decision; this one records what the holder of the link
// key made the service do, so a password read made with the key outside the console is on record.
// Rows carry the operation, its outcome, the target, the operator the request claims and the
// correlation id; never a password (the answer is sealed and not looked into).

const text = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : undefined);

/** The row of one invocation: `request` is undefined when the link did not verify (nothing in it is trusted). */
export function serviceAuditRow(request: ServiceRequest | undefined, response: ServiceResponse, failed = false): AuditInput {
  const link = { name: 'helpdesk-link', provider: 'link' };
  if (!request) return { event: 'link.refused', outcome: 'failure', reason: response.ok ? undefined : response.code, actor: link };
  const r = request as Partial<Record<string, unknown>> & { op?: unknown };
  const operator = r.operator as { guid?: unknown; name?: unknown } | undefined;
  const targetId = text(r.computerGuid, 64) ?? text(r.userGuid, 64);
  const details: Record<string, unknown> = {};
  if (r.op === 'laps.read' || r.op === 'laps.expire' || r.op === 'bitlocker.read' || r.op === 'users.password.reset') details.vipAllowed = r.vipAllowed === true;
  // the recovery entry asked for (its key id is what the recovery screen shows, not a secret)
  if (r.op === 'bitlocker.read' && text(r.keyId, 64)) details.keyId = text(r.keyId, 64);
  if (r.op === 'users.password.reset') Object.assign(details, { mustChange: r.mustChange === true, unlock: r.unlock === true });
  if (r.op === 'laps.diagnose' && Array.isArray(r.scopeDns)) details.scopes = r.scopeDns.length;
  return {
    event: text(r.op, 64) ?? 'unknown',
    outcome: response.ok ? 'success' : failed ? 'error' : 'failure',
    reason: response.ok ? (response.source ? `source:${response.source}` : undefined) : response.code,
    // the operator is what the signed request claims; the link key holder is the one who asked
    actor: operator ? { id: text(operator.guid, 64), name: text(operator.name, 256), provider: 'link' } : link,
    ...(targetId ? { target: { id: targetId, kind: r.computerGuid !== undefined ? 'computer' : 'user', ...(text(r.expectedDn, 1024) ? { dn: text(r.expectedDn, 1024) } : {}) } } : {}),
    correlationId: text(r.correlationId, 128),
    ...(Object.keys(details).length ? { details } : {}),
  };
}
