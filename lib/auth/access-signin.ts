import { ApiError, forbidden, unauthorized } from '../errors';
import { hasAnyRole, operatorRights } from '../authz/rights';
import type { Config } from '../config';
import type { Directory, PrincipalFacts } from '../directory';
import { logger } from '../log';
import type { ConsoleRuntime } from '../runtime';
import type { AccessMapping, InstanceSettings } from '../setup/settings';
import { createJwks, verifyPlatformToken, type JwksResolver, type PlatformClaims } from './platform-token';
import { noteSignIn } from './operators';
import { createSession, destroySession, type OperatorIdentity, type Session } from './sessions';
import { sessionPolicy } from './signin';

// Sign-in through the access platform (console spec, Authentication 1, 3 and 6): the platform's
// JWT (user name, roles, traits), verified against its JWKS, becomes a cookie session. The
// operator's directory account is resolved from the claims at every sign-in
// (Authentication:Access:AdAccountClaims); every account the claims name is protected as the
// operator's own; role/trait mappings add the groups they name. No authenticator code: the
// platform's sign-in is the proof, and the session is the step-up (stepup:teleport).

const resolvers = new Map<string, JwksResolver>();
const jwksOf = (url: string) => {
  let r = resolvers.get(url);
  if (!r) resolvers.set(url, (r = createJwks(url)));
  return r;
};

/** The claim values AdAccountClaims names, in its order (`username`, `sub`, `trait:<name>`), without repeats. */
export function accountCandidates(claims: PlatformClaims & { sub?: string }, spec: string): string[] {
  const out: string[] = [];
  for (const source of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const values = source === 'username' ? [claims.username] : source === 'sub' ? [claims.sub ?? claims.username] : (claims.traits[source.slice('trait:'.length)] ?? []);
    for (const v of values) if (v && v.length <= 256 && !out.some((o) => o.toLowerCase() === v.toLowerCase())) out.push(v);
  }
  return out;
}

/** Does a mapping apply to these claims? (a role, or a trait holding the value) */
export const mappingApplies = (m: Pick<AccessMapping, 'role' | 'trait' | 'value'>, claims: PlatformClaims) =>
  m.role !== undefined ? claims.roles.includes(m.role) : m.trait !== undefined && (claims.traits[m.trait] ?? []).includes(m.value ?? '');

export const SUPER_ADMINISTRATOR_ROLE_MAPPING_REQUIRED = 'super_administrator_role_mapping_required';

/**
 * Authentication:Access:SuperAdministratorsRequireRoleMapping (issue 25): a claim that names a
 * Super administrator's account (user name, windows_logins) is by itself no proof of that role;
 * with the setting on, such a sign-in also needs a platform role that an access mapping names.
 * Off (the default), the spec's resolution stands: the claims alone sign the account in.
 */
export function superAdministratorMayUsePlatform(
  settings: Pick<InstanceSettings, 'superAdministrators' | 'accessMappings'>,
  access: Pick<Config['Authentication']['Access'], 'SuperAdministratorsRequireRoleMapping'>,
  guid: string,
  claims: PlatformClaims,
): boolean {
  if (!access.SuperAdministratorsRequireRoleMapping) return true;
  if (!settings.superAdministrators.some((g) => g.toLowerCase() === guid.toLowerCase())) return true;
  return (settings.accessMappings ?? []).some((m) => m.role !== undefined && claims.roles.includes(m.role));
}

/** Access-platform sign-in is configured on this host (a JWKS URL). */
export const accessSignInConfigured = (config: Config) => !!config.Authentication.Access.JwksUrl;

/** The accounts the candidates name (each resolved by the read account; unknown names are skipped). */
async function resolveAccounts(dir: Directory, candidates: string[]): Promise<PrincipalFacts[]> {
  const found: PrincipalFacts[] = [];
  for (const c of candidates) {
    const dn = await dir.findUserDn(c);
    const facts = dn ? await dir.principalFacts(dn) : undefined;
    if (facts && !found.some((f) => f.guid === facts.guid)) found.push(facts);
  }
  return found;
}

