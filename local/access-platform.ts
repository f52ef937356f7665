import { DEV_CLUSTER, mintToken, type MintOptions } from './fleet/issuer';
import { FLEET_PORTS } from './fleet/stack';

// The console's side of the dev access-platform issuer (local/fleet/issuer.ts: one key pair, one
// JWKS server, started with the fleet plane): the console trusts it for sign-in through the
// access platform, with its own audience, and these platform users are seeded (docs/operations.md).

export const CONSOLE_AUDIENCE = 'https://console.hdc-local.test';

export interface AccessOperator {
  /** the platform user name (JWT `username`) */
  user: string;
  roles: string[];
  traits: Record<string, string[]>;
  note: string;
}

export const ACCESS_OPERATORS: AccessOperator[] = [
  { user: 'ap-oscar', roles: ['hdc-helpdesk'], traits: { windows_logins: ['op-helpdesk'] }, note: 'no directory account of that name: resolved through trait windows_logins to op-helpdesk (Helpdesk)' },
  { user: 'op-auditor', roles: ['hdc-audit'], traits: { windows_logins: [] }, note: 'resolved by user name to the directory account op-auditor (Auditor)' },
  { user: 'ap-mapped', roles: ['hdc-approvers'], traits: { windows_logins: ['op-norole'] }, note: 'op-norole holds no role: signs in once a mapping gives role hdc-approvers a group' },
  { user: 'ap-nobody', roles: ['hdc-helpdesk'], traits: { windows_logins: ['no-such-login'] }, note: 'names no directory account: refused (no_directory_account)' },
];

/** The console's Authentication:Access configuration for the dev issuer. */
export const consoleAccessConfig = (profile: 'dev' | 'test') => ({
  Authentication__Access__JwksUrl: `http://127.0.0.1:${FLEET_PORTS[profile].jwks}/.well-known/jwks.json`,
  Authentication__Access__Issuer: DEV_CLUSTER,
  Authentication__Access__Audience: CONSOLE_AUDIENCE,
});

/** A dev access-platform JWT for the console (a seeded platform user, or any user with `roles`/`traits`). */
export function mintConsoleToken(user: string, opts: MintOptions & { roles?: string[] } = {}): Promise<string> {
  const seeded = ACCESS_OPERATORS.find((o) => o.user === user);
  return mintToken(user, opts.roles ?? seeded?.roles ?? [], { audience: CONSOLE_AUDIENCE, ...opts, traits: opts.traits ?? seeded?.traits ?? { windows_logins: [user] } });
}
