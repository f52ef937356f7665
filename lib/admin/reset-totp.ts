import { resetAuthenticator } from '../auth/operators';
import { findOperator, type OperatorLookup } from '../auth/operator-lookup';
import { deleteAllPasskeys } from '../auth/passkey-records';
import type { ConsoleRuntime } from '../runtime';

/**
 * `reset-totp <operator>`: clear the authenticator of the operator named by id (objectGUID), sign-in
 * name or a display name only one operator has, and end their sessions; audited
 * `operators.totp_reset`. Exit 1 (nothing changed) for an unknown or ambiguous name or an operator
 * without an authenticator.
 */
export async function resetOperatorTotp(rt: ConsoleRuntime, who: string, actor: { name: string; provider: string }): Promise<{ code: number; out: string }> {
  const lookup = await findOperator(rt.store, who, () => rt.directory());
  if (!lookup.found) return notFound(who, lookup);
  const op = lookup.found;
  // the authenticator and every session of the operator end together
  const { hadAuthenticator, sessionsEnded } = await resetAuthenticator(rt.store, op.guid);
  const target = { id: op.guid, name: op.username };
  if (!hadAuthenticator) {
    await rt.audit.append({ event: 'operators.totp_reset', outcome: 'denied', actor, reason: 'no_authenticator', target });
    return { code: 1, out: `${op.username} has no authenticator to reset: nothing changed` };
  }
  await rt.audit.append({ event: 'operators.totp_reset', outcome: 'success', actor, reason: 'recovery', target, details: { sessionsEnded } });
  return { code: 0, out: `authenticator of ${op.username} (${op.guid}) cleared and ${sessionsEnded} session(s) ended: they enrol again at their next sign-in` };
}

/** An unknown or ambiguous operator: exit 1, nothing changed (the candidates named by id). */
function notFound(who: string, lookup: Extract<OperatorLookup, { found?: undefined }>) {
  if (!lookup.candidates.length) return { code: 1, out: `no operator '${who}': nothing changed` };
  return { code: 1, out: `'${who}' names ${lookup.candidates.length} operators, nothing changed; give the operator id:\n${lookup.candidates.map((o) => `  ${o.guid}  ${o.username}`).join('\n')}` };
}

/**
 * `reset-authenticators <operator>` (issue 32): remove every passkey of the operator and clear
 * their authenticator (TOTP), and end their sessions: they enrol again at their next sign-in.
 * The recovery of a lost passkey, the last Super administrator's included; audited
 * `operators.authenticators_reset`, reason recovery. Exit 1 (nothing changed) for an unknown or
 * ambiguous name or an operator holding neither.
 */
export async function resetOperatorAuthenticators(rt: ConsoleRuntime, who: string, actor: { name: string; provider: string }): Promise<{ code: number; out: string }> {
  const lookup = await findOperator(rt.store, who, () => rt.directory());
  if (!lookup.found) return notFound(who, lookup);
  const op = lookup.found;
  const passkeysRemoved = await deleteAllPasskeys(rt.store, op.guid);
  const { hadAuthenticator, sessionsEnded } = await resetAuthenticator(rt.store, op.guid);
  const target = { id: op.guid, name: op.username };
  if (!passkeysRemoved && !hadAuthenticator) {
    await rt.audit.append({ event: 'operators.authenticators_reset', outcome: 'denied', actor, reason: 'no_authenticator', target });
    return { code: 1, out: `${op.username} has no passkey and no authenticator to reset: nothing changed` };
  }
  await rt.audit.append({ event: 'operators.authenticators_reset', outcome: 'success', actor, reason: 'recovery', target, details: { credentialsRemoved: passkeysRemoved, authenticatorCleared: hadAuthenticator, sessionsEnded } });
  return { code: 0, out: `${passkeysRemoved} passkey(s) removed${hadAuthenticator ? ' and the authenticator cleared' : ''} for ${op.username} (${op.guid}); ${sessionsEnded} session(s) ended: they enrol again at their next sign-in` };
}