export async function accessSignIn(
  rt: ConsoleRuntime,
  token: string | undefined,
  ctx: { sourceIp: string; correlationId: string; preSession?: Session },
): Promise<{ session: Session; operator: OperatorIdentity }> {
  const settings = await rt.settings();
  if (!settings) throw new ApiError(503, 'not_configured');
  const access = rt.config.Authentication.Access;
  const audit = (outcome: string, reason: string, actor: { id?: string; name?: string }, details?: Record<string, unknown>) =>
    rt.audit.append({ event: 'auth.login', outcome, reason, actor: { ...actor, provider: 'access', ip: ctx.sourceIp }, correlationId: ctx.correlationId, ...(details ? { details } : {}) });

  if (!access.JwksUrl) {
    await audit('denied', 'access_signin_not_configured', {});
    throw forbidden('access_signin_not_configured');
  }
  if (!token) {
    await audit('failure', 'no_token', {});
    throw unauthorized('access_token_required');
  }
  let claims: PlatformClaims;
  try {
    claims = await verifyPlatformToken(token, jwksOf(access.JwksUrl), { issuer: access.Issuer, audience: access.Audience });
  } catch (e) {
    // the reason by its class only: a token's content is never logged
    logger.warn('access-platform token refused', { reason: (e as Error).name });
    await audit('failure', 'invalid_token', {}, { error: (e as Error).name });
    throw unauthorized('invalid_token');
  }
  const platform = { username: claims.username, roles: claims.roles };
  const dir = await rt.directory();
  const accounts = await resolveAccounts(dir, accountCandidates(claims, access.AdAccountClaims));
  const account = accounts.find((a) => !(a.userAccountControl & 0x2));
  if (!account) {
    await audit('denied', accounts.length ? 'account_disabled' : 'no_directory_account', { name: claims.username }, { platform });
    throw forbidden('no_directory_account');
  }
  const mapped = (settings.accessMappings ?? []).filter((m) => mappingApplies(m, claims)).map((m) => m.group.sid);
  const mappedGroupSids = [...new Set(mapped)].filter((s) => !account.groupSids.includes(s));
  const operator: OperatorIdentity = {
    guid: account.guid,
    dn: account.dn,
    username: account.samAccountName,
    displayName: account.displayName,
    sid: account.sid,
    groupSids: [...account.groupSids, ...mappedGroupSids],
    provider: 'access',
    factsAt: Date.now(),
    ownGuids: accounts.map((a) => a.guid).filter((g) => g !== account.guid),
    mappedGroupSids,
    platform,
  };
  const who = { id: account.guid, name: account.samAccountName };
  if (!superAdministratorMayUsePlatform(settings, access, account.guid, claims)) {
    await audit('denied', SUPER_ADMINISTRATOR_ROLE_MAPPING_REQUIRED, who, { platform });
    throw forbidden(SUPER_ADMINISTRATOR_ROLE_MAPPING_REQUIRED);
  }
  if (!hasAnyRole(await operatorRights(rt.store, settings, operator))) {
    await audit('denied', 'no_role', who, { platform });
    throw forbidden('no_console_role');
  }
  // a new session id at sign-in (no fixation); the anonymous pre-session is dropped
  if (ctx.preSession) await destroySession(rt.store, ctx.preSession.id);
  const session = await createSession(rt.store, sessionPolicy(rt), operator, { stepUpProof: 'access' });
  // the operator record: provider and subject (the platform's user name) for the operators list
  await noteSignIn(rt.store, { guid: account.guid, username: account.samAccountName, displayName: account.displayName, provider: 'access', subject: claims.username });
  await audit('success', 'access_platform', who, { platform, ...(mappedGroupSids.length ? { mappedGroupSids } : {}), ...(operator.ownGuids!.length ? { ownAccounts: operator.ownGuids } : {}) });
  return { session, operator };
}
