import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { clearedSessionCookie, createSession, destroySession, sessionCookie } from '@lib/auth/sessions';
import { accessSignIn } from '@lib/auth/access-signin';
import { sessionPolicy, signIn } from '@lib/auth/signin';
import { stepUp } from '@lib/auth/reauth';
import { ownPasskeys, ownRegistrationOptions, ownStepUpOptions, registerOwnPasskey, removeOwnPasskey } from '@lib/auth/own-passkeys';
import { passkeySignIn, passkeySignInAllowed, passkeySignInOptions } from '@lib/auth/passkey-signin';
import { assertionOptions as assertionOptionsAnswer, passkeySignInAllowed as passkeySignInAllowedAnswer, assertionResponse, passkey, passkeyList, passkeyName, registrationOptions as registrationOptionsAnswer, registrationResponse, stepUpFor } from '@lib/api/console/passkeys';
import { unauthorized } from '@lib/errors';
import { readBranding } from '@lib/setup/branding';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { HEADERS, json, noContent } from '@lib/http/answers';
import { adminNotices } from '@lib/diagnostics/notices';
import { antiforgery as antiforgeryAnswer, me as meAnswer, signedIn, stepUpDone } from '@lib/api/console/session';

const antiforgery = defineRoute({
  method: 'GET',
  path: '/api/auth/antiforgery',
  summary: 'CSRF token of the session; opens an anonymous pre-session when there is none',
  access: 'presession',
  responses: { 200: json(antiforgeryAnswer, { headers: HEADERS.sessionCookie }) },
  async handle({ rt, session }) {
    if (session) return { body: { token: session.csrfToken } };
    const pre = await createSession(rt.store, sessionPolicy(rt));
    return { body: { token: pre.csrfToken }, cookies: [sessionCookie(pre.id)] };
  },
});

// the refusals of a passkey ceremony (lib/auth/passkeys.ts), each audited with its code: 403 at a step-up, 401 at a sign-in
const PASSKEY_REFUSALS = ['passkey_challenge_invalid', 'passkey_counter_regressed', 'passkey_invalid', 'passkey_not_registered', 'passkey_origin_mismatch', 'passkey_rp_mismatch', 'passkey_user_verification_required'];
const PASSKEY_REFUSALS_AT_SIGNIN = PASSKEY_REFUSALS;

const login = defineRoute({
  method: 'POST',
  path: '/api/auth/login',
  summary: 'Directory sign-in (LDAPS bind as the user); answers the next enrolment step by code',
  access: 'presession',
  body: z.object({
    username: plainText().trim().min(1).max(256),
    password: z.string().min(1).max(256),
    code: z.string().regex(/^\d{6}$/).optional(),
    // issue 32: the second factor by passkey, or the enrolment of one inside the sign-in
    passkey: assertionResponse.optional(),
    passkeyRegistration: registrationResponse.optional(),
  }),
  responses: { 200: json(signedIn, { headers: HEADERS.sessionCookie }) },
  errors: {
    401: ['invalid_credentials', 'passkey_enrolment_not_open', 'passkey_enrolment_required', 'passkey_required', 'totp_enrolment_required', 'totp_invalid', 'totp_required', ...PASSKEY_REFUSALS_AT_SIGNIN],
    403: ['access_platform_only', 'no_console_role', 'password_signin_disabled'],
    409: ['passkey_already_registered', 'passkey_limit_reached'],
    429: ['signin_rate_limited'],
    503: ['directory_unavailable', 'not_configured', 'passkeys_not_configured'],
  },
  async handle({ rt, body, session, sourceIp, correlationId }) {
    const { session: s, operator } = await signIn(rt, body as never, { sourceIp, correlationId, preSession: session });
    return {
      body: { operator: { username: operator.username, displayName: operator.displayName }, csrfToken: s.csrfToken },
      cookies: [sessionCookie(s.id)],
    };
  },
});

const accessLogin = defineRoute({
  method: 'POST',
  path: '/api/auth/access',
  summary:
    "Sign-in through the access platform: its JWT (header Authentication:Access:Header, default Teleport-Jwt-Assertion) becomes a session; the directory account is resolved from the claims (Authentication:Access:AdAccountClaims); audited auth.login",
  access: 'presession',
  openapi: { security: [{ accessPlatform: [] }] },
  responses: { 200: json(signedIn, { headers: HEADERS.sessionCookie }) },
  errors: {
    401: ['access_token_required', 'invalid_token'],
    403: ['access_signin_not_configured', 'no_console_role', 'no_directory_account', 'super_administrator_role_mapping_required'],
    503: ['directory_unavailable', 'not_configured'],
  },
  async handle({ rt, session, header, sourceIp, correlationId }) {
    const token = header(rt.config.Authentication.Access.Header)?.trim() || undefined;
    const { session: s, operator } = await accessSignIn(rt, token, { sourceIp, correlationId, preSession: session });
    return {
      body: { operator: { username: operator.username, displayName: operator.displayName }, csrfToken: s.csrfToken },
      cookies: [sessionCookie(s.id)],
    };
  },
});

