import { createCipheriv, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { open, openString, seal } from '../../../lib/crypto/seal';

// The sealed values that travel outside (list cursors, the password service's envelopes): any
// text but the exact one sealed under this key and AAD is refused, never opened nor crashed on
// with anything but the one error.
const key = randomBytes(32);
const AAD = 'cursor:users:operator';

const refused = (text: string, aad = AAD) => {
  try {
    open(key, text, aad);
    return false;
  } catch (e) {
    return (e as Error).message === 'not a sealed value' || /auth/i.test((e as Error).message); // jest's realm: no instanceof Error
  }
};

describe('fuzz: sealed values', () => {
  it('round-trips any plaintext under its AAD', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.string(), (text, aad) => openString(key, seal(key, text, aad), aad) === text), { numRuns: 300 });
  });

  it('refuses every changed character of a sealed text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), fc.nat(), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ !'.split('')), (text, at, c) => {
        const sealed = seal(key, text, AAD);
        const i = at % sealed.length;
        fc.pre(sealed[i] !== c);
        return refused(sealed.slice(0, i) + c + sealed.slice(i + 1));
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses every truncation, extension and insertion', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), fc.nat(), fc.string({ minLength: 1, maxLength: 4 }), (text, at, extra) => {
        const sealed = seal(key, text, AAD);
        const i = at % sealed.length;
        return refused(sealed.slice(0, i)) && refused(sealed + extra) && refused(sealed.slice(0, i) + extra + sealed.slice(i));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses any text at all that was not sealed, and another AAD', () => {
    fc.assert(fc.property(fc.string(), (text) => refused(text)), { numRuns: 500 });
    fc.assert(fc.property(fc.string(), (aad) => { fc.pre(aad !== AAD); return refused(seal(key, 'x', AAD), aad); }), { numRuns: 200 });
  });

  it('requires the full 16-byte GCM tag (a truncated tag, valid as far as it goes, is refused)', () => {
    // regression: Node accepts tags of 4 to 16 bytes unless told the length; a 4-byte tag is forgeable by trial
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 4, max: 15 }), (text, tagBytes) => {
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', key, iv);
        cipher.setAAD(Buffer.from(AAD, 'utf8'));
        const ct = Buffer.concat([cipher.update(Buffer.from(text, 'utf8')), cipher.final()]);
        const short = cipher.getAuthTag().subarray(0, tagBytes);
        return refused(['v1', iv.toString('base64url'), short.toString('base64url'), ct.toString('base64url')].join('.'));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a sealed text with spare bits or foreign characters that decode to the same bytes', () => {
    // regression: Buffer.from(.., 'base64url') ignores characters outside the alphabet and spare bits
    const sealed = seal(key, 'x', AAD);
    const [v, iv, tag, ct] = sealed.split('.');
    expect(refused([v, iv, `${tag}!`, ct].join('.'))).toBe(true);
    const last = tag[tag.length - 1];
    const sibling = String.fromCharCode(last.charCodeAt(0) ^ 1); // a 16-byte tag is 22 characters: 2 spare bits in the last
    expect(refused([v, iv, tag.slice(0, -1) + sibling, ct].join('.'))).toBe(true);
    expect(refused(`${sealed}.extra`)).toBe(true);
  });
});
