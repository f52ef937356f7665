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
export interface StoredRow {
  pk: string;
  sk: string;
  seq: number;
  body: AuditInput & { at: string; id: string; seq: number };
  prevHash: string;
  hash: string;
  /** the first of the rows appended with this one (they share lookup items); absent: alone */
  lk?: number;
}


export type Signed<T> = { value: T; valid: boolean } | undefined;
