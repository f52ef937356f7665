import { createHmac, randomBytes } from 'node:crypto';
import { processEnvironment, type Environment } from '../../config/environment';
import { constantTimeEqual, open, seal } from '../../crypto/seal';
import type { Store } from '../../store';
import { putRecord } from '../../store/records';
import { loadKey } from '../../secrets';
import type { ResetPayload } from './protocol';

export * from './protocol';

// The signed internal link between the console and the password service (console spec 6), the
// one piece both sides hold (with the link key; never the LAPS or reset account):
// requests carry an HMAC over a timestamp, a one-time nonce and the body (a replay is refused);
// a password travels back sealed (AES-256-GCM) under the link key, bound to the computer and to
// the direction service → console.

export interface LinkEnvelope {
  v: 1;
  ts: number;
  nonce: string;
  body: string;
  mac: string;
}

const MAX_SKEW_MS = 30_000;

/** The helpdesk link key: HDC_LINK_KEY_SECRET_ID (Secrets Manager) or HDC_LINK_KEY_FILE (local). */
export function loadLinkKey(env: Environment = processEnvironment()): Promise<Buffer> {
  return loadKey('link-key', { secretId: env.HDC_LINK_KEY_SECRET_ID || undefined, file: env.HDC_LINK_KEY_FILE || undefined }, {
    missing: 'no helpdesk link key (HDC_LINK_KEY_SECRET_ID or HDC_LINK_KEY_FILE)',
    invalid: 'the helpdesk link key must be 32 bytes, base64',
  });
}

const macOf = (key: Buffer, ts: number, nonce: string, body: string) =>
  createHmac('sha256', key).update(`hdc-link-v1\n${ts}\n${nonce}\n${body}`).digest('hex');

export function signRequest(key: Buffer, request: unknown): LinkEnvelope {
  const ts = Date.now();
  const nonce = randomBytes(16).toString('base64url');
  const body = JSON.stringify(request);
  return { v: 1, ts, nonce, body, mac: macOf(key, ts, nonce, body) };
}

export type LinkCheck = { ok: true; request: unknown } | { ok: false; code: 'link_signature_invalid' | 'link_expired' | 'link_replayed' };

/** The signature and freshness of an envelope (no write): its request and the nonce still to record. */
export function checkEnvelope(key: Buffer, env: unknown): { ok: true; request: unknown; nonce: string } | { ok: false; code: 'link_signature_invalid' | 'link_expired' } {
  const e = env as Partial<LinkEnvelope> | undefined;
  if (!e || e.v !== 1 || typeof e.ts !== 'number' || typeof e.nonce !== 'string' || typeof e.body !== 'string' || typeof e.mac !== 'string') {
    return { ok: false, code: 'link_signature_invalid' };
  }
  if (!constantTimeEqual(macOf(key, e.ts, e.nonce, e.body), e.mac)) return { ok: false, code: 'link_signature_invalid' };
  if (Math.abs(Date.now() - e.ts) > MAX_SKEW_MS) return { ok: false, code: 'link_expired' };
  return { ok: true, request: JSON.parse(e.body), nonce: e.nonce };
}

/** The nonce's record: a conditional put (must not exist), kept 10 minutes (beyond the 30 s skew). */
export const nonceItem = (store: Store, nonce: string) => ({
  TableName: store.tableName,
  Item: { pk: 'LINKNONCE', sk: nonce, _et: 'Record', data: {}, version: 1, ttl: Math.floor(Date.now() / 1000) + 600 },
  ConditionExpression: 'attribute_not_exists(pk)',
});

/** Record a nonce never seen before; false when it was (a replay). */
export const recordNonce = (store: Store, nonce: string) => putRecord(store, 'LINKNONCE', nonce, {}, { expectVersion: 0, ttl: Math.floor(Date.now() / 1000) + 600 });

/** Verify a request: MAC, freshness, and a nonce never seen before (recorded in DynamoDB). */
export async function verifyRequest(key: Buffer, store: Store, env: unknown): Promise<LinkCheck> {
  const checked = checkEnvelope(key, env);
  if (!checked.ok) return checked;
  if (!(await recordNonce(store, checked.nonce))) return { ok: false, code: 'link_replayed' };
  return { ok: true, request: checked.request };
}

const passwordAad = (computerGuid: string, correlationId: string) => `laps:service->console:${computerGuid.toLowerCase()}:${correlationId}`;

export const sealPassword = (key: Buffer, payload: unknown, computerGuid: string, correlationId: string) =>
  seal(key, JSON.stringify(payload), passwordAad(computerGuid, correlationId));

export const openPassword = <T>(key: Buffer, sealed: string, computerGuid: string, correlationId: string): T =>
  JSON.parse(open(key, sealed, passwordAad(computerGuid, correlationId)).toString('utf8')) as T;

// a reset password: sealed under the link key, bound to the user and to the direction service → console
const resetAad = (userGuid: string, correlationId: string) => `reset:service->console:${userGuid.toLowerCase()}:${correlationId}`;
export const sealResetPassword = (key: Buffer, payload: ResetPayload, userGuid: string, correlationId: string) =>
  seal(key, JSON.stringify(payload), resetAad(userGuid, correlationId));
export const openResetPassword = (key: Buffer, sealed: string, userGuid: string, correlationId: string): ResetPayload =>
  JSON.parse(open(key, sealed, resetAad(userGuid, correlationId)).toString('utf8')) as ResetPayload;
