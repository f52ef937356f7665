import { ApiError, unauthorized } from '../errors';
import { logger } from '../log';
import { CLIENT_CODE, listClients } from './clients';
import type { FleetConfig, Level } from './config';
import { isLocalToken, verifyLocalToken, verifyPlatformToken } from './jwt';
import { readLocalAdmin } from './local-admin';
import type { FleetRuntime } from './runtime';
import { getAssignment, levelRank } from './technicians';

// Who is calling and what they may see, resolved on every request before any side effect
// (spec: Authentication 1-3). No session: the token is verified each time, the scope recomputed.

export type ScopeSource = 'assignment' | 'role';
export interface ScopeEntry {
  code: string;
  level: Level;
  sources: ScopeSource[];
}
export type Scope = { all: true } | { all: false; clients: ScopeEntry[] };

export interface FleetIdentity {
  username: string;
  method: 'local' | 'access';
  admin: boolean;
  roles: string[];
}

export interface FleetAccess {
  identity: FleetIdentity;
  scope: Scope;
  /** the caller's level on a client: 'admin' for administrators (also for no client), else per scope */
  levelOn(code: string | null): Level | 'admin' | undefined;
  /** codes the caller may see (undefined = all) */
  visibleCodes(): Set<string> | undefined;
}

export const CLIENT_ROLE_PREFIX = 'fleet-client-';

export function makeAccess(identity: FleetIdentity, scope: Scope): FleetAccess {
  const byCode = new Map(scope.all ? [] : scope.clients.map((c) => [c.code, c.level] as const));
  return {
    identity,
    scope,
    levelOn: (code) => (identity.admin ? 'admin' : code === null ? undefined : byCode.get(code)),
    visibleCodes: () => (identity.admin ? undefined : new Set(byCode.keys())),
  };
}

/** The bearer token of a request: the platform's assertion header, else `Authorization: Bearer`. */
export function requestToken(header: (n: string) => string | undefined, cfg: FleetConfig): string | undefined {
  const assertion = header(cfg.ACCESS_JWT_HEADER);
  if (assertion) return assertion.trim();
  const auth = header('authorization');
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m?.[1];
}

/** Technician scope = assignments ∪ fleet-client-<code> roles, ∩ the register, stronger level wins. */
export async function computeScope(rt: FleetRuntime, username: string, roles: string[]): Promise<Scope> {
  try {
    const [register, assignment] = await Promise.all([listClients(rt.store), getAssignment(rt.store, username)]);
    const registered = new Set(register.map((c) => c.code));
    const merged = new Map<string, ScopeEntry>();
    const add = (code: string, level: Level, source: ScopeSource) => {
      if (!registered.has(code)) return; // an unregistered code is visible to administrators only
      const cur = merged.get(code);
      if (!cur) return void merged.set(code, { code, level, sources: [source] });
      if (levelRank(level) > levelRank(cur.level)) cur.level = level;
      if (!cur.sources.includes(source)) cur.sources.push(source);
    };
    for (const c of assignment?.clients ?? []) add(c.code, c.level, 'assignment');
    if (rt.config.ACCESS_JWT_CLIENT_ROLES) for (const code of clientRoleCodes(roles)) add(code, rt.config.ACCESS_JWT_CLIENT_ROLE_LEVEL, 'role');
    return { all: false, clients: [...merged.values()].sort((a, b) => a.code.localeCompare(b.code)) };
  } catch (e) {
    logger.error('scope unreadable: no client (fail closed)', { error: e as Error });
    return { all: false, clients: [] };
  }
}

export const clientRoleCodes = (roles: string[]) =>
  roles.filter((r) => r.startsWith(CLIENT_ROLE_PREFIX)).map((r) => r.slice(CLIENT_ROLE_PREFIX.length)).filter((c) => CLIENT_CODE.test(c));

/** Decide who may sign in from the platform's claims (spec: Authentication 1, 3; Errors). */
export function platformSignIn(cfg: FleetConfig, username: string, roles: string[]): { admin: boolean } | undefined {
  if (cfg.ACCESS_JWT_ALLOWED_USERS.includes(username)) return { admin: true }; // break-glass user list
  if (roles.some((r) => cfg.ACCESS_JWT_ADMIN_ROLES.includes(r))) return { admin: true };
  if (roles.some((r) => cfg.ACCESS_JWT_ALLOWED_ROLES.includes(r))) return { admin: false };
  if (cfg.ACCESS_JWT_CLIENT_ROLES && clientRoleCodes(roles).length > 0) return { admin: false };
  return undefined;
}

/**
 * 403 signin_refused: a verified platform user the configuration does not let in. It carries the
 * user name the signed token names (for the audit row; never in the answer) and his roles.
 */
export class SignInRefused extends ApiError {
  constructor(
    readonly username: string,
    readonly roles: string[],
  ) {
    super(403, 'signin_refused');
  }
}

/**
 * Authenticate a request: 401 `unauthenticated` without a valid token, 403 `signin_refused` for
 * a valid platform user the configuration does not let in.
 */
export async function authenticate(rt: FleetRuntime, token: string | undefined): Promise<FleetAccess> {
  if (!token) throw unauthorized();
  if (isLocalToken(token)) {
    let claims: { username: string; epoch: number };
    try {
      claims = await verifyLocalToken(await rt.masterKey(), token);
    } catch {
      throw unauthorized('invalid_token');
    }
    const admin = await readLocalAdmin(rt.store);
    // a password change (new epoch) revokes older tokens
    if (!admin || admin.username !== claims.username || admin.epoch !== claims.epoch) throw unauthorized('invalid_token');
    return makeAccess({ username: admin.username, method: 'local', admin: true, roles: [] }, { all: true });
  }
  if (!rt.jwks) throw unauthorized('invalid_token');
  let claims: { username: string; roles: string[] };
  try {
    claims = await verifyPlatformToken(token, rt.jwks, { issuer: rt.config.ACCESS_JWT_ISSUER, audience: rt.config.ACCESS_JWT_AUDIENCE });
  } catch (e) {
    logger.warn('access-platform token refused', { reason: (e as Error).name });
    throw unauthorized('invalid_token');
  }
  const decision = platformSignIn(rt.config, claims.username, claims.roles);
  if (!decision) throw new SignInRefused(claims.username, claims.roles);
  const identity: FleetIdentity = { username: claims.username, method: 'access', admin: decision.admin, roles: claims.roles };
  const scope: Scope = decision.admin ? { all: true } : await computeScope(rt, claims.username, claims.roles);
  return makeAccess(identity, scope);
}
