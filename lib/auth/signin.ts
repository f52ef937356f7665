import { randomBytes } from 'node:crypto';
import { ApiError, forbidden, tooMany, unauthorized } from '../errors';
import { hasAnyRole, operatorRights } from '../authz/rights';
import type { ConsoleRuntime } from '../runtime';
import { DirectoryInvalidCredentials, type PrincipalFacts } from '../directory';
import { readSignInPolicy } from './access-only';
import { checkTotpCode, getOperator, noteSignIn, pendingEnrolmentSecret } from './operators';
import { accountSubject, addressRefused, admitSignIn } from './rate-limit';
import { createSession, destroySession, type OperatorIdentity, type Session } from './sessions';
import { totpUri } from './totp';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { assertionOptions, completeRegistration, PasskeyRefusal, registrationOptions, relyingParty, verifyAssertion } from './passkeys';
import { hasPasskey } from './passkey-records';

export interface SignInInput {
  username: string;
  password: string;
  code?: string;
  /** a passkey assertion answering the options of `401 passkey_required` (or of `totp_required`'s `passkeyOptions`) */
  passkey?: AuthenticationResponseJSON;
  /** enrolment inside the sign-in with a passkey: the answer to `passkeyRegistrationOptions` */
  passkeyRegistration?: RegistrationResponseJSON;
}
export interface SignInContext {
  sourceIp: string;
  correlationId: string;
  preSession?: Session;
}

/** The directory operations a sign-in makes (the Directory class; a recorder in the unit tests). */
export interface SignInDirectory {
  baseDn: string;
  findUserDn(login: string): Promise<string | undefined>;
  principalFacts(dn: string): Promise<PrincipalFacts | undefined>;
  readCreds(): Promise<{ user: string }>;
  verifyCredentials(creds: { user: string; password: string }): Promise<boolean>;
}

// A DN that names no account: the bind a name that resolves to no account still makes.
const DECOY_RDN = `CN=hdc-no-such-account-${randomBytes(8).toString('hex')}`;
// The stand-in whose facts an unknown name reads: the read account itself (one per directory).
const standIns = new WeakMap<SignInDirectory, Promise<string>>();
function standInDn(dir: SignInDirectory): Promise<string> {
  let dn = standIns.get(dir);
  if (!dn) {
    dn = dir.readCreds().then(async ({ user }) => (user.includes('=') ? user : ((await dir.findUserDn(user)) ?? dir.baseDn)));
    dn.catch(() => standIns.delete(dir));
    standIns.set(dir, dn);
  }
  return dn;
}

/**
 * Find the account a typed name names and read its facts, with the read account. A name that
 * resolves to no account does the same directory work (the facts of a stand-in: the read account
 * itself), so neither the time taken nor the answer tells an existing name from an unknown one.
 */
export async function resolveSignInAccount(dir: SignInDirectory, login: string): Promise<PrincipalFacts | undefined> {
  const [dn, standIn] = await Promise.all([dir.findUserDn(login), standInDn(dir)]);
  if (dn) return dir.principalFacts(dn);
  await dir.principalFacts(standIn).catch(() => undefined);
  return undefined;
}

// How long the directory took to refuse real accounts' wrong passwords, recently (this instance;
// a cache that may be lost). A DC refuses an unknown DN faster than a real account's wrong
// password (it writes the account's badPwdCount), so the stand-in bind is padded to a time drawn
// from these (docs/decisions.md, Console 7; bench/signin-timing.ts measures both).
const refusalTimes: number[] = [];
const REFUSAL_SAMPLES = 32;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Bind as the account (over LDAPS, with the typed password); without an account, bind a DN that
 * names none and take as long as a real account's refusal takes.
 */
export async function checkSignInPassword(dir: SignInDirectory, account: PrincipalFacts | undefined, password: string): Promise<boolean> {
  const t0 = performance.now();
  let ok: boolean;
  try {
    ok = await dir.verifyCredentials({ user: account?.dn ?? `${DECOY_RDN},${dir.baseDn}`, password });
  } catch (e) {
    if (!(e instanceof DirectoryInvalidCredentials)) throw e;
    ok = false;
  }
  const took = performance.now() - t0;
  if (account && !ok) {
    refusalTimes.push(took);
    if (refusalTimes.length > REFUSAL_SAMPLES) refusalTimes.shift();
  } else if (!account) {
    // no real refusal seen yet on this instance: a DC's refusal of a real account took about 1.5x
    // its refusal of an unknown DN on the local Samba DCs
    const target = refusalTimes.length ? refusalTimes[Math.floor(Math.random() * refusalTimes.length)] : took * 1.5;
    if (target > took) await sleep(target - took);
  }
  return ok && !!account;
}