const logout = defineRoute({
  method: 'POST',
  path: '/api/auth/logout',
  summary: 'End the session',
  access: 'presession',
  responses: { 204: noContent('Signed out: the session is gone and its cookie cleared', HEADERS.sessionCookie) },
  async handle({ rt, session, sourceIp, correlationId }) {
    if (session) {
      await destroySession(rt.store, session.id);
      if (session.operator) {
        await rt.audit.append({ event: 'auth.logout', outcome: 'success', actor: { id: session.operator.guid, name: session.operator.username, ip: sourceIp }, correlationId });
      }
    }
    return { status: 204, cookies: [clearedSessionCookie()] };
  },
});

const me = defineRoute({
  method: 'GET',
  path: '/api/auth/me',
  summary: 'The signed-in operator and their permissions',
  access: 'operator',
  responses: { 200: meAnswer },
  async handle({ operator, rights, session, rt }) {
    if (!operator || !rights) throw unauthorized();
    const [settings, { branding }] = await Promise.all([rt.settings(), readBranding(rt.store)]);
    return {
      body: {
        username: operator.username,
        displayName: operator.displayName,
        provider: operator.provider,
        superAdministrator: rights.superAdministrator,
        permissions: [...rights.permissions].sort(),
        stepUpMode: settings?.stepUpMode,
        stepUpAt: session?.stepUpAt ? new Date(session.stepUpAt * 1000).toISOString() : null,
        // how long a step-up lasts (Authentication:StepUpWindow): the web app shows the time left
        stepUpWindowSeconds: rt.config.Authentication.StepUpWindow,
        // the instance's name in the top bar and tab title: the branding title, else the domain
        instance: branding.title ?? settings?.domain,
        accentColour: branding.accentColour,
        // administrators: e.g. fewer than two DCs, shown above every screen (not only in diagnostics)
        notices: adminNotices(rights, settings),
      },
    };
  },
});

const reauth = defineRoute({
  method: 'POST',
  path: '/api/auth/reauth',
  summary: 'Step-up: an authenticator code, the directory password again, or a passkey assertion (audited auth.reauth; a passkey as stepup:passkey)',
  access: 'operator',
  body: z
    .object({ code: z.string().max(16).optional(), password: z.string().min(1).max(256).optional(), passkey: assertionResponse.optional() })
    .refine((b) => [b.code, b.password, b.passkey].filter((x) => x !== undefined).length === 1, 'give exactly one of code, password or passkey'),
  responses: { 200: stepUpDone },
  errors: {
    400: ['authenticator_code_required', 'no_authenticator', 'passkey_required', 'password_required', 'proof_required'],
    403: ['reauth_failed', 'strict_reauth_required', ...PASSKEY_REFUSALS],
    429: ['reauth_rate_limited'],
    503: ['directory_unavailable', 'passkeys_not_configured'],
  },
  async handle({ rt, session, body, sourceIp, correlationId }) {
    const proof = await stepUp(rt, session!, body as never, { sourceIp, correlationId });
    return { body: { proof, validSeconds: rt.config.Authentication.StepUpWindow } };
  },
});

const passkeys = defineRoute({
  method: 'GET',
  path: '/api/auth/passkeys',
  summary: "The signed-in operator's passkeys (reference, name, dates; nothing of the key)",
  access: 'operator',
  responses: { 200: passkeyList },
  async handle({ rt, session }) {
    return { body: await ownPasskeys(rt, session!) };
  },
});

const passkeyRegistrationOptions = defineRoute({
  method: 'POST',
  path: '/api/auth/passkeys/registration-options',
  summary: 'Start registering a passkey (needs a recent step-up; in mode passkey without one yet, the code or the password)',
  access: 'operator',
  responses: { 200: registrationOptionsAnswer },
  errors: { 403: ['access_platform_operator', 'reauth_required', 'strict_reauth_required'], 409: ['passkey_limit_reached'], 503: ['passkeys_not_configured'] },
  async handle({ rt, session, sourceIp, correlationId }) {
    return { body: (await ownRegistrationOptions(rt, session!, { sourceIp, correlationId })) as z.infer<typeof registrationOptionsAnswer> };
  },
});

