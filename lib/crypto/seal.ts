import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// AES-256-GCM sealing with associated data. Format: v1.<iv>.<tag>.<ciphertext> (base64url).
// The AAD binds a sealed value to its purpose (e.g. "tech-account:read"), so a value cannot be
// moved to another field or direction and still open.
export function seal(key: Buffer, plaintext: string | Buffer, aad: string): string {
  if (key.length !== 32) throw new Error('AES-256-GCM needs a 32-byte key');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const B64URL = /^[A-Za-z0-9_-]*$/;

/** base64url in its one canonical spelling (Buffer.from skips foreign characters and ignores spare bits: a changed text could decode alike). */
function strictBase64url(s: string): Buffer | undefined {
  if (!B64URL.test(s)) return undefined;
  const b = Buffer.from(s, 'base64url');
  return b.toString('base64url') === s ? b : undefined;
}

/**
 * Open a sealed value; anything but the exact text `seal` wrote under this key and AAD throws.
 * The GCM tag must be the full 16 bytes: Node would otherwise check a truncated tag (down to
 * 4 bytes), which an attacker can forge by trial.
 */
export function open(key: Buffer, sealed: string, aad: string): Buffer {
  const parts = sealed.split('.');
  const [v, ivText, tagText, ctText] = parts;
  const iv = parts.length === 4 && v === 'v1' ? strictBase64url(ivText) : undefined;
  const tag = iv ? strictBase64url(tagText) : undefined;
  const ct = tag ? strictBase64url(ctText) : undefined;
  if (!iv || iv.length !== IV_BYTES || !tag || tag.length !== TAG_BYTES || !ct) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ct), decipher.final()]);
}

export const openString = (key: Buffer, sealed: string, aad: string) => open(key, sealed, aad).toString('utf8');

export const sha256Hex = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');
