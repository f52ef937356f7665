import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { clearedSessionCookie, createSession, destroySession, sessionCookie } from '@lib/auth/sessions';
import { accessSignIn } from '@lib/auth/access-signin';
import { sessionPolicy, signIn } from '@lib/auth/signin';
import { stepUp } from '@lib/auth/reauth';
import { assertionResponse, registrationResponse } from '@lib/api/console/passkeys';
import { PASSKEY_REFUSALS } from '@lib/api/console/errors';
import { passkeyRoutes } from './passkeys';
import { unauthorized } from '@lib/errors';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { HEADERS, json, noContent } from '@lib/http/answers';
import { signedInOperator } from '@lib/auth/me';
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
    401: ['invalid_credentials', 'passkey_enrolment_not_open', 'passkey_enrolment_required', 'passkey_required', 'totp_enrolment_required', 'totp_invalid', 'totp_required', ...PASSKEY_REFUSALS],
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
    return { body: await signedInOperator(rt, operator, rights, session) };
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

// one function with the passkey routes (functions/console/passkeys.ts): the only bundle holding the WebAuthn library
export const routes = [antiforgery, login, accessLogin, logout, me, reauth, ...passkeyRoutes];
export const handler = consoleHandler(routes);
