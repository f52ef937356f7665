import { canonicalJson } from './canonical';
// The audit row's shapes, as appended and as stored (lib/audit/index.ts explains the chain).

export type AuditOutcome = 'success' | 'failure' | 'denied' | 'error' | 'unknown' | string;

export interface AuditActor {
  id?: string;
  name?: string;
  provider?: string;
  ip?: string;
}
export interface AuditInput {
  event: string;
  outcome: AuditOutcome;
  actor?: AuditActor;
  target?: { id?: string; name?: string; dn?: string; kind?: string };
  reason?: string;
  ticket?: string;
  correlationId?: string;
  /** Fleet plane: the client the row concerns; inside the hash when present. */
  client?: string;
  details?: Record<string, unknown>;
}
export interface AuditRow extends AuditInput {
  seq: number;
  at: string;
  id: string;
  prevHash: string;
  hash: string;
}

const SENSITIVE_KEY = /pass(word)?|secret|token|otp|totp|key$/i;

/** Defence in depth: a details key that names a secret never reaches the chain or stdout. */
export function scrubDetails(details?: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!details) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    out[k] = SENSITIVE_KEY.test(k) ? '[redacted]' : v && typeof v === 'object' && !Array.isArray(v) ? scrubDetails(v as Record<string, unknown>) : v;
  }
  return out;
}

export const pad = (n: number) => String(n).padStart(12, '0');

/** internal to lib/audit: positions on the chain and the stored item */
export interface Point {
  seq: number;
  hash: string;
}
export interface Head extends Point {
  at: string;
}
export type RowBody = AuditInput & { at: string; id: string; seq: number };
export interface StoredRow {
  pk: string;
  sk: string;
  seq: number;
  /** the body exactly as hashed (canonical JSON): rows written since the text format */
  bodyText?: string;
  /** the body as an object: rows written before it (read only when `bodyText` is absent) */
  body?: RowBody;
  prevHash: string;
  hash: string;
  /** the first of the rows appended with this one (they share lookup items); absent: alone */
  lk?: number;
}


/**
 * The text a stored row's hash covers. Rows are stored as that text: verify hashes what it read,
 * with no parse and no re-serialization (older rows hold an object, serialized again here).
 */
export function storedText(it: StoredRow): string {
  return it.bodyText ?? canonicalJson(it.body);
}

/** A stored row's body: parsed from the very text that is hashed, so what is shown is what is verified. */
export function storedBody(it: StoredRow): RowBody {
  return it.bodyText !== undefined ? (JSON.parse(it.bodyText) as RowBody) : it.body!;
}

/**
 * Whether canonical body text names `seq` as its own sequence number. Inside JSON strings quotes are
 * escaped, so `"seq":` there is always a key; the top-level one is the last but the target's
 * (keys are sorted: `target` and `ticket` follow `seq`, and a target has no `seq`).
 */
export function textNamesSeq(text: string, seq: number): boolean {
  const at = text.lastIndexOf('"seq":');
  if (at < 0) return false;
  const digits = String(seq);
  const end = at + 6 + digits.length;
  return text.startsWith(digits, at + 6) && (text[end] === ',' || text[end] === '}');
}

export type Signed<T> = { value: T; valid: boolean } | undefined;
