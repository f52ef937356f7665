import { forbidden } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { StepUpMode } from '../setup/settings';
import { hasAuthenticator } from './operators';
import { hasPasskey } from './passkey-records';
import { readOncePerRequest, shareRequestRead } from '../request-scope';
import { updateSession, type Session } from './sessions';

export type Proof = 'authenticator' | 'password' | 'passkey';

// A step-up window satisfies the proof it was opened with or a weaker one: a window opened with
// the directory password does not satisfy a route that now asks for the authenticator (e.g. after
// the mode was switched from `password` to `authenticator`). A passkey satisfies what a code does.
const STRENGTH: Record<string, number> = { password: 1, authenticator: 2, passkey: 3 };
export const satisfies = (opened: string | undefined, asked: Proof) => (STRENGTH[opened ?? ''] ?? 0) >= STRENGTH[asked];

/** What an operator holds: a TOTP authenticator, passkeys (read together). */
export const enrolment = async (rt: ConsoleRuntime, guid: string) => {
  const [totp, passkey] = await Promise.all([hasAuthenticator(rt.store, guid), hasPasskey(rt.store, guid)]);
  return { totp, passkey };
};

/**
 * The proof the usual step-up asks of this operator in this mode (none: no proof). Mode
 * `authenticator`: a code or a passkey (either satisfies 'authenticator'), the password without
 * either; mode `passkey` (issue 32): a passkey only.
 */
export async function usualProof(rt: ConsoleRuntime, session: Session, mode: StepUpMode): Promise<Proof | undefined> {
  if (mode === 'none') return undefined;
  if (mode === 'password') return 'password';
  if (mode === 'passkey') return 'passkey';
  const e = await enrolment(rt, session.operator!.guid);
  return e.totp || e.passkey ? 'authenticator' : 'password';
}

/** The proof a strict step-up (LAPS) asks: always one, even in mode `none`. */
export async function strictProof(rt: ConsoleRuntime, session: Session): Promise<Proof> {
  const e = await enrolment(rt, session.operator!.guid);
  return e.passkey && !e.totp ? 'passkey' : e.totp ? 'authenticator' : 'password';
}

/** A passkey's binding: the action and the target its assertion was made for. */
export const bindingOf = (action: string, target?: string) => `${action} ${target ?? ''}`.trim();

/**
 * The console pipeline names each operator request (its route, `POST /api/computers/{id}/laps`,
 * and its path parameters) for the request's strict step-up: a passkey assertion is made for that
 * action and target, so one reveal's assertion cannot serve another (issue 32).
 */
const STEP_UP_REQUEST = 'stepup:request';
export function noteStepUpRequest(action: string, target: string): void {
  shareRequestRead(STEP_UP_REQUEST, Promise.resolve({ action, ...(target ? { target } : {}) }));
}
const stepUpRequest = () => readOncePerRequest<{ action?: string; target?: string }>(STEP_UP_REQUEST, async () => ({}));

/** Where a step-up was asked (its audit row). */
export interface StepUpContext {
  sourceIp?: string;
  correlationId?: string;
  /** the strict step-up's action and target: a passkey assertion must have been made for them */
  action?: string;
  target?: string;
}

/**
 * An access-platform operator's step-up (console spec, Authentication 3): the session is the
 * step-up, audited `stepup:teleport`; with Authentication:Access:StepUp=Deny every step-up is
 * refused, 403 `strict_reauth_required` naming no usable proof (DESIGN decision 4), audited too.
 */