const registerPasskey = defineRoute({
  method: 'POST',
  path: '/api/auth/passkeys',
  summary: 'Register a passkey: the browser’s answer to the registration options (user verification required; audited auth.passkey_registered)',
  access: 'operator',
  body: z.object({ response: registrationResponse, name: passkeyName }),
  responses: { 201: passkey },
  errors: { 403: ['access_platform_operator', 'reauth_required', 'strict_reauth_required', ...PASSKEY_REFUSALS], 409: ['passkey_already_registered', 'passkey_limit_reached'], 503: ['passkeys_not_configured'] },
  async handle({ rt, session, body, sourceIp, correlationId }) {
    return { status: 201, body: await registerOwnPasskey(rt, session!, body.response as never, body.name, { sourceIp, correlationId }) };
  },
});

const removePasskey = defineRoute({
  method: 'DELETE',
  path: '/api/auth/passkeys/{ref}',
  summary: 'Remove one of my passkeys (needs a recent step-up; audited auth.passkey_removed)',
  access: 'operator',
  params: z.object({ ref: z.string().max(64) }),
  responses: { 204: noContent('The passkey is removed') },
  errors: { 403: ['access_platform_operator', 'reauth_required', 'strict_reauth_required'], 404: ['not_found'] },
  async handle({ rt, session, params, sourceIp, correlationId }) {
    await removeOwnPasskey(rt, session!, params.ref, { sourceIp, correlationId });
    return { status: 204 };
  },
});

const passkeyStepUpOptions = defineRoute({
  method: 'POST',
  path: '/api/auth/passkeys/step-up-options',
  summary: 'The challenge of a passkey step-up, made for an action and a target (a strict step-up accepts its assertion for those only, once)',
  access: 'operator',
  body: stepUpFor,
  responses: { 200: assertionOptionsAnswer },
  errors: { 403: ['access_platform_operator', 'no_passkey'], 503: ['passkeys_not_configured'] },
  async handle({ rt, session, body }) {
    return { body: (await ownStepUpOptions(rt, session!, body)) as z.infer<typeof assertionOptionsAnswer> };
  },
});

const passkeySignInState = defineRoute({
  method: 'GET',
  path: '/api/auth/passkey-sign-in',
  summary: 'Whether the sign-in page offers a passkey alone (an administrator allows it: PUT /api/settings/passkey-sign-in)',
  access: 'anonymous',
  responses: { 200: passkeySignInAllowedAnswer },
  async handle({ rt }) {
    return { body: { allowed: await passkeySignInAllowed(rt) } };
  },
});

const passkeySignInChallenge = defineRoute({
  method: 'POST',
  path: '/api/auth/passkeys/sign-in-options',
  summary: 'The challenge of a sign-in with a discoverable passkey alone (bound to the pre-session)',
  access: 'presession',
  responses: { 200: assertionOptionsAnswer },
  errors: { 401: ['unauthenticated'], 403: ['access_platform_only', 'passkey_signin_disabled', 'password_signin_disabled'], 503: ['not_configured', 'passkeys_not_configured'] },
  async handle({ rt, session, sourceIp, correlationId }) {
    return { body: (await passkeySignInOptions(rt, { sourceIp, correlationId, preSession: session })) as z.infer<typeof assertionOptionsAnswer> };
  },
});

const passkeyLogin = defineRoute({
  method: 'POST',
  path: '/api/auth/passkey-login',
  summary: 'Sign in with a discoverable passkey alone, when allowed; the directory account named by the passkey is checked as at every sign-in (audited auth.login, reason passkey)',
  access: 'presession',
  body: z.object({ passkey: assertionResponse }),
  responses: { 200: json(signedIn, { headers: HEADERS.sessionCookie }) },
  errors: {
    401: ['invalid_credentials', 'unauthenticated', ...PASSKEY_REFUSALS_AT_SIGNIN],
    403: ['access_platform_only', 'no_console_role', 'passkey_signin_disabled', 'password_signin_disabled'],
    429: ['signin_rate_limited'],
    503: ['directory_unavailable', 'not_configured', 'passkeys_not_configured'],
  },
  async handle({ rt, body, session, sourceIp, correlationId }) {
    const { session: s, operator } = await passkeySignIn(rt, body.passkey as never, { sourceIp, correlationId, preSession: session });
    return {
      body: { operator: { username: operator.username, displayName: operator.displayName }, csrfToken: s.csrfToken },
      cookies: [sessionCookie(s.id)],
    };
  },
});

export const routes = [antiforgery, login, passkeySignInState, passkeySignInChallenge, passkeyLogin, accessLogin, logout, me, reauth, passkeys, passkeyRegistrationOptions, registerPasskey, removePasskey, passkeyStepUpOptions];
export const handler = consoleHandler(routes);
