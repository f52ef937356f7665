import { createHash } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { openString, seal, sha256Hex } from '../crypto/seal';
import { ApiError, conflict, unavailable } from '../errors';
import { nowSeconds, type Store } from '../store';
import { getRecord, putRecord, queryRecords } from '../store/records';
import { aad, credentialKey, listPasskeys, MAX_PASSKEYS, ownerKey, passkeyOwner, passkeyRef, type PasskeyRecord, type PasskeySummary, type SealedCredential } from './passkey-records';

// Passkeys (WebAuthn, issue 32): an authenticator kind beside the TOTP one, through the maintained
// @simplewebauthn/server. What is kept of a passkey is its credential id, public key and signature
// counter, sealed under the master key like a TOTP secret (AAD names the operator and the passkey);
// in clear only a reference (a hash of the credential id), the name the operator gave it and its
// dates (docs/decisions.md, issue 32).

/** The relying party: the console's public origin (Hosting:PublicOrigin) and its host as the rpId. */
export interface RelyingParty {
  rpId: string;
  origin: string;
}
export function relyingParty(publicOrigin: string | undefined): RelyingParty {
  if (!publicOrigin) throw unavailable('passkeys_not_configured');
  return { rpId: new URL(publicOrigin).hostname, origin: publicOrigin };
}

/** What a challenge was made for: a registration, a step-up (bound to an action and a target) or a sign-in. */
export type PasskeyPurpose = 'register' | 'stepup' | 'signin';
export interface ChallengeBinding {
  purpose: PasskeyPurpose;
  /** the operator (absent for a discoverable sign-in: the passkey names them) */
  guid?: string;
  /** sha256 of the session id the challenge was given to: it is answered in that session only */
  session: string;
  /** step-up: the action and the target the assertion is made for (e.g. computers.laps.read, a computer's GUID) */
  action?: string;
  target?: string;
}
const CHALLENGE_SECONDS = 300;
const challengeKey = (challenge: string) => ({ pk: `PASSKEY_CHALLENGE#${sha256Hex(challenge)}`, sk: 'CHALLENGE' });

async function openCredentials(store: Store, masterKey: Buffer, guid: string) {
  const k = ownerKey(guid);
  return (await queryRecords<PasskeyRecord>(store, k.pk, k.sk)).map((r) => ({ rec: r, cred: JSON.parse(openString(masterKey, r.data.sealed, aad(guid, r.data.ref))) as SealedCredential }));
}

/** A refusal of a passkey ceremony: its stable code (403), audited by the caller. */
export class PasskeyRefusal extends ApiError {
  constructor(code: string) {
    super(403, code);
  }
}

/** Store a challenge for `binding` (single use, 5 minutes). */
async function keepChallenge(store: Store, challenge: string, binding: ChallengeBinding): Promise<void> {
  const k = challengeKey(challenge);
  await putRecord(store, k.pk, k.sk, binding, { expectVersion: 0, ttl: nowSeconds() + CHALLENGE_SECONDS });
}

/**
 * Read the challenge a response answers (from its clientDataJSON) and use it up: a challenge is
 * answered once, so a replayed response finds it used (`passkey_challenge_invalid`). The origin
 * and type are read here too, to refuse with their own codes.
 */
async function takeChallenge(store: Store, clientDataJSON: string, expect: { purpose: PasskeyPurpose; session: string; type: string }): Promise<{ challenge: string; binding: ChallengeBinding; origin: string }> {
  let client: { challenge?: unknown; origin?: unknown; type?: unknown };
  try {
    client = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    throw new PasskeyRefusal('passkey_invalid');
  }
  if (typeof client?.challenge !== 'string' || typeof client.origin !== 'string' || client.type !== expect.type) throw new PasskeyRefusal('passkey_invalid');
  const k = challengeKey(client.challenge);
  const rec = await getRecord<ChallengeBinding & { used?: boolean }>(store, k.pk, k.sk);
  if (!rec || rec.data.used || rec.data.purpose !== expect.purpose || rec.data.session !== expect.session) throw new PasskeyRefusal('passkey_challenge_invalid');
  // used up before it is checked further: of two concurrent answers one wins
  if (!(await putRecord(store, k.pk, k.sk, { ...rec.data, used: true }, { expectVersion: rec.version, ...(rec.ttl ? { ttl: rec.ttl } : {}) }))) throw new PasskeyRefusal('passkey_challenge_invalid');
  return { challenge: client.challenge, binding: rec.data, origin: client.origin };
}

