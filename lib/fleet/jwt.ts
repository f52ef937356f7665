import { createHmac } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';

// Two kinds of bearer token, never confused: the access platform's (asymmetric, verified against
// its JWKS over HTTP on every request) and the local administrator's (HS256 with a key derived
// from the master key, issuer `hdc-fleet-local`). Each verifier accepts only its own algorithms.

export { createJwks, CLOCK_TOLERANCE_SECONDS, verifyPlatformToken, type JwksResolver, type PlatformClaims } from '../auth/platform-token';

export const LOCAL_ISSUER = 'hdc-fleet-local';

export const isLocalToken = (token: string) => {
  try {
    return decodeProtectedHeader(token).alg === 'HS256';
  } catch {
    return false;
  }
};

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
