import { badRequest, forbidden, tooMany } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { StepUpMode } from '../setup/settings';
import { checkTotpCode, hasAuthenticator } from './operators';
import { admitStepUp } from './rate-limit';
import { updateSession, type Session } from './sessions';

export type Proof = 'authenticator' | 'password';

// A step-up window satisfies the proof it was opened with or a weaker one: a window opened with
// the directory password does not satisfy a route that now asks for the authenticator (e.g. after
// the mode was switched from `password` to `authenticator`).
const STRENGTH: Record<string, number> = { password: 1, authenticator: 2 };
export const satisfies = (opened: string | undefined, asked: Proof) => (STRENGTH[opened ?? ''] ?? 0) >= STRENGTH[asked];

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
 * Step-up by authenticator code or directory password (audited `auth.reauth`). Failures count in
 * the operator's own step-up window (MaxStepUpFailures, then 429 `reauth_rate_limited`) and in the
 * account-wide window that slows sign-ins; they never refuse a sign-in (docs/decisions.md, Console 7).
 */
export async function stepUp(
  rt: ConsoleRuntime,
  session: Session,
  input: { code?: string; password?: string },
  ctx: { sourceIp: string; correlationId: string },
): Promise<Proof | 'access'> {
  const op = session.operator!;
  // an access-platform operator proves nothing here: the session is the step-up (or none is usable)
  if (op.provider === 'access') {
    await accessStepUp(rt, session, ctx);
    return 'access';
  }
  const settings = (await rt.settings())!;
  const enrolled = await hasAuthenticator(rt.store, op.guid);
  let proof: Proof;
  if (input.code !== undefined) {
    if (!enrolled) throw badRequest('no_authenticator');
    if (settings.stepUpMode === 'password') throw badRequest('password_required');
    proof = 'authenticator';
  } else if (input.password !== undefined) {
    // an enrolled operator in mode authenticator proves with the authenticator, not the password
    if (settings.stepUpMode === 'authenticator' && enrolled) throw badRequest('authenticator_code_required');
    proof = 'password';
  } else throw badRequest('proof_required');

  const actor = { id: op.guid, name: op.username, provider: op.provider, ip: ctx.sourceIp };
  const attempt = await admitStepUp(rt.store, rt.config.SignIn, op.guid);
  if (!attempt.admitted) {
    await rt.audit.append({ event: 'auth.reauth', outcome: 'denied', reason: 'rate_limited:step_up', actor, correlationId: ctx.correlationId });
    throw tooMany('reauth_rate_limited', { retryAfterSeconds: attempt.retryAfterSeconds });
  }
  let ok: boolean;
  try {
    ok =
      proof === 'authenticator'
        ? await checkTotpCode(rt.store, await rt.masterKey(), op.guid, input.code!)
        : await (await rt.directory()).verifyCredentials({ user: op.dn, password: input.password! });
  } catch (e) {
    await attempt.succeeded(); // no answer is not a failed proof
    throw e;
  }
  await (ok ? attempt.succeeded() : attempt.failed());
  await rt.audit.append({
    event: 'auth.reauth',
    outcome: ok ? 'success' : 'failure',
    reason: proof,
    actor,
    correlationId: ctx.correlationId,
    ...(attempt.slowed ? { details: { slowed: true } } : {}),
  });
  if (!ok) throw forbidden('reauth_failed');
  await updateSession(rt.store, session, { stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: proof });
  return proof;
}

/** Where a step-up was asked (its audit row). */
export interface StepUpContext {
  sourceIp?: string;
  correlationId?: string;
}

/**
 * An access-platform operator's step-up (console spec, Authentication 3): the session is the
 * step-up, audited `stepup:teleport`; with Authentication:Access:StepUp=Deny every step-up is
 * refused, 403 `strict_reauth_required` naming no usable proof (DESIGN decision 4), audited too.
 */
async function accessStepUp(rt: ConsoleRuntime, session: Session, ctx: StepUpContext = {}): Promise<void> {
  const op = session.operator!;
  const deny = rt.config.Authentication.Access.StepUp === 'Deny';
  await rt.audit.append({
    event: 'auth.reauth',
    outcome: deny ? 'denied' : 'success',
    reason: 'stepup:teleport',
    actor: { id: op.guid, name: op.username, provider: op.provider, ...(ctx.sourceIp ? { ip: ctx.sourceIp } : {}) },
    ...(ctx.correlationId ? { correlationId: ctx.correlationId } : {}),
    details: { stepUp: deny ? 'Deny' : 'Session' },
  });
  if (deny) throw forbidden('strict_reauth_required', { proof: null });
}

export function hasRecentStepUp(rt: ConsoleRuntime, session: Session): boolean {
  return !!session.stepUpAt && Date.now() / 1000 - session.stepUpAt <= rt.config.Authentication.StepUpWindow;
}

/**
 * A recent step-up by the authenticator satisfies every proof a route can ask (whatever the mode
 * and the enrolment): the enrolment is read only when it can change the answer (a window opened by
 * password, none, or an expired one, whose refusal names the proof to ask for).
 */
const recentByStrongestProof = (rt: ConsoleRuntime, session: Session) => hasRecentStepUp(rt, session) && satisfies(session.stepUpProof, 'authenticator');

/** Routes marked `stepUp` need a recent step-up in the instance mode (mode none: nothing to prove). */
export async function requireRecentStepUp(rt: ConsoleRuntime, session: Session, ctx?: StepUpContext): Promise<void> {
  if (session.operator?.provider === 'access') return accessStepUp(rt, session, ctx);
  if (recentByStrongestProof(rt, session)) return;
  const settings = (await rt.settings())!;
  const proof = await usualProof(rt, session, settings.stepUpMode);
  if (proof === undefined) return;
  if (!hasRecentStepUp(rt, session) || !satisfies(session.stepUpProof, proof)) throw forbidden('reauth_required', { proof });
}

/**
 * The strict step-up of the LAPS routes (console spec, Reveal rule 3): always one, even in mode
 * `none`. Modes authenticator/password: the usual recent step-up. Mode none: a recent step-up by
 * the strict proof (authenticator if enrolled, else password). Access-platform operators: their
 * session, unless Authentication:Access:StepUp=Deny (then no proof is usable).
 */
export async function requireStrictStepUp(rt: ConsoleRuntime, session: Session, ctx?: StepUpContext): Promise<void> {
  if (session.operator?.provider === 'access') return accessStepUp(rt, session, ctx);
  if (recentByStrongestProof(rt, session)) return;
  // the mode and the enrolment are independent reads: together
  const [settings, enrolled] = await Promise.all([rt.settings(), hasAuthenticator(rt.store, session.operator!.guid)]);
  const strict: Proof = enrolled ? 'authenticator' : 'password';
  const mode = settings!.stepUpMode;
  const proof: Proof = mode === 'password' ? 'password' : strict; // mode authenticator: the usual proof is the strict one; mode none: strict
  const recent = hasRecentStepUp(rt, session) && satisfies(session.stepUpProof, proof);
  if (!recent) throw forbidden('strict_reauth_required', { proof });
}
