import { ApiError, forbidden, tooMany, unauthorized } from '../errors';
import { hasAnyRole, operatorRights } from '../authz/rights';
import type { ConsoleRuntime } from '../runtime';
import { DirectoryInvalidCredentials } from '../directory';
import { checkTotpCode, getOperator, pendingEnrolmentSecret } from './operators';
import { failureCount, recordFailure } from './rate-limit';
import { createSession, destroySession, type OperatorIdentity, type Session } from './sessions';
import { totpUri } from './totp';

export interface SignInInput {
  username: string;
  password: string;
  code?: string;
}
export interface SignInContext {
  sourceIp: string;
  correlationId: string;
  preSession?: Session;
}

/**
 * Directory sign-in (console spec, Authentication 1 and 4):
 * rate limits (per account and per address, before any bind, so the AD account is never locked
 * out by us) → resolve the user with the read account → bind as the user over LDAPS →
 * the operator must hold a role → with step-up mode `authenticator`, an authenticator code, or
 * the enrolment steps (password, key, first code; no session before that) → a new session id.
 */
export async function signIn(rt: ConsoleRuntime, input: SignInInput, ctx: SignInContext): Promise<{ session: Session; operator: OperatorIdentity }> {
  const settings = await rt.settings();
  if (!settings) throw new ApiError(503, 'not_configured');
  if (!rt.config.Authentication.ActiveDirectory.Enabled) throw forbidden('password_signin_disabled');
  const account = input.username.trim().toLowerCase();
  const limits = rt.config.SignIn;
  const audit = (outcome: string, reason: string, extra: Record<string, unknown> = {}) =>
    rt.audit.append({
      event: 'auth.login',
      outcome,
      reason,
      actor: { name: account, provider: 'ad', ip: ctx.sourceIp, ...(extra.guid ? { id: String(extra.guid) } : {}) },
      correlationId: ctx.correlationId,
    });

  const [perAccount, perAddress] = await Promise.all([
    failureCount(rt.store, 'signin-account', account, limits.FailureWindow),
    failureCount(rt.store, 'signin-address', ctx.sourceIp, limits.FailureWindow),
  ]);
  if (perAccount >= limits.MaxFailuresPerAccount || perAddress >= limits.MaxFailuresPerAddress) {
    await audit('denied', perAccount >= limits.MaxFailuresPerAccount ? 'rate_limited:account' : 'rate_limited:address');
    throw tooMany('signin_rate_limited', { retryAfterSeconds: limits.FailureWindow });
  }
  const fail = async (reason: string, code = 'invalid_credentials', guid?: string) => {
    await Promise.all([
      recordFailure(rt.store, 'signin-account', account, limits.FailureWindow),
      recordFailure(rt.store, 'signin-address', ctx.sourceIp, limits.FailureWindow),
    ]);
    await audit('failure', reason, { guid });
    return unauthorized(code);
  };

  const directory = await rt.directory();
  const dn = await directory.findUserDn(input.username.trim());
  if (!dn) throw await fail('unknown_account');
  try {
    const ok = await directory.pool.verifyCredentials({ user: dn, password: input.password });
    if (!ok) throw await fail('bad_password');
  } catch (e) {
    if (e instanceof DirectoryInvalidCredentials) throw await fail('bad_password');
    throw e;
  }
  const facts = await directory.principalFacts(dn);
  if (!facts) throw await fail('unknown_account');
  if (facts.userAccountControl & 0x2) throw await fail('account_disabled', 'invalid_credentials', facts.guid);

  const rights = await operatorRights(rt.store, settings, facts);
  if (!hasAnyRole(rights)) {
    await audit('denied', 'no_role', { guid: facts.guid });
    throw forbidden('no_console_role');
  }

  if (settings.stepUpMode === 'authenticator') {
    const key = await rt.masterKey();
    const rec = await getOperator(rt.store, facts.guid);
    const enrolled = !!rec?.data.totpSealed;
    if (!enrolled) {
      if (!input.code) {
        const secret = await pendingEnrolmentSecret(rt.store, key, facts.guid, facts.samAccountName);
        await audit('pending', 'totp_enrolment_required', { guid: facts.guid });
        throw new ApiError(401, 'totp_enrolment_required', { secret, otpauthUri: totpUri(secret, facts.upn ?? facts.samAccountName) });
      }
      if (!(await checkTotpCode(rt.store, key, facts.guid, input.code, { enrol: true }))) throw await fail('totp_enrolment_invalid', 'totp_invalid', facts.guid);
      await rt.audit.append({ event: 'auth.totp_enrolled', outcome: 'success', actor: { id: facts.guid, name: facts.samAccountName, provider: 'ad', ip: ctx.sourceIp }, correlationId: ctx.correlationId });
    } else {
      if (!input.code) {
        await audit('pending', 'totp_required', { guid: facts.guid });
        throw new ApiError(401, 'totp_required');
      }
      if (!(await checkTotpCode(rt.store, key, facts.guid, input.code))) throw await fail('totp_invalid', 'totp_invalid', facts.guid);
    }
  }

  const operator: OperatorIdentity = {
    guid: facts.guid,
    dn: facts.dn,
    username: facts.samAccountName,
    displayName: facts.displayName,
    sid: facts.sid,
    groupSids: facts.groupSids,
    provider: 'ad',
    factsAt: Date.now(),
  };
  // a new session id at sign-in (no fixation); the anonymous pre-session is dropped
  if (ctx.preSession) await destroySession(rt.store, ctx.preSession.id);
  const session = await createSession(rt.store, sessionPolicy(rt), operator);
  await audit('success', settings.stepUpMode === 'authenticator' ? 'password+authenticator' : 'password', { guid: facts.guid });
  return { session, operator };
}

export const sessionPolicy = (rt: ConsoleRuntime) => ({
  idleSeconds: rt.config.Session.IdleTimeout,
  absoluteSeconds: rt.config.Session.AbsoluteTimeout,
});

/** Failed sign-ins in the last 24 h (reported by the fleet status endpoint). */
export async function failedSignIns24h(rt: ConsoleRuntime): Promise<number> {
  return rt.audit.countSince('auth.login', new Date(Date.now() - 86400_000), 'failure');
}