/**
 * Directory sign-in (console spec, Authentication 1 and 4): resolve the typed name to its account
 * with the read account → the sign-in limits, keyed on that account (its objectGUID) and the
 * address, taken before any bind so the console never drives the directory's lockout counter
 * (docs/decisions.md, Console 7) → bind as the user over LDAPS → the operator must hold a role →
 * with step-up mode `authenticator`, an authenticator code, or the enrolment steps (password,
 * key, first code; no session before that) → a new session id.
 */
export async function signIn(rt: ConsoleRuntime, input: SignInInput, ctx: SignInContext): Promise<{ session: Session; operator: OperatorIdentity }> {
  const settings = await rt.settings();
  if (!settings) throw new ApiError(503, 'not_configured');
  const typed = input.username.trim();
  const audit = (outcome: string, reason: string, guid?: string, details?: Record<string, unknown>) =>
    rt.audit.append({
      event: 'auth.login',
      outcome,
      reason,
      actor: { name: typed.toLowerCase(), provider: 'ad', ip: ctx.sourceIp, ...(guid ? { id: guid } : {}) },
      correlationId: ctx.correlationId,
      ...(details ? { details } : {}),
    });

  // this host allows no directory password sign-in (Authentication:ActiveDirectory:Enabled=false):
  // refused before the directory is asked anything, audited like every refused sign-in
  if (!rt.config.Authentication.ActiveDirectory.Enabled) {
    await audit('denied', 'password_signin_disabled');
    throw forbidden('password_signin_disabled');
  }
  // the access-platform only mode (read fresh: the recovery command holds at the next sign-in)
  if ((await readSignInPolicy(rt.store)).accessOnly) {
    await audit('denied', 'access_platform_only');
    throw forbidden('access_platform_only');
  }

  const early = await addressRefused(rt.store, rt.config.SignIn, ctx.sourceIp);
  const directory = early ? undefined : await rt.directory();
  const found = directory && (await resolveSignInAccount(directory, typed));
  const attempt = early ?? (await admitSignIn(rt.store, rt.config.SignIn, accountSubject(found?.guid, typed), ctx.sourceIp));
  if (!attempt.admitted) {
    await audit('denied', `rate_limited:${attempt.limit}`, found?.guid);
    throw tooMany('signin_rate_limited', { retryAfterSeconds: attempt.retryAfterSeconds });
  }
  const slowed = attempt.slowed ? { slowed: true } : undefined;
  // the attempt leaves the window as a failure or a success; an error on the way gives its place back
  let settled = false;
  const succeeded = () => {
    settled = true;
    return attempt.succeeded();
  };
  const fail = async (reason: string, code = 'invalid_credentials') => {
    settled = true;
    await attempt.failed();
    await audit('failure', reason, found?.guid, slowed);
    return unauthorized(code);
  };
  try {
    const passwordOk = await checkSignInPassword(directory!, found, input.password);
    if (!found) throw await fail('unknown_account');
    if (!passwordOk) throw await fail('bad_password');
    const facts = found;
    if (facts.userAccountControl & 0x2) throw await fail('account_disabled');

    const rights = await operatorRights(rt.store, settings, facts);
    if (!hasAnyRole(rights)) {
      await succeeded(); // the password was right: not a guess
      await audit('denied', 'no_role', facts.guid);
      throw forbidden('no_console_role');
    }

    let checkedAuthenticator: string | undefined;
    let factor: 'authenticator' | 'passkey' | undefined;
    const secondFactor = settings.stepUpMode === 'authenticator' || settings.stepUpMode === 'passkey';
    if (secondFactor) {
      const key = await rt.masterKey();
      const rec = await getOperator(rt.store, facts.guid);
      const enrolled = !!rec?.data.totpSealed;
      const passkeys = await hasPasskey(rt.store, facts.guid);
      const publicOrigin = rt.config.Hosting.PublicOrigin;
      const pre = ctx.preSession;
      // passkey ceremonies inside the sign-in are bound to its pre-session (issue 32)
      const passkeyOptions = async () => (publicOrigin && pre && passkeys ? { passkeyOptions: await assertionOptions(rt.store, relyingParty(publicOrigin), key, { purpose: 'signin', guid: facts.guid }, pre.id) } : {});
      const registrationOffer = async () =>
        publicOrigin && pre ? { passkeyRegistrationOptions: await registrationOptions(rt.store, relyingParty(publicOrigin), { guid: facts.guid, username: facts.samAccountName, displayName: facts.displayName }, pre.id, key) } : {};
      const refusedPasskey = async (e: unknown) => {
        if (e instanceof PasskeyRefusal) return fail(e.code, e.code);
        throw e;
      };
      if (input.passkey) {
        if (!passkeys || !pre) throw await fail('passkey_not_registered', 'passkey_not_registered');
        await verifyAssertion(rt.store, relyingParty(publicOrigin), key, 'signin', pre.id, input.passkey, facts.guid).catch(async (e) => {
          throw await refusedPasskey(e);
        });
        factor = 'passkey';
      } else if (input.passkeyRegistration) {
        // enrolment only: an operator holding an authenticator or a passkey proves with it
        if (enrolled || passkeys || !pre) throw await fail('passkey_enrolment_not_open', 'passkey_enrolment_not_open');
        const added = await completeRegistration(rt.store, relyingParty(publicOrigin), key, { guid: facts.guid }, pre.id, input.passkeyRegistration, 'passkey').catch(async (e) => {
          throw await refusedPasskey(e);
        });
        await rt.audit.append({ event: 'auth.passkey_registered', outcome: 'success', actor: { id: facts.guid, name: facts.samAccountName, provider: 'ad', ip: ctx.sourceIp }, correlationId: ctx.correlationId, details: { credential: added.ref, name: added.name, at: 'sign-in' } });
        factor = 'passkey';
      } else if (settings.stepUpMode === 'passkey' && !input.code) {
        // passkey only: the operator's passkey, or the enrolment of one
        await succeeded();
        if (passkeys) {
          await audit('pending', 'passkey_required', facts.guid);
          throw new ApiError(401, 'passkey_required', await passkeyOptions());
        }
        await audit('pending', 'passkey_enrolment_required', facts.guid);
        throw new ApiError(401, 'passkey_enrolment_required', await registrationOffer());
      } else if (settings.stepUpMode === 'passkey' && passkeys) {
        throw await fail('passkey_required', 'passkey_required');
      } else if (!enrolled && !passkeys) {
        if (!input.code) {
          const secret = await pendingEnrolmentSecret(rt.store, key, facts.guid, facts.samAccountName);
          await succeeded();
          await audit('pending', 'totp_enrolment_required', facts.guid);
          throw new ApiError(401, 'totp_enrolment_required', { secret, otpauthUri: totpUri(secret, facts.upn ?? facts.samAccountName), ...(await registrationOffer()) });
        }
        if (!(await checkTotpCode(rt.store, key, facts.guid, input.code, { enrol: true }))) throw await fail('totp_enrolment_invalid', 'totp_invalid');
        await rt.audit.append({ event: 'auth.totp_enrolled', outcome: 'success', actor: { id: facts.guid, name: facts.samAccountName, provider: 'ad', ip: ctx.sourceIp }, correlationId: ctx.correlationId });
        checkedAuthenticator = (await getOperator(rt.store, facts.guid))?.data.totpSealed;
        factor = 'authenticator';
      } else if (!enrolled) {
        // passkeys only (mode authenticator): the passkey is the second factor
        await succeeded();
        if (input.code) throw await fail('totp_invalid', 'totp_invalid');
        await audit('pending', 'passkey_required', facts.guid);
        throw new ApiError(401, 'passkey_required', await passkeyOptions());
      } else {
        if (!input.code) {
          await succeeded();
          await audit('pending', 'totp_required', facts.guid);
          throw new ApiError(401, 'totp_required', await passkeyOptions());
        }
        if (!(await checkTotpCode(rt.store, key, facts.guid, input.code))) throw await fail('totp_invalid', 'totp_invalid');
        checkedAuthenticator = rec!.data.totpSealed;
        factor = 'authenticator';
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
    // a passkey's touch at sign-in is a fresh, user-verified proof: it opens the step-up window (an
    // approver from a link signs in and approves, no second prompt; a strict step-up still asks its own)
    const session = await createSession(rt.store, sessionPolicy(rt), operator, factor === 'passkey' ? { stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: 'passkey' } : {});
    if (factor === 'authenticator') {
      // an authenticator reset that ran while this sign-in was checking the code ends this session
      // too: it either saw the session in the index or cleared the authenticator before this read
      const now = (await getOperator(rt.store, facts.guid))?.data.totpSealed;
      if (!now || now !== checkedAuthenticator) {
        await destroySession(rt.store, session.id);
        await succeeded();
        await audit('denied', 'totp_reset_during_signin', facts.guid);
        throw unauthorized('totp_required');
      }
    }
    await succeeded();
    await noteSignIn(rt.store, { guid: facts.guid, username: facts.samAccountName, displayName: facts.displayName, provider: 'ad', subject: facts.guid });
    await audit('success', factor ? `password+${factor}` : 'password', facts.guid, slowed);
    return { session, operator };
  } catch (e) {
    if (!settled) await attempt.succeeded().catch(() => undefined);
    throw e;
  }
}

export const sessionPolicy = (rt: ConsoleRuntime) => ({
  idleSeconds: rt.config.Session.IdleTimeout,
  absoluteSeconds: rt.config.Session.AbsoluteTimeout,
});

/** Failed sign-ins in the last 24 h (reported by the fleet status endpoint). */
export async function failedSignIns24h(rt: ConsoleRuntime): Promise<number> {
  return rt.audit.countSince('auth.login', new Date(Date.now() - 86400_000), 'failure');
}
