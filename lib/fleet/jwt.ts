import { createHmac } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';

// Two kinds of bearer token, never confused: the access platform's (asymmetric, verified against
// its JWKS over HTTP on every request) and the local administrator's (HS256 with a key derived
// from the master key, issuer `hdc-fleet-local`). Each verifier accepts only its own algorithms.

export type JwksResolver = ReturnType<typeof createRemoteJWKSet>;
export const createJwks = (url: string): JwksResolver => createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });

export const LOCAL_ISSUER = 'hdc-fleet-local';
const PLATFORM_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

export interface PlatformClaims {
  username: string;
  roles: string[];
}

export const isLocalToken = (token: string) => {
  try {
    return decodeProtectedHeader(token).alg === 'HS256';
  } catch {
    return false;
  }
};

/** Clock skew tolerated on `exp` and `nbf` (seconds). */
export const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Verify an access-platform JWT (claims `username`/`sub`, `roles`); throws on any problem. A
 * token must expire: one without `exp` would be valid forever once leaked.
 */
export async function verifyPlatformToken(token: string, jwks: JwksResolver, opts: { issuer?: string; audience?: string }): Promise<PlatformClaims> {
  const { payload } = await jwtVerify(token, jwks, { algorithms: PLATFORM_ALGS, issuer: opts.issuer, audience: opts.audience, clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: ['exp'] });
  const username = typeof payload.username === 'string' && payload.username ? payload.username : payload.sub;
  if (!username) throw new Error('token names no user');
  const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === 'string') : [];
  return { username, roles };
}

const localKey = (masterKey: Buffer) => createHmac('sha256', masterKey).update('hdc-fleet/local-admin-token/v1').digest();

export async function signLocalToken(masterKey: Buffer, username: string, epoch: number, ttlSeconds: number): Promise<{ token: string; expiresAt: string }> {
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  const token = await new SignJWT({ ep: epoch })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(LOCAL_ISSUER)
    .setAudience(LOCAL_ISSUER)
    .setSubject(username)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(localKey(masterKey));
  return { token, expiresAt: new Date(exp * 1000).toISOString() };
}

export async function verifyLocalToken(masterKey: Buffer, token: string): Promise<{ username: string; epoch: number }> {
  const { payload } = await jwtVerify<JWTPayload & { ep?: number }>(token, localKey(masterKey), { algorithms: ['HS256'], issuer: LOCAL_ISSUER, audience: LOCAL_ISSUER, requiredClaims: ['exp'] });
  if (!payload.sub || typeof payload.ep !== 'number') throw new Error('malformed local token');
  return { username: payload.sub, epoch: payload.ep };
}
