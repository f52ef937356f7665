import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Local administrator password: scrypt (memory-hard: N=2^15, r=8 → 32 MiB per hash).
// Format: scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>; parameters travel with the hash so
// they can be raised later without breaking stored hashes.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEYLEN = 32;

const scrypt = (pw: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

const maxmem = (n: number, r: number) => 128 * n * r * 2;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEYLEN, { N, r: R, p: P, maxmem: maxmem(N, R) });
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

// A hash of nothing anyone knows: verifying against it costs the same as a real account.
let dummy: Promise<string> | undefined;
export const dummyHash = () => (dummy ??= hashPassword(randomBytes(24).toString('base64url')));

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const got = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: maxmem(Number(n), Number(r)),
  });
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** The administrator password policy: long enough to resist offline guessing of a leaked hash. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 12) return 'at least 12 characters';
  if (password.length > 256) return 'at most 256 characters';
  return undefined;
}
