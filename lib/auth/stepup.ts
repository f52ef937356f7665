import { badRequest, forbidden } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { StepUpMode } from '../setup/settings';
import { checkTotpCode, hasAuthenticator } from './operators';
import { recordFailure, failureCount } from './rate-limit';
import { updateSession, type Session } from './sessions';
import { tooMany } from '../errors';

export type Proof = 'authenticator' | 'password';

/** The proof the usual step-up asks of this operator in this mode (none: no proof). */
export async function usualProof(rt: ConsoleRuntime, session: Session, mode: StepUpMode): Promise<Proof | undefined> {
  if (mode === 'none') return undefined;
  if (mode === 'password') return 'password';
  return (await hasAuthenticator(rt.store, session.operator!.guid)) ? 'authenticator' : 'password';
}

/** The proof a strict step-up (LAPS) asks: always one, even in mode `none`. */
export async function strictProof(rt: ConsoleRuntime, session: Session): Promise<Proof> {
  return (await hasAuthenticator(rt.store, session.operator!.guid)) ? 'authenticator' : 'password';
}

/**
 * Step-up by authenticator code or directory password (audited `auth.reauth`). Failures count
 * against the same per-account limit as sign-in, so a step-up cannot be used to guess passwords.
 */
export async function stepUp(
  rt: ConsoleRuntime,
  session: Session,
  input: { code?: string; password?: string },
  ctx: { sourceIp: string; correlationId: string },
): Promise<Proof> {
  const op = session.operator!;
  const settings = (await rt.settings())!;
  const limits = rt.config.SignIn;
  const account = op.username.toLowerCase();
  if ((await failureCount(rt.store, 'signin-account', account, limits.FailureWindow)) >= limits.MaxFailuresPerAccount) {
    throw tooMany('signin_rate_limited', { retryAfterSeconds: limits.FailureWindow });
  }
  const enrolled = await hasAuthenticator(rt.store, op.guid);
  let proof: Proof;
  let ok: boolean;
  if (input.code !== undefined) {
    if (!enrolled) throw badRequest('no_authenticator');
    if (settings.stepUpMode === 'password') throw badRequest('password_required');
    proof = 'authenticator';
    ok = await checkTotpCode(rt.store, await rt.masterKey(), op.guid, input.code);
  } else if (input.password !== undefined) {
    // an enrolled operator in mode authenticator proves with the authenticator, not the password
    if (settings.stepUpMode === 'authenticator' && enrolled) throw badRequest('authenticator_code_required');
    proof = 'password';
    ok = await (await rt.directory()).pool.verifyCredentials({ user: op.dn, password: input.password });
  } else throw badRequest('proof_required');
  await rt.audit.append({
    event: 'auth.reauth',
    outcome: ok ? 'success' : 'failure',
    reason: proof,
    actor: { id: op.guid, name: op.username, provider: op.provider, ip: ctx.sourceIp },
    correlationId: ctx.correlationId,
  });
  if (!ok) {
    await recordFailure(rt.store, 'signin-account', account, limits.FailureWindow);
    throw forbidden('reauth_failed');
  }
  await updateSession(rt.store, session, { stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: proof });
  return proof;
}

export function hasRecentStepUp(rt: ConsoleRuntime, session: Session): boolean {
  return !!session.stepUpAt && Date.now() / 1000 - session.stepUpAt <= rt.config.Authentication.StepUpWindow;
}

/** Routes marked `stepUp` need a recent step-up in the instance mode (mode none: nothing to prove). */
export async function requireRecentStepUp(rt: ConsoleRuntime, session: Session): Promise<void> {
  const settings = (await rt.settings())!;
  if (session.operator?.provider === 'access') {
    if (rt.config.Authentication.Access.StepUp === 'Deny') throw forbidden('reauth_required', { proof: null });
    return; // the access-platform session is the step-up
  }
  const proof = await usualProof(rt, session, settings.stepUpMode);
  if (proof === undefined) return;
  if (!hasRecentStepUp(rt, session)) throw forbidden('reauth_required', { proof });
}

/**
 * The strict step-up of the LAPS routes (console spec, Reveal rule 3): always one, even in mode
 * `none`. Modes authenticator/password: the usual recent step-up. Mode none: a recent step-up by
 * the strict proof (authenticator if enrolled, else password). Access-platform operators: their
 * session, unless Authentication:Access:StepUp=Deny (then no proof is usable).
 */
export async function requireStrictStepUp(rt: ConsoleRuntime, session: Session): Promise<void> {
  if (session.operator?.provider === 'access') {
    if (rt.config.Authentication.Access.StepUp === 'Deny') throw forbidden('strict_reauth_required', { proof: null });
    return;
  }
  const settings = (await rt.settings())!;
  const proof = (await usualProof(rt, session, settings.stepUpMode)) ?? (await strictProof(rt, session));
  const recent = hasRecentStepUp(rt, session) && (settings.stepUpMode !== 'none' || session.stepUpProof === proof);
  if (!recent) throw forbidden('strict_reauth_required', { proof });
}
