import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { open, openString, seal } from '../../lib/crypto/seal';
import { canonicalJson, chainHash, GENESIS_HASH } from '../../lib/audit/canonical';
import { scrubDetails } from '../../lib/audit';

describe('AES-256-GCM sealing', () => {
  const key = randomBytes(32);
  it('round-trips and hides the plaintext', () => {
    const sealed = seal(key, 'Passw0rd!Read', 'tech-account:read');
    expect(sealed).not.toContain('Passw0rd');
    expect(openString(key, sealed, 'tech-account:read')).toBe('Passw0rd!Read');
  });
  it('refuses another AAD, another key, or a changed byte', () => {
    const sealed = seal(key, 'secret', 'tech-account:read');
    expect(() => open(key, sealed, 'tech-account:write')).toThrow();
    expect(() => open(randomBytes(32), sealed, 'tech-account:read')).toThrow();
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3], 'base64url');
    ct[0] ^= 1;
    parts[3] = ct.toString('base64url');
    expect(() => open(key, parts.join('.'), 'tech-account:read')).toThrow();
  });
});

describe('audit canonical form', () => {
  it('does not depend on key order and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[1,2]},"b":1}');
    expect(chainHash(GENESIS_HASH, { a: 1, b: 2 })).toBe(chainHash(GENESIS_HASH, { b: 2, a: 1 }));
  });
  it('serializes exactly as the first implementation did, so stored chains keep verifying (property test)', () => {
    // the implementation the stored chains were hashed with, before it was rewritten for speed
    const reference = (value: unknown): string => {
      if (value === null || typeof value !== 'object') return JSON.stringify(value);
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : reference(v))).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
    };
    fc.assert(fc.property(fc.anything({ withNullPrototype: true, withObjectString: true, maxDepth: 4 }), (v) => canonicalJson(v) === reference(v)), { numRuns: 2000 });
    expect(canonicalJson({ 'é': 1, 'e': [undefined, 2], 'Z': { '\u2028': 'x' } })).toBe(reference({ 'é': 1, 'e': [undefined, 2], 'Z': { '\u2028': 'x' } }));
  });
  it('hashes a row as sha256(prevHash, newline, canonical body) in UTF-8, as the stored chains were (property test)', () => {
    const reference = (prev: string, body: unknown) => createHash('sha256').update(prev).update('\n').update(canonicalJson(body)).digest('hex');
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.jsonValue(), (prev, body) => chainHash(prev, body) === reference(prev, body)), { numRuns: 1000 });
  });
  it('changes the hash when the optional client field is added, changed or removed', () => {
    const base = { event: 'x', seq: 1 };
    const h0 = chainHash(GENESIS_HASH, base);
    expect(chainHash(GENESIS_HASH, { ...base, client: 'acme' })).not.toBe(h0);
    expect(chainHash(GENESIS_HASH, { ...base, client: 'acme' })).not.toBe(chainHash(GENESIS_HASH, { ...base, client: 'acme2' }));
  });
  it('scrubs details keys that name a secret', () => {
    expect(scrubDetails({ password: 'x', nested: { clientSecret: 'y', ok: 1 }, count: 3 })).toEqual({ password: '[redacted]', nested: { clientSecret: '[redacted]', ok: 1 }, count: 3 });
  });
});
