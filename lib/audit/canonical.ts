import { createHash } from 'node:crypto';

/** Canonical serialization: JSON with object keys sorted at every depth, undefined dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export const GENESIS_HASH = '0'.repeat(64);

export function chainHash(prevHash: string, body: unknown): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonicalJson(body)).digest('hex');
}
