import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { AuditActor } from '../audit';
import { hasAnyRole, operatorRights } from '../authz/rights';
import { ApiError, conflict, forbidden, tooMany, unauthorized } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { readSettings, writeSettings } from '../setup/settings';
import { readSignInPolicy } from './access-only';
import { noteSignIn } from './operators';
import { assertionOptions, PasskeyRefusal, relyingParty, verifyAssertion } from './passkeys';
import { addressRefused, admitSignIn } from './rate-limit';
import { createSession, destroySession, type OperatorIdentity, type Session } from './sessions';
import { sessionPolicy } from './signin';

// Sign-in with a discoverable passkey alone (issue 32), when an administrator allows it
// (`passkeySignIn` in the instance settings, default off): the passkey names its operator, whose
// directory account is then read by GUID and checked like a password sign-in's (enabled, holding
// a role); the session's facts are re-read on later requests as for every session.

interface Ctx {
  sourceIp: string;
  correlationId: string;
  preSession?: Session;
}

async function allowed(rt: ConsoleRuntime) {
  const settings = await rt.settings();
  if (!settings) throw new ApiError(503, 'not_configured');
  if (!rt.config.Authentication.ActiveDirectory.Enabled) throw forbidden('password_signin_disabled');
  if (!settings.passkeySignIn) throw forbidden('passkey_signin_disabled');
  if ((await readSignInPolicy(rt.store)).accessOnly) throw forbidden('access_platform_only');
  return settings;
}

/** Whether the sign-in page offers a passkey alone. */
export async function passkeySignInAllowed(rt: ConsoleRuntime): Promise<boolean> {
  const settings = await rt.settings();
  return !!settings?.passkeySignIn && rt.config.Authentication.ActiveDirectory.Enabled && !(await readSignInPolicy(rt.store)).accessOnly;
}

/** The challenge of a discoverable sign-in (no credential listed: the authenticator offers its passkeys for the rpId). */
export async function passkeySignInOptions(rt: ConsoleRuntime, ctx: Ctx) {
  await allowed(rt);
  if (!ctx.preSession) throw unauthorized();
  return assertionOptions(rt.store, relyingParty(rt.config.Hosting.PublicOrigin), await rt.masterKey(), { purpose: 'signin' }, ctx.preSession.id);
}

/** Sign in with a passkey alone; audited `auth.login` (reason `passkey`, refusals with their code). */
export async function passkeySignIn(rt: ConsoleRuntime, response: AuthenticationResponseJSON, ctx: Ctx): Promise<{ session: Session; operator: OperatorIdentity }> {
  const audit = (outcome: string, reason: string, guid?: string, name?: string) =>
    rt.audit.append({ event: 'auth.login', outcome, reason, actor: { name: name ?? 'passkey', provider: 'ad', ip: ctx.sourceIp, ...(guid ? { id: guid } : {}) }, correlationId: ctx.correlationId });
  let settings;
  try {
    settings = await allowed(rt);
  } catch (e) {
    if (e instanceof ApiError) await audit('denied', e.code);
    throw e;
  }
  if (!ctx.preSession) throw unauthorized();
  const early = await addressRefused(rt.store, rt.config.SignIn, ctx.sourceIp);
  if (early && !early.admitted) {
    await audit('denied', `rate_limited:${early.limit}`);
    throw tooMany('signin_rate_limited', { retryAfterSeconds: early.retryAfterSeconds });
  }
  let guid: string;
  try {
    guid = (await verifyAssertion(rt.store, relyingParty(rt.config.Hosting.PublicOrigin), await rt.masterKey(), 'signin', ctx.preSession.id, response)).guid;
  } catch (e) {
    if (e instanceof PasskeyRefusal) {
      await audit('failure', e.code);
      throw new ApiError(401, e.code);
    }
    throw e;
  }
  const attempt = await admitSignIn(rt.store, rt.config.SignIn, `guid:${guid}`, ctx.sourceIp);
  if (!attempt.admitted) {
    await audit('denied', `rate_limited:${attempt.limit}`, guid);
    throw tooMany('signin_rate_limited', { retryAfterSeconds: attempt.retryAfterSeconds });
  }
  try {
    // the directory account, read by GUID: still there, enabled, holding a role
    const dir = await rt.directory();
    const dn = await dir.dnOfGuid(guid);
    const facts = dn ? await dir.principalFacts(dn) : undefined;
    if (!facts || facts.userAccountControl & 0x2) {
      await audit('failure', facts ? 'account_disabled' : 'unknown_account', guid);
      throw unauthorized('invalid_credentials');
    }
    if (!hasAnyRole(await operatorRights(rt.store, settings, facts))) {
      await audit('denied', 'no_role', guid, facts.samAccountName.toLowerCase());
      throw forbidden('no_console_role');
    }
    const operator: OperatorIdentity = { guid: facts.guid, dn: facts.dn, username: facts.samAccountName, displayName: facts.displayName, sid: facts.sid, groupSids: facts.groupSids, provider: 'ad', factsAt: Date.now() };
    await destroySession(rt.store, ctx.preSession.id);
    // the touch is a fresh, user-verified proof: the step-up window opens with the session (as in lib/auth/signin.ts)
    const session = await createSession(rt.store, sessionPolicy(rt), operator, { stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: 'passkey' });
    await noteSignIn(rt.store, { guid: facts.guid, username: facts.samAccountName, displayName: facts.displayName, provider: 'ad', subject: facts.guid });
    await audit('success', 'passkey', guid, facts.samAccountName.toLowerCase());
    return { session, operator };
  } finally {
    await attempt.succeeded();
  }
}

/** PUT /api/settings/passkey-sign-in: allow or refuse a passkey alone at sign-in; audited `settings.passkey_sign_in`. */
export async function updatePasskeySignIn(rt: ConsoleRuntime, allow: boolean, actor: AuditActor, correlationId: string) {
  const current = await readSettings(rt.store);
  if (!current) throw conflict('not_configured');
  const old = !!current.settings.passkeySignIn;
  if (!(await writeSettings(rt.store, { ...current.settings, passkeySignIn: allow }, current.version))) throw conflict('settings_changed_concurrently');
  await rt.settings();
  await rt.audit.append({ event: 'settings.passkey_sign_in', outcome: 'success', actor, correlationId, details: { old, new: allow } });
  return { allowed: allow, previous: old };
}
