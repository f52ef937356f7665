import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';

// The dev access-platform issuer: an RSA key pair (RS256, like the platform's app-access JWTs)
// kept in local/.data/fleet/, its JWKS served on loopback by jwks-server.ts, and tokens with
// the platform's claim shape: iss (cluster name), sub and username, roles, traits, aud.

export const ISSUER_DIR = path.join(__dirname, '../.data/fleet');
const KEY_FILE = path.join(ISSUER_DIR, 'issuer-key.json');
export const DEV_CLUSTER = 'hdc-local';
export const DEV_AUDIENCE = 'https://fleet.hdc-local.test';

export async function issuerKey(): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  if (fs.existsSync(KEY_FILE)) return JSON.parse(fs.readFileSync(KEY_FILE, 'utf8'));
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `dev-${Date.now().toString(36)}`;
  const pair = {
    privateJwk: { ...(await exportJWK(privateKey)), alg: 'RS256', kid, use: 'sig' },
    publicJwk: { ...(await exportJWK(publicKey)), alg: 'RS256', kid, use: 'sig' },
  };
  fs.mkdirSync(ISSUER_DIR, { recursive: true, mode: 0o700 });
  fs.writeFileSync(KEY_FILE, JSON.stringify(pair), { mode: 0o600 });
  return pair;
}

export interface MintOptions {
  ttlSeconds?: number;
  traits?: Record<string, string[]>;
  issuer?: string;
  audience?: string;
  /** for negative tests: sign with another key, or already expired */
  privateJwk?: JWK;
  expired?: boolean;
  /** for negative tests: no `exp` claim at all */
  noExpiry?: boolean;
  /** for negative tests: `nbf` this many seconds from now */
  notBeforeIn?: number;
}

export async function mintToken(username: string, roles: string[], opts: MintOptions = {}): Promise<string> {
  const { privateJwk } = opts.privateJwk ? { privateJwk: opts.privateJwk } : await issuerKey();
  const key = await importJWK(privateJwk, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  const exp = opts.expired ? now - 3600 : now + (opts.ttlSeconds ?? 3600);
  const jwt = new SignJWT({ username, roles, traits: opts.traits ?? { logins: [username], windows_logins: [username] } })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: privateJwk.kid })
    .setIssuer(opts.issuer ?? DEV_CLUSTER)
    .setSubject(username)
    .setAudience(opts.audience ?? DEV_AUDIENCE)
    .setIssuedAt(opts.expired ? exp - 60 : now)
    .setNotBefore(opts.expired ? exp - 60 : now + (opts.notBeforeIn ?? 0));
  if (!opts.noExpiry) jwt.setExpirationTime(opts.notBeforeIn ? Math.max(exp, now + opts.notBeforeIn + 3600) : exp);
  return jwt.sign(key);
}

/** A key pair the fleet does not trust (negative tests). */
export async function strangerKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: 'RS256', kid: 'stranger' };
}
