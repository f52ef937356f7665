import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { badRequest, forbidden, tooMany } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { checkTotpCode } from './operators';
import { PasskeyRefusal, relyingParty, verifyAssertion } from './passkeys';
import { admitStepUp } from './rate-limit';
import { updateSession, type Session } from './sessions';
import { accessStepUp, bindingOf, enrolment, type Proof } from './stepup';

// The step-up itself (POST /api/auth/reauth): the proof checked and the window opened. Apart from
// the requirements (lib/auth/stepup.ts) since a passkey's check bundles the WebAuthn library, which
// only the sign-in function carries (docs/decisions.md, issue 32).

/**
 * Step-up by authenticator code, directory password or passkey (audited `auth.reauth`; a passkey's
 * row says `stepup:passkey` with the action and target its challenge was made for). Failures count
 * in the operator's own step-up window (MaxStepUpFailures, then 429 `reauth_rate_limited`) and in
 * the account-wide window that slows sign-ins; they never refuse a sign-in (docs/decisions.md, Console 7).
 * Mode `passkey`: a code or the password is refused to an operator who holds a passkey; one who
 * holds none may still prove with them, which opens a window good only for registering one.
 */
export async function stepUp(
  rt: ConsoleRuntime,
  session: Session,
  input: { code?: string; password?: string; passkey?: AuthenticationResponseJSON },
  ctx: { sourceIp: string; correlationId: string },
): Promise<Proof | 'access'> {
  const op = session.operator!;
  // an access-platform operator proves nothing here: the session is the step-up (or none is usable)
  if (op.provider === 'access') {
    await accessStepUp(rt, session, ctx);
    return 'access';
  }
  const settings = (await rt.settings())!;
  const actor = { id: op.guid, name: op.username, provider: op.provider, ip: ctx.sourceIp };
  if (input.passkey) return passkeyStepUp(rt, session, input.passkey, actor, ctx.correlationId);
  const held = await enrolment(rt, op.guid);
  const enrolled = held.totp;
  if (settings.stepUpMode === 'passkey' && held.passkey && (input.code !== undefined || input.password !== undefined)) throw badRequest('passkey_required');
  let proof: Proof;
  if (input.code !== undefined) {
    if (!enrolled) throw badRequest('no_authenticator');
    if (settings.stepUpMode === 'password') throw badRequest('password_required');
    proof = 'authenticator';
  } else if (input.password !== undefined) {
    // an enrolled operator in mode authenticator proves with the authenticator, not the password
    if ((settings.stepUpMode === 'authenticator' || settings.stepUpMode === 'passkey') && enrolled) throw badRequest('authenticator_code_required');
    // one whose only authenticator is a passkey, with the passkey (the password's window would satisfy no route)
    if (settings.stepUpMode === 'authenticator' && held.passkey) throw badRequest('passkey_required');
    proof = 'password';
  } else throw badRequest('proof_required');

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
  await updateSession(rt.store, session, { stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: proof, stepUpFor: undefined });
  return proof;
}

/**
 * A step-up by passkey: the assertion answers a challenge made for this operator, this session,
 * and an action and target (POST /api/auth/passkeys/step-up-options); the window it opens serves
 * the usual step-ups, and its binding serves the one strict step-up of that action and target.
 */
async function passkeyStepUp(
  rt: ConsoleRuntime,
  session: Session,
  response: AuthenticationResponseJSON,
  actor: { id: string; name: string; provider: string; ip: string },
  correlationId: string,
): Promise<Proof> {
  const rp = relyingParty(rt.config.Hosting.PublicOrigin);
  const attempt = await admitStepUp(rt.store, rt.config.SignIn, actor.id);
  if (!attempt.admitted) {
    await rt.audit.append({ event: 'auth.reauth', outcome: 'denied', reason: 'rate_limited:step_up', actor, correlationId });
    throw tooMany('reauth_rate_limited', { retryAfterSeconds: attempt.retryAfterSeconds });
  }
  let verified;
  try {
    verified = await verifyAssertion(rt.store, rp, await rt.masterKey(), 'stepup', session.id, response, actor.id);
  } catch (e) {
    if (!(e instanceof PasskeyRefusal)) {
      await attempt.succeeded();
      throw e;
    }
    await attempt.failed();
    await rt.audit.append({ event: 'auth.reauth', outcome: 'failure', reason: 'stepup:passkey', actor, correlationId, details: { code: e.code } });
    throw e;
  }
  await attempt.succeeded();
  const { action, target } = verified.binding;
  await rt.audit.append({
    event: 'auth.reauth',
    outcome: 'success',
    reason: 'stepup:passkey',
    actor,
    correlationId,
    details: { credential: verified.ref, ...(action ? { action } : {}), ...(target ? { target } : {}) },
  });
  await updateSession(rt.store, session, { stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: 'passkey', stepUpFor: action ? bindingOf(action, target) : undefined });
  return 'passkey';
}

