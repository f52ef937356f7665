import { z } from 'zod';
import { sessionCookie } from '@lib/auth/sessions';
import { ownPasskeys, ownRegistrationOptions, ownStepUpOptions, registerOwnPasskey, removeOwnPasskey } from '@lib/auth/own-passkeys';
import { passkeySignIn, passkeySignInAllowed, passkeySignInOptions } from '@lib/auth/passkey-signin';
import { assertionOptions as assertionOptionsAnswer, passkeySignInAllowed as passkeySignInAllowedAnswer, assertionResponse, passkey, passkeyList, passkeyName, registrationOptions as registrationOptionsAnswer, registrationResponse, stepUpFor } from '@lib/api/console/passkeys';
import { PASSKEY_REFUSALS } from '@lib/api/console/errors';
import { defineRoute } from '@lib/http/route';
import { HEADERS, json, noContent } from '@lib/http/answers';
import { signedIn } from '@lib/api/console/session';

// The passkey routes (issue 32): an operator's own passkeys, the step-up challenge, and the sign-in
// with a passkey alone. Served by the sign-in function (functions/console/auth.ts), the one bundle
// that holds the WebAuthn library.

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
    401: ['invalid_credentials', 'unauthenticated', ...PASSKEY_REFUSALS],
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

export const passkeyRoutes = [passkeys, passkeyRegistrationOptions, registerPasskey, removePasskey, passkeyStepUpOptions, passkeySignInState, passkeySignInChallenge, passkeyLogin];
