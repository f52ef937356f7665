import { createRemoteJWKSet, jwtVerify } from 'jose';

// The access platform's JWT (its application-access assertion), verified against the platform's
// JWKS over HTTP: one verifier for both the console's sign-in and the fleet plane's requests.

export type JwksResolver = ReturnType<typeof createRemoteJWKSet>;
export const createJwks = (url: string): JwksResolver => createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });

const PLATFORM_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

/** Clock skew tolerated on `exp` and `nbf` (seconds). */
export const CLOCK_TOLERANCE_SECONDS = 30;

export interface PlatformClaims {
  username: string;
  roles: string[];
  /** the platform user's traits (e.g. `windows_logins`), string values only */
  traits: Record<string, string[]>;
}

/**
 * Verify an access-platform JWT (claims `username`/`sub`, `roles`, `traits`); throws on any
 * problem. Asymmetric algorithms only; a token must expire: one without `exp` would be valid
 * forever once leaked.
 */
export async function verifyPlatformToken(token: string, jwks: JwksResolver, opts: { issuer?: string; audience?: string }): Promise<PlatformClaims> {
  const { payload } = await jwtVerify(token, jwks, { algorithms: PLATFORM_ALGS, issuer: opts.issuer, audience: opts.audience, clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: ['exp'] });
  const username = typeof payload.username === 'string' && payload.username ? payload.username : payload.sub;
  if (!username) throw new Error('token names no user');
  const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === 'string') : [];
  const traits: Record<string, string[]> = {};
  if (payload.traits && typeof payload.traits === 'object' && !Array.isArray(payload.traits)) {
    for (const [k, v] of Object.entries(payload.traits as Record<string, unknown>)) {
      if (Array.isArray(v)) traits[k] = v.filter((x): x is string => typeof x === 'string');
    }
  }
  return { username, roles, traits };
}