/** The authenticator data's rpId hash, flags and counter (WebAuthn §6.1): user present, user verified. */
function authenticatorData(data: string, rpId: string): { up: boolean; uv: boolean; counter: number } {
  const b = Buffer.from(data, 'base64url');
  if (b.length < 37) throw new PasskeyRefusal('passkey_invalid');
  if (!b.subarray(0, 32).equals(createHash('sha256').update(rpId).digest())) throw new PasskeyRefusal('passkey_rp_mismatch');
  return { up: (b[32] & 0x01) !== 0, uv: (b[32] & 0x04) !== 0, counter: b.readUInt32BE(33) };
}

export const sessionRef = (sessionId: string) => sha256Hex(sessionId);

// ---- registration -------------------------------------------------------------------------

export async function registrationOptions(
  store: Store,
  rp: RelyingParty,
  op: { guid: string; username: string; displayName?: string },
  sessionId: string,
  masterKey: Buffer,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await openCredentials(store, masterKey, op.guid);
  if (existing.length >= MAX_PASSKEYS) throw conflict('passkey_limit_reached', { max: MAX_PASSKEYS });
  const options = await generateRegistrationOptions({
    rpName: 'hdc',
    rpID: rp.rpId,
    userName: op.username,
    userDisplayName: op.displayName ?? op.username,
    // the user handle is the objectGUID: a discoverable passkey names its operator
    userID: new Uint8Array(Buffer.from(op.guid.toLowerCase(), 'utf8')),
    attestationType: 'none',
    excludeCredentials: existing.map((e) => ({ id: e.cred.id, ...(e.cred.transports ? { transports: e.cred.transports } : {}) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: [-7, -257],
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await keepChallenge(store, options.challenge, { purpose: 'register', guid: op.guid.toLowerCase(), session: sessionRef(sessionId) });
  return options;
}

/** Verify a registration (UV required, origin and rpId of the console) and keep the passkey, sealed. */
export async function completeRegistration(
  store: Store,
  rp: RelyingParty,
  masterKey: Buffer,
  op: { guid: string },
  sessionId: string,
  response: RegistrationResponseJSON,
  name: string,
): Promise<PasskeySummary> {
  const guid = op.guid.toLowerCase();
  const { challenge, binding, origin } = await takeChallenge(store, response.response.clientDataJSON, { purpose: 'register', session: sessionRef(sessionId), type: 'webauthn.create' });
  if (binding.guid !== guid) throw new PasskeyRefusal('passkey_challenge_invalid');
  if (origin !== rp.origin) throw new PasskeyRefusal('passkey_origin_mismatch');
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.rpId, requireUserVerification: true });
  } catch (e) {
    throw new PasskeyRefusal(/user could not be verified/i.test(String((e as Error).message)) ? 'passkey_user_verification_required' : 'passkey_invalid');
  }
  if (!verified.verified || !verified.registrationInfo) throw new PasskeyRefusal('passkey_invalid');
  const { credential } = verified.registrationInfo;
  const ref = passkeyRef(credential.id);
  const existing = await listPasskeys(store, guid);
  if (existing.some((p) => p.ref === ref)) throw conflict('passkey_already_registered');
  if (existing.length >= MAX_PASSKEYS) throw conflict('passkey_limit_reached', { max: MAX_PASSKEYS });
  const sealedCred: SealedCredential = { id: credential.id, publicKey: Buffer.from(credential.publicKey).toString('base64url'), counter: credential.counter, ...(credential.transports?.length ? { transports: credential.transports } : {}) };
  const rec: PasskeyRecord = { ref, name, createdAt: new Date().toISOString(), sealed: seal(masterKey, JSON.stringify(sealedCred), aad(guid, ref)) };
  const ck = credentialKey(ref);
  if (!(await putRecord(store, ck.pk, ck.sk, { guid }, { expectVersion: 0 }))) throw conflict('passkey_already_registered');
  const k = ownerKey(guid, ref);
  await putRecord(store, k.pk, k.sk, rec, { expectVersion: 0 });
  const { sealed: _s, ...summary } = rec;
  return summary;
}

// ---- assertions (step-up, sign-in) ---------------------------------------------------------

/** Options for an assertion: a step-up bound to an action and a target, or a sign-in. */
export async function assertionOptions(
  store: Store,
  rp: RelyingParty,
  masterKey: Buffer,
  binding: Omit<ChallengeBinding, 'session'>,
  sessionId: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const creds = binding.guid ? await openCredentials(store, masterKey, binding.guid) : [];
  const options = await generateAuthenticationOptions({
    rpID: rp.rpId,
    // a discoverable sign-in lists none: the authenticator offers the passkeys it holds for the rpId
    allowCredentials: creds.map((c) => ({ id: c.cred.id, ...(c.cred.transports ? { transports: c.cred.transports as never } : {}) })),
    userVerification: 'required',
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await keepChallenge(store, options.challenge, { ...binding, ...(binding.guid ? { guid: binding.guid.toLowerCase() } : {}), session: sessionRef(sessionId) });
  return options;
}

export interface VerifiedAssertion {
  guid: string;
  ref: string;
  binding: ChallengeBinding;
}

/**
 * Verify an assertion against the challenge it answers (once, in the session it was given to),
 * the console's origin and rpId, the operator's registered passkey, user verification, and a
 * counter that moves forward (a cloned authenticator shows an older one). `guid`: the operator
 * the assertion must come from (step-up, second factor); absent for a discoverable sign-in.
 */
export async function verifyAssertion(
  store: Store,
  rp: RelyingParty,
  masterKey: Buffer,
  purpose: 'stepup' | 'signin',
  sessionId: string,
  response: AuthenticationResponseJSON,
  guid?: string,
): Promise<VerifiedAssertion> {
  const { challenge, binding, origin } = await takeChallenge(store, response.response.clientDataJSON, { purpose, session: sessionRef(sessionId), type: 'webauthn.get' });
  if (origin !== rp.origin) throw new PasskeyRefusal('passkey_origin_mismatch');
  const owner = guid?.toLowerCase() ?? binding.guid ?? (await passkeyOwner(store, response.id));
  if (!owner || (binding.guid && binding.guid !== owner)) throw new PasskeyRefusal('passkey_not_registered');
  const ref = passkeyRef(response.id);
  const k = ownerKey(owner, ref);
  const rec = await getRecord<PasskeyRecord>(store, k.pk, k.sk);
  if (!rec) throw new PasskeyRefusal('passkey_not_registered');
  const cred = JSON.parse(openString(masterKey, rec.data.sealed, aad(owner, ref))) as SealedCredential;
  if (cred.id !== response.id) throw new PasskeyRefusal('passkey_not_registered');
  // a discoverable passkey's user handle names its operator: it must be this one
  if (response.response.userHandle && Buffer.from(response.response.userHandle, 'base64url').toString('utf8') !== owner) throw new PasskeyRefusal('passkey_not_registered');
  const flags = authenticatorData(response.response.authenticatorData, rp.rpId);
  if (!flags.uv) throw new PasskeyRefusal('passkey_user_verification_required');
  // a counter that does not move forward: a cloned authenticator (both 0: one that keeps none)
  if ((flags.counter > 0 || cred.counter > 0) && flags.counter <= cred.counter) throw new PasskeyRefusal('passkey_counter_regressed');
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      credential: { id: cred.id, publicKey: new Uint8Array(Buffer.from(cred.publicKey, 'base64url')), counter: cred.counter },
      requireUserVerification: true,
    });
  } catch {
    throw new PasskeyRefusal('passkey_invalid');
  }
  if (!verified.verified) throw new PasskeyRefusal('passkey_invalid');
  const next: PasskeyRecord = { ...rec.data, lastUsedAt: new Date().toISOString(), sealed: seal(masterKey, JSON.stringify({ ...cred, counter: verified.authenticationInfo.newCounter }), aad(owner, ref)) };
  // the counter moves under the record's version: two uses of one counter value, one wins
  if (!(await putRecord(store, k.pk, k.sk, next, { expectVersion: rec.version }))) throw new PasskeyRefusal('passkey_counter_regressed');
  return { guid: owner, ref, binding };
}
