import { createHash } from 'node:crypto';
import type { Store } from '../store';
import { deleteRecord, getRecord, queryRecords } from '../store/records';

// An operator's passkeys as kept (issue 32), without the WebAuthn library: what step-up
// requirements, the operator list and the recovery paths read or remove. The ceremonies that
// verify a passkey (lib/auth/passkeys.ts) bundle @simplewebauthn/server; only the console's
// sign-in function needs them (docs/decisions.md, issue 32).

/** A passkey as kept (the sealed part holds the credential id, the public key and the counter). */
export interface PasskeyRecord {
  ref: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  sealed: string;
}
export interface SealedCredential {
  id: string;
  publicKey: string;
  counter: number;
  transports?: string[];
}
/** A passkey as listed: its reference, name and dates, nothing of the key. */
export type PasskeySummary = Omit<PasskeyRecord, 'sealed'>;

export const MAX_PASSKEYS = 10;
/** The reference of a credential id (what audit rows, URLs and the list name). */
export const passkeyRef = (credentialId: string) => createHash('sha256').update(credentialId).digest('base64url').slice(0, 22);
export const ownerKey = (guid: string, ref?: string) => ({ pk: `OPERATOR#${guid.toLowerCase()}`, sk: ref === undefined ? 'PASSKEY#' : `PASSKEY#${ref}` });
// the credential → operator index for a discoverable sign-in (the assertion names only the credential)
export const credentialKey = (ref: string) => ({ pk: `PASSKEY#${ref}`, sk: 'CREDENTIAL' });
export const aad = (guid: string, ref: string) => `passkey:${guid.toLowerCase()}:${ref}`;

export async function listPasskeys(store: Store, guid: string): Promise<PasskeySummary[]> {
  const k = ownerKey(guid);
  return (await queryRecords<PasskeyRecord>(store, k.pk, k.sk)).map(({ data: { sealed: _s, ...summary } }) => summary);
}
export const hasPasskey = async (store: Store, guid: string) => (await listPasskeys(store, guid)).length > 0;

/** The operator a credential belongs to (discoverable sign-in), if it is still registered. */
export async function passkeyOwner(store: Store, credentialId: string): Promise<string | undefined> {
  const k = credentialKey(passkeyRef(credentialId));
  return (await getRecord<{ guid: string }>(store, k.pk, k.sk))?.data.guid;
}

/** Remove one passkey of an operator; false when they have none by that reference. */
export async function deletePasskey(store: Store, guid: string, ref: string): Promise<PasskeySummary | undefined> {
  const k = ownerKey(guid, ref);
  const rec = await getRecord<PasskeyRecord>(store, k.pk, k.sk);
  if (!rec) return undefined;
  await deleteRecord(store, k.pk, k.sk);
  const ck = credentialKey(ref);
  await deleteRecord(store, ck.pk, ck.sk);
  const { sealed: _s, ...summary } = rec.data;
  return summary;
}

/** Remove every passkey of an operator (recovery); how many there were. */
export async function deleteAllPasskeys(store: Store, guid: string): Promise<number> {
  const all = await listPasskeys(store, guid);
  for (const p of all) await deletePasskey(store, guid, p.ref);
  return all.length;
}

