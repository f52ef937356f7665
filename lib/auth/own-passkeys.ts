import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { ApiError, forbidden, notFound } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { assertionOptions, completeRegistration, registrationOptions, relyingParty } from './passkeys';
import { deletePasskey, hasPasskey, listPasskeys, MAX_PASSKEYS } from './passkey-records';
import type { Session } from './sessions';
import { requirePasskeyChangeStepUp } from './stepup';

// An operator's own passkeys (issue 32): register (step-up first), list, remove (step-up), and the
// challenge of a passkey step-up, made for an action and a target. Each change is audited.

interface Ctx {
  sourceIp: string;
  correlationId: string;
}
const actorOf = (session: Session, ctx: Ctx) => {
  const op = session.operator!;
  return { id: op.guid, name: op.username, provider: op.provider, ip: ctx.sourceIp };
};
// an access-platform operator's session is their step-up: no passkey of the console's
function directoryOperator(session: Session) {
  if (session.operator!.provider === 'access') throw forbidden('access_platform_operator');
  return session.operator!;
}

export async function ownPasskeys(rt: ConsoleRuntime, session: Session) {
  return { items: await listPasskeys(rt.store, session.operator!.guid), max: MAX_PASSKEYS };
}

export async function ownRegistrationOptions(rt: ConsoleRuntime, session: Session, ctx: Ctx) {
  const op = directoryOperator(session);
  const rp = relyingParty(rt.config.Hosting.PublicOrigin);
  await requirePasskeyChangeStepUp(rt, session, ctx);
  return registrationOptions(rt.store, rp, op, session.id, await rt.masterKey());
}

/** Register a passkey (audited `auth.passkey_registered`, refusals too with their code). */
export async function registerOwnPasskey(rt: ConsoleRuntime, session: Session, response: RegistrationResponseJSON, name: string, ctx: Ctx) {
  const op = directoryOperator(session);
  const rp = relyingParty(rt.config.Hosting.PublicOrigin);
  await requirePasskeyChangeStepUp(rt, session, ctx);
  const actor = actorOf(session, ctx);
  try {
    const summary = await completeRegistration(rt.store, rp, await rt.masterKey(), op, session.id, response, name);
    await rt.audit.append({ event: 'auth.passkey_registered', outcome: 'success', actor, correlationId: ctx.correlationId, details: { credential: summary.ref, name: summary.name } });
    return summary;
  } catch (e) {
    if (e instanceof ApiError) await rt.audit.append({ event: 'auth.passkey_registered', outcome: 'failure', reason: e.code, actor, correlationId: ctx.correlationId });
    throw e;
  }
}

/** Remove one of one's passkeys (step-up; audited `auth.passkey_removed`). */
export async function removeOwnPasskey(rt: ConsoleRuntime, session: Session, ref: string, ctx: Ctx) {
  const op = directoryOperator(session);
  await requirePasskeyChangeStepUp(rt, session, ctx);
  const removed = await deletePasskey(rt.store, op.guid, ref);
  if (!removed) throw notFound();
  await rt.audit.append({ event: 'auth.passkey_removed', outcome: 'success', actor: actorOf(session, ctx), correlationId: ctx.correlationId, details: { credential: removed.ref, name: removed.name } });
}

/** The challenge of a passkey step-up, made for an action and a target (a strict step-up accepts it for those only). */
export async function ownStepUpOptions(rt: ConsoleRuntime, session: Session, purposeOf: { action: string; target?: string }) {
  const op = directoryOperator(session);
  const rp = relyingParty(rt.config.Hosting.PublicOrigin);
  if (!(await hasPasskey(rt.store, op.guid))) throw forbidden('no_passkey');
  return assertionOptions(rt.store, rp, await rt.masterKey(), { purpose: 'stepup', guid: op.guid, action: purposeOf.action, ...(purposeOf.target ? { target: purposeOf.target } : {}) }, session.id);
}
