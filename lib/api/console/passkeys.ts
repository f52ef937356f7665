import { z } from 'zod';
import { plainText } from '../../plain-text';

// Passkeys (WebAuthn, issue 32): the ceremonies' options as @simplewebauthn/server writes them,
// the browser's responses as @simplewebauthn/browser sends them, and a passkey as listed.

const b64url = z.string().max(4096).regex(/^[A-Za-z0-9_-]*$/);
const descriptor = z.object({ id: z.string(), type: z.literal('public-key'), transports: z.array(z.string()).optional() });

export const registrationOptions = z
  .object({
    challenge: z.string(),
    rp: z.object({ name: z.string(), id: z.string().optional() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.object({ alg: z.number(), type: z.literal('public-key') })),
    timeout: z.number().optional(),
    excludeCredentials: z.array(descriptor).optional(),
    authenticatorSelection: z.record(z.string(), z.unknown()).optional(),
    hints: z.array(z.string()).optional(),
    attestation: z.string().optional(),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'PasskeyRegistrationOptions', description: 'PublicKeyCredentialCreationOptionsJSON for navigator.credentials.create (user verification required)' });

export const assertionOptions = z
  .object({
    challenge: z.string(),
    rpId: z.string().optional(),
    timeout: z.number().optional(),
    allowCredentials: z.array(descriptor).optional(),
    userVerification: z.string().optional(),
    hints: z.array(z.string()).optional(),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'PasskeyAssertionOptions', description: 'PublicKeyCredentialRequestOptionsJSON for navigator.credentials.get (user verification required)' });

// what both of the browser's answers carry beside their `response`
const credential = {
  id: b64url,
  rawId: b64url,
  type: z.literal('public-key'),
  authenticatorAttachment: z.string().max(32).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()),
};

export const registrationResponse = z
  .object({
    ...credential,
    response: z.object({
      clientDataJSON: b64url,
      attestationObject: b64url,
      authenticatorData: b64url.optional(),
      transports: z.array(z.string().max(32)).max(8).optional(),
      publicKeyAlgorithm: z.number().optional(),
      publicKey: b64url.optional(),
    }),
  })
  .meta({ id: 'PasskeyRegistrationResponse', description: "the browser's RegistrationResponseJSON" });

export const assertionResponse = z
  .object({ ...credential, response: z.object({ clientDataJSON: b64url, authenticatorData: b64url, signature: b64url, userHandle: b64url.optional() }) })
  .meta({ id: 'PasskeyAssertion', description: "the browser's AuthenticationResponseJSON" });

export const passkey = z
  .object({ ref: z.string(), name: z.string(), createdAt: z.string(), lastUsedAt: z.string().optional() })
  .meta({ id: 'Passkey', description: 'a registered passkey: its reference and name, nothing of its key' });
export const passkeyList = z.object({ items: z.array(passkey), max: z.number() }).meta({ id: 'Passkeys' });

export const passkeyName = plainText().trim().min(1).max(60);
/** What a step-up assertion is made for: the request's route (`POST /api/computers/{id}/laps`) and its target (the path parameters). */
export const stepUpFor = z.object({ action: z.string().min(1).max(200), target: z.string().max(200).optional() });
export const passkeySignInAllowed = z.object({ allowed: z.boolean() }).meta({ id: 'PasskeySignIn', description: 'whether a discoverable passkey alone signs in' });
export const passkeySignInChanged = z.object({ allowed: z.boolean(), previous: z.boolean() });
