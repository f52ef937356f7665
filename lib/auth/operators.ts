import * as OTPAuth from 'otpauth';
import { openString, seal } from '../crypto/seal';
import type { Store } from '../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';
import { endOperatorSessions } from './sessions';
import { newTotpSecret } from './totp';

// Per-operator state kept by the console: the authenticator (sealed under the master key).
export interface OperatorRecord {
  guid: string;
  username: string;
  displayName?: string;
  /** how they last signed in: `ad` (directory password) or `access` (the access platform) */
  provider?: 'ad' | 'access';
  /** who the provider says they are: the objectGUID for `ad`, the platform's user name for `access` */
  subject?: string;
  lastSignInAt?: string;
  totpSealed?: string;
  pendingTotpSealed?: string;
  lastTotpStep?: number;
}

const key = (guid: string) => ({ pk: `OPERATOR#${guid.toLowerCase()}`, sk: 'PROFILE' });
const aad = (guid: string, kind: string) => `totp:${kind}:${guid.toLowerCase()}`;

export async function getOperator(store: Store, guid: string) {
  const k = key(guid);
  return getRecord<OperatorRecord>(store, k.pk, k.sk);
}

async function save(store: Store, rec: OperatorRecord, version?: number) {
  const k = key(rec.guid);
  const ok = await putRecord(store, k.pk, k.sk, rec, { expectVersion: version ?? 0 });
  // an index of operators by GUID and name (admin CLI: reset-totp <operator>; the operators list); no secret in it
  if (ok && !version) await putRecord(store, OPERATORS, rec.guid.toLowerCase(), indexEntry(rec));
  return ok;
}

const OPERATORS = 'OPERATORS';
/** The index entry of an operator: who they are and how they last signed in, never their authenticator. */
export type OperatorIndexEntry = Pick<OperatorRecord, 'guid' | 'username' | 'displayName' | 'provider' | 'subject' | 'lastSignInAt'>;
const indexEntry = (r: OperatorRecord): OperatorIndexEntry => ({
  guid: r.guid,
  username: r.username,
  ...(r.displayName ? { displayName: r.displayName } : {}),
  ...(r.provider ? { provider: r.provider } : {}),
  ...(r.subject ? { subject: r.subject } : {}),
  ...(r.lastSignInAt ? { lastSignInAt: r.lastSignInAt } : {}),
});

/** Every operator record the console holds (the index; one item each). */
export async function listOperatorRecords(store: Store): Promise<OperatorIndexEntry[]> {
  return (await queryRecords<OperatorIndexEntry>(store, OPERATORS)).map((r) => r.data);
}

/**
 * Record a sign-in on the operator's record (created on the first one): provider, subject, name
 * and time, so that operators are listed and a deleted one's audit row names them.
 */
export async function noteSignIn(store: Store, who: { guid: string; username: string; displayName?: string; provider: 'ad' | 'access'; subject: string }): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const rec = await getOperator(store, who.guid);
    const next: OperatorRecord = { ...(rec?.data ?? { guid: who.guid, username: who.username }), ...who, lastSignInAt: new Date().toISOString() };
    if (!who.displayName) delete next.displayName;
    if (await save(store, next, rec?.version ?? 0)) {
      if (rec) await putRecord(store, OPERATORS, who.guid.toLowerCase(), indexEntry(next));
      return;
    }
  }
}

/** Remove an operator's record (authenticator included) and its index entry; true when there was one. */
export async function deleteOperatorRecord(store: Store, guid: string): Promise<boolean> {
  const k = key(guid);
  const existed = !!(await getRecord(store, k.pk, k.sk)) || !!(await getRecord(store, OPERATORS, guid.toLowerCase()));
  await deleteRecord(store, k.pk, k.sk);
  await deleteRecord(store, OPERATORS, guid.toLowerCase());
  return existed;
}

export const hasAuthenticator = async (store: Store, guid: string) => !!(await getOperator(store, guid))?.data.totpSealed;

/** The pending enrolment secret for this operator (created on first ask, reused until confirmed). */
export async function pendingEnrolmentSecret(store: Store, masterKey: Buffer, guid: string, username: string): Promise<string> {
  for (;;) {
    const rec = await getOperator(store, guid);
    if (rec?.data.pendingTotpSealed) return openString(masterKey, rec.data.pendingTotpSealed, aad(guid, 'pending'));
    const secret = newTotpSecret();
    const next: OperatorRecord = { ...(rec?.data ?? { guid, username }), pendingTotpSealed: seal(masterKey, secret, aad(guid, 'pending')) };
    if (await save(store, next, rec?.version ?? 0)) return secret;
  }
}

/**
 * Check a code against the enrolled (or, with `enrol`, the pending) secret. A code is accepted
 * once: its time step must be later than the last accepted one (no replay within the window).
 */
export async function checkTotpCode(store: Store, masterKey: Buffer, guid: string, code: string, opts: { enrol?: boolean } = {}): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const rec = await getOperator(store, guid);
  if (!rec) return false;
  const sealed = opts.enrol ? rec.data.pendingTotpSealed : rec.data.totpSealed;
  if (!sealed) return false;
  const secret = openString(masterKey, sealed, aad(guid, opts.enrol ? 'pending' : 'active'));
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
  const delta = totp.validate({ token: code, window: 1 });
  if (delta === null) return false;
  const step = Math.floor(Date.now() / 30000) + delta;
  if (rec.data.lastTotpStep !== undefined && step <= rec.data.lastTotpStep) return false;
  const next: OperatorRecord = { ...rec.data, lastTotpStep: step };
  if (opts.enrol) {
    next.totpSealed = seal(masterKey, secret, aad(guid, 'active'));
    delete next.pendingTotpSealed;
  }
  return save(store, next, rec.version);
}

/** Set an authenticator directly (local seed data, recovery tooling). */
export async function setAuthenticator(store: Store, masterKey: Buffer, guid: string, username: string, secret: string | undefined): Promise<void> {
  for (;;) {
    const rec = await getOperator(store, guid);
    const next: OperatorRecord = { ...(rec?.data ?? { guid, username }) };
    delete next.pendingTotpSealed;
    delete next.lastTotpStep;
    if (secret) next.totpSealed = seal(masterKey, secret, aad(guid, 'active'));
    else delete next.totpSealed;
    if (await save(store, next, rec?.version ?? 0)) return;
  }
}

/**
 * Clear an operator's authenticator (and a pending enrolment) and end all their sessions: they
 * enrol again at their next sign-in (admin CLI `reset-totp`, POST /api/admin/operators/{id}/totp/reset).
 */
export async function resetAuthenticator(store: Store, guid: string): Promise<{ hadAuthenticator: boolean; sessionsEnded: number }> {
  let hadAuthenticator = false;
  for (;;) {
    const rec = await getOperator(store, guid);
    if (!rec) break;
    hadAuthenticator = !!rec.data.totpSealed || !!rec.data.pendingTotpSealed;
    const next: OperatorRecord = { ...rec.data };
    delete next.totpSealed;
    delete next.pendingTotpSealed;
    delete next.lastTotpStep;
    if (await save(store, next, rec.version)) break;
  }
  return { hadAuthenticator, sessionsEnded: await endOperatorSessions(store, guid) };
}