export async function accessStepUp(rt: ConsoleRuntime, session: Session, ctx: StepUpContext = {}): Promise<void> {
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
 * A recent step-up by passkey satisfies every usual step-up; one by the authenticator too, except
 * in mode `passkey` (only passkeys). The enrolment is read only when it can change the answer (a
 * window opened by password, none, or an expired one, whose refusal names the proof to ask for).
 */
const recentByPasskey = (rt: ConsoleRuntime, session: Session) => hasRecentStepUp(rt, session) && session.stepUpProof === 'passkey';

/** Routes marked `stepUp` need a recent step-up in the instance mode (mode none: nothing to prove). */
export async function requireRecentStepUp(rt: ConsoleRuntime, session: Session, ctx?: StepUpContext): Promise<void> {
  if (session.operator?.provider === 'access') return accessStepUp(rt, session, ctx);
  if (recentByPasskey(rt, session)) return;
  const settings = (await rt.settings())!;
  if (settings.stepUpMode !== 'passkey' && hasRecentStepUp(rt, session) && session.stepUpProof === 'authenticator') return;
  const proof = await usualProof(rt, session, settings.stepUpMode);
  if (proof === undefined) return;
  if (!hasRecentStepUp(rt, session) || !satisfies(session.stepUpProof, proof)) throw forbidden('reauth_required', { proof });
}

/**
 * A passkey change (register, remove) needs a recent step-up in the instance mode; in mode
 * `passkey` an operator who holds none yet proves with what they have (a code, else the password).
 */
export async function requirePasskeyChangeStepUp(rt: ConsoleRuntime, session: Session, ctx?: StepUpContext): Promise<void> {
  const settings = (await rt.settings())!;
  if (settings.stepUpMode !== 'passkey' || session.operator?.provider === 'access' || (await hasPasskey(rt.store, session.operator!.guid))) return requireRecentStepUp(rt, session, ctx);
  const proof: Proof = (await hasAuthenticator(rt.store, session.operator!.guid)) ? 'authenticator' : 'password';
  if (!hasRecentStepUp(rt, session) || !satisfies(session.stepUpProof, proof)) throw forbidden('reauth_required', { proof });
}

/**
 * The strict step-up of the LAPS routes (console spec, Reveal rule 3): always one, even in mode
 * `none`. A passkey assertion made for this very action and target passes once (issue 32: one
 * reveal's assertion cannot serve another). Modes authenticator/password: the usual recent
 * step-up. Mode none: a recent step-up by the strict proof (authenticator if enrolled, else
 * password). Mode passkey, or an operator whose only authenticator is a passkey: a passkey made
 * for this request. Access-platform operators: their session, unless Authentication:Access:StepUp=Deny.
 * The refusal names the proof, and the action and target a passkey challenge is to be made for.
 */
export async function requireStrictStepUp(rt: ConsoleRuntime, session: Session, given?: StepUpContext): Promise<void> {
  if (session.operator?.provider === 'access') return accessStepUp(rt, session, given);
  const ctx: StepUpContext = { ...(await stepUpRequest()), ...given };
  const recent = hasRecentStepUp(rt, session);
  if (recent && session.stepUpProof === 'passkey' && ctx?.action && session.stepUpFor === bindingOf(ctx.action, ctx.target)) {
    // used once: the next strict step-up needs a new assertion
    await updateSession(rt.store, session, { stepUpFor: undefined });
    session.stepUpFor = undefined;
    return;
  }
  const settings = (await rt.settings())!;
  const mode = settings.stepUpMode;
  if (mode !== 'passkey' && recent && session.stepUpProof === 'authenticator') return;
  const held = await enrolment(rt, session.operator!.guid);
  const passkeyFor = ctx?.action ? { passkey: { action: ctx.action, ...(ctx.target ? { target: ctx.target } : {}) } } : {};
  if (mode === 'passkey' || (held.passkey && !held.totp)) throw forbidden('strict_reauth_required', { proof: 'passkey', ...passkeyFor });
  const strict: Proof = held.totp ? 'authenticator' : 'password';
  const proof: Proof = mode === 'password' ? 'password' : strict; // mode authenticator: the usual proof is the strict one; mode none: strict
  const ok = recent && session.stepUpProof !== 'passkey' && satisfies(session.stepUpProof, proof);
  if (!ok) throw forbidden('strict_reauth_required', { proof, ...(held.passkey ? passkeyFor : {}) });
}
