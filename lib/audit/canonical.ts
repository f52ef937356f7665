import { hash } from 'node:crypto';

/** Canonical serialization: JSON with object keys sorted at every depth, undefined dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  // rows are stored with their keys in canonical order: then the engine's own serializer gives the
  // same text, several times faster than building it here (verify re-serializes every row it walks)
  if (inCanonicalOrder(value)) return JSON.stringify(value);
  return build(value);
}

/** Plain JSON data whose object keys are sorted at every depth (and nothing JSON would drop). */
function inCanonicalOrder(value: unknown): boolean {
  if (value === null) return true;
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean') return true;
  if (t !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (v === undefined || !inCanonicalOrder(v)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false; // Date, boxed values: their own JSON
  const obj = value as Record<string, unknown>;
  let prev: string | undefined;
  for (const k in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, k)) return false;
    if (prev !== undefined && !(prev < k)) return false;
    if (!inCanonicalOrder(obj[k])) return false;
    prev = k;
  }
  return true;
}

function build(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  // loops and one string, not entries/filter/map/join: verify re-serializes every row it walks
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      out += (i ? ',' : '') + (v === undefined ? 'null' : build(v));
    }
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort(); // UTF-16 code unit order, as `<` compares
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + build(v);
    first = false;
  }
  return out + '}';
}

export const GENESIS_HASH = '0'.repeat(64);

export function chainHash(prevHash: string, body: unknown): string {
  return chainHashOfText(prevHash, canonicalJson(body));
}

/** The chain hash of a body already in canonical text. */
export function chainHashOfText(prevHash: string, canonicalBody: string): string {
  // one-shot: no Hash object per row (verify hashes every row it walks); the same bytes as
  // update(prevHash).update('\n').update(body), UTF-8
  return hash('sha256', `${prevHash}\n${canonicalBody}`, 'hex');
}
