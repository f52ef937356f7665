import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { routes as authRoutes } from '../../functions/console/auth';
import { routes as computerRoutes } from '../../functions/console/computers';
import { createHttpHandler } from '../../lib/http/console';
import { createRuntime } from '../../lib/runtime';
import { readSignInPolicy } from '../../lib/auth/access-only';
import { readSettings } from '../../lib/setup/settings';
import { ConsoleClient } from '../../local/console-client';
import { CONSOLE_AUDIENCE, consoleAccessConfig, mintConsoleToken } from '../../local/access-platform';
import { DEV_AUDIENCE, strangerKey } from '../../local/fleet/issuer';
import { runAdminCommand, consoleEnvironment } from '../../functions/admin/cli';
import { account, auditMark, auditSince, newClient, seedUser, stack, steppedUp, store } from '../support/stack';

// Sign-in through the access platform (console spec, Authentication 1, 3, 6; DESIGN decision 4)
// against the real stack: the dev issuer's JWKS (the one the fleet plane trusts), the Samba
// directory for the account the claims name, DynamoDB Local for sessions and the audit chain.

const HEADER = 'teleport-jwt-assertion';
const group = (name: string) => stack.directory.groups.find((g) => g.name === name)!;
const computer = (name: string) => stack.computers.find((c) => c.name === name)!;

/** A pre-session, then POST /api/auth/access with the token in the platform's header. */
async function accessSignIn(token?: string): Promise<{ client: ConsoleClient; status: number; body: any }> {
  const client = newClient();
  await client.antiforgery();
  const r = await client.post('/api/auth/access', {}, token ? { [HEADER]: token } : {});
  if (r.status === 200) client.csrf = r.body.csrfToken;
  return { client, status: r.status, body: r.body };
}

describe('POST /api/auth/access', () => {
  it('creates a session from the platform JWT; the account is resolved from trait windows_logins; audited with the platform user and roles', async () => {
    const mark = await auditMark();
    const { client, status, body } = await accessSignIn(await mintConsoleToken('ap-oscar'));
    expect([status, body.operator.username]).toEqual([200, 'op-helpdesk']);
    expect(client.cookie('__Host-hdc')).toBeDefined();
    const me = await client.get('/api/auth/me');
    expect(me.body).toMatchObject({ username: 'op-helpdesk', provider: 'access' });
    expect(me.body.permissions).toContain('computers.laps.read');
    expect((await auditSince(mark)).find((r) => r.event === 'auth.login')).toMatchObject({
      outcome: 'success',
      reason: 'access_platform',
      actor: { id: seedUser('op-helpdesk').guid, name: 'op-helpdesk', provider: 'access' },
      details: { platform: { username: 'ap-oscar', roles: ['hdc-helpdesk'] } },
    });
  });

  it('resolves by the user name first (AdAccountClaims username,trait:windows_logins)', async () => {
    const { status, body } = await accessSignIn(await mintConsoleToken('op-auditor'));
    expect([status, body.operator.username]).toEqual([200, 'op-auditor']);
  });

  it('refuses a missing, foreign, expired, not-yet-valid or other-audience token and a token without exp: 401, audited, no session', async () => {
    const stranger = await strangerKey();
    const cases: Array<[string, string | undefined, string, string]> = [
      ['no token', undefined, 'access_token_required', 'no_token'],
      ['signed by another key', await mintConsoleToken('ap-oscar', { privateJwk: stranger }), 'invalid_token', 'invalid_token'],
      ['expired', await mintConsoleToken('ap-oscar', { expired: true }), 'invalid_token', 'invalid_token'],
      ['not yet valid', await mintConsoleToken('ap-oscar', { notBeforeIn: 600 }), 'invalid_token', 'invalid_token'],
      ["the fleet plane's audience", await mintConsoleToken('ap-oscar', { audience: DEV_AUDIENCE }), 'invalid_token', 'invalid_token'],
      ['another issuer', await mintConsoleToken('ap-oscar', { issuer: 'elsewhere' }), 'invalid_token', 'invalid_token'],
      ['no exp', await mintConsoleToken('ap-oscar', { noExpiry: true }), 'invalid_token', 'invalid_token'],
      ['garbage', 'not.a.jwt', 'invalid_token', 'invalid_token'],
    ];
    for (const [what, token, code, reason] of cases) {
      const mark = await auditMark();
      const r = await accessSignIn(token);
      expect([what, r.status, r.body.code]).toEqual([what, 401, code]);
      expect((await r.client.get('/api/auth/me')).status).toBe(401);
      expect((await auditSince(mark)).find((x) => x.event === 'auth.login')).toMatchObject({ outcome: 'failure', reason, actor: { provider: 'access' } });
    }
    expect(CONSOLE_AUDIENCE).not.toBe(DEV_AUDIENCE);
  });

  it('refuses claims naming no directory account, a disabled one, and an account without a console role: 403, audited', async () => {
    const cases: Array<[string, Promise<string>, string, string]> = [
      ['no account', mintConsoleToken('ap-nobody'), 'no_directory_account', 'no_directory_account'],
      ['disabled account', mintConsoleToken('ap-carol', { roles: ['hdc-helpdesk'], traits: { windows_logins: ['carol'] } }), 'no_directory_account', 'account_disabled'],
      ['no role', mintConsoleToken('ap-mapped'), 'no_console_role', 'no_role'],
    ];
    for (const [what, token, code, reason] of cases) {
      const mark = await auditMark();
      const r = await accessSignIn(await token);
      expect([what, r.status, r.body.code]).toEqual([what, 403, code]);
      expect((await r.client.get('/api/auth/me')).status).toBe(401);
      expect((await auditSince(mark)).find((x) => x.event === 'auth.login')).toMatchObject({ outcome: 'denied', reason });
    }
  });

  it('needs the CSRF token of a pre-session like the password sign-in (400, no session)', async () => {
    const c = newClient();
    const r = await c.post('/api/auth/access', {}, { [HEADER]: await mintConsoleToken('ap-oscar') });
    expect(r.status).toBe(400);
    expect(c.cookie('__Host-hdc')).toBeUndefined();
  });
});

describe('the session is the step-up (stepup:teleport); Authentication:Access:StepUp=Deny refuses every step-up', () => {
  it('Session (default): a LAPS reveal needs no authenticator code, audited auth.reauth stepup:teleport', async () => {
    const { client } = await accessSignIn(await mintConsoleToken('ap-oscar'));
    const mark = await auditMark();
    const r = await client.post(`/api/computers/${computer('WS-STD-01').guid}/laps`, { confirm: true, ticket: 'INC-AP-1' });
    expect(r.status).toBe(200);
    expect(typeof r.body.password).toBe('string');
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'auth.reauth')).toMatchObject({ outcome: 'success', reason: 'stepup:teleport', actor: { name: 'op-helpdesk', provider: 'access' } });
    expect(rows.find((x) => x.event === 'computers.laps.read')).toMatchObject({ outcome: 'success', actor: { provider: 'access' } });
    // POST /api/auth/reauth answers that the session is the proof
    const reauth = await client.post('/api/auth/reauth', { code: '123456' });
    expect([reauth.status, reauth.body.proof]).toEqual([200, 'access']);
  });

  it('Deny: 403 strict_reauth_required naming no proof, for LAPS and for /api/auth/reauth; audited; no password revealed', async () => {
    const { client } = await accessSignIn(await mintConsoleToken('ap-oscar'));
    const rt = createRuntime({
      env: { ...process.env, ...consoleEnvironment(stack), HDC_Authentication__Access__StepUp: 'Deny', Helpdesk__Enabled: 'true', NODE_EXTRA_CA_CERTS: stack.directory.caFile },
      store,
    });
    const event = (handlerPath: string, body: unknown): APIGatewayProxyEventV2 =>
      ({
        rawPath: handlerPath,
        headers: { cookie: `__Host-hdc=${client.cookie('__Host-hdc')}`, 'x-csrf-token': client.csrf!, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        requestContext: { http: { method: 'POST', sourceIp: '127.0.0.1' } },
      }) as unknown as APIGatewayProxyEventV2;
    const mark = await auditMark();
    const laps = await createHttpHandler(computerRoutes, () => rt)(event(`/api/computers/${computer('WS-STD-01').guid}/laps`, { confirm: true, ticket: 'INC-AP-2' }));
    expect([laps.statusCode, JSON.parse(laps.body!)]).toEqual([403, { code: 'strict_reauth_required', proof: null }]);
    const reauth = await createHttpHandler(authRoutes, () => rt)(event('/api/auth/reauth', { code: '123456' }));
    expect([reauth.statusCode, JSON.parse(reauth.body!)]).toEqual([403, { code: 'strict_reauth_required', proof: null }]);
    const rows = await auditSince(mark);
    expect(rows.filter((x) => x.event === 'auth.reauth').map((x) => [x.outcome, x.reason])).toEqual([
      ['denied', 'stepup:teleport'],
      ['denied', 'stepup:teleport'],
    ]);
    expect(rows.find((x) => x.event === 'computers.laps.read')).toMatchObject({ outcome: 'denied', reason: 'strict_reauth_required' });
    expect(rows.some((x) => x.event === 'computers.laps.read' && x.outcome === 'success')).toBe(false);
  });
});

describe("the operator's own accounts and the mapped groups are protected", () => {
  it('every account the claims name is the operator’s own: an action on the second one is refused (own_account, audited)', async () => {
    const alice = seedUser('alice');
    const { client } = await accessSignIn(await mintConsoleToken('ap-oscar', { traits: { windows_logins: ['op-helpdesk', 'alice'] } }));
    expect((await client.get('/api/auth/me')).body.username).toBe('op-helpdesk');
    const mark = await auditMark();
    const r = await client.post(`/api/users/${alice.guid}/unlock`, { ticket: 'INC-AP-3' });
    expect([r.status, r.body.code]).toEqual([403, 'own_account']);
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', reason: 'own_account', target: { id: alice.guid } });
  });

  it('a mapping set (role → group by SID or DN) is resolved when saved, audited; its groups become protected; the mapped role signs in', async () => {
    const admin = await steppedUp('op-super');
    const helpdesk = (await accessSignIn(await mintConsoleToken('ap-oscar'))).client;
    const bob = seedUser('bob');
    expect((await helpdesk.get(`/api/users/${bob.guid}`)).body.protected).toBe(false);
    try {
      const mark = await auditMark();
      const saved = await admin.put('/api/settings/access/mappings', {
        mappings: [
          { role: 'hdc-approvers', group: group('GG-Approvers').sid },
          { trait: 'team', value: 'sales', group: group('GG-Sales').dn },
        ],
      });
      expect(saved.status).toBe(200);
      expect(saved.body.mappings.map((m: any) => m.group.dn)).toEqual([group('GG-Approvers').dn, group('GG-Sales').dn]);
      expect(saved.body.mappings[1].group.sid).toBe(group('GG-Sales').sid);
      expect((await auditSince(mark)).find((x) => x.event === 'settings.access_mappings')).toMatchObject({ outcome: 'success', actor: { name: 'op-super' } });

      // GG-Sales is protected now: bob (a member) reads as protected
      expect((await helpdesk.get(`/api/users/${bob.guid}`)).body.protected).toBe(true);
      // op-norole holds no role itself; the platform role hdc-approvers makes it a member of GG-Approvers
      const mapped = await accessSignIn(await mintConsoleToken('ap-mapped'));
      expect(mapped.status).toBe(200);
      expect((await mapped.client.get('/api/auth/me')).body.permissions).toContain('users.unlock');
      const view = await admin.get('/api/settings/access');
      expect(view.body).toMatchObject({ configured: true, accessOnly: false, stepUp: 'Session', adAccountClaims: 'username,trait:windows_logins' });

      // an unresolvable group refuses the whole set: 400, audited, nothing stored
      const before = (await readSettings(store))!.settings.accessMappings;
      const m2 = await auditMark();
      const bad = await admin.put('/api/settings/access/mappings', { mappings: [{ role: 'x', group: group('GG-Sales').dn }, { role: 'y', group: 'CN=No-Such-Group,DC=corp,DC=example,DC=test' }] });
      expect([bad.status, bad.body.code, bad.body.index]).toEqual([400, 'group_not_found', 1]);
      expect((await readSettings(store))!.settings.accessMappings).toEqual(before);
      expect((await auditSince(m2)).find((x) => x.event === 'settings.access_mappings')).toMatchObject({ outcome: 'denied', reason: 'group_not_found' });
      // without settings.manage: 403, nothing stored
      const noPerm = await helpdesk.put('/api/settings/access/mappings', { mappings: [] });
      expect(noPerm.status).toBe(403);
      expect((await readSettings(store))!.settings.accessMappings).toEqual(before);
    } finally {
      expect((await admin.put('/api/settings/access/mappings', { mappings: [] })).status).toBe(200);
    }
    expect((await helpdesk.get(`/api/users/${bob.guid}`)).body.protected).toBe(false);
    expect((await accessSignIn(await mintConsoleToken('ap-mapped'))).status).toBe(403);
  });
});

describe('a Super administrator through a platform claim (issue 25 #8)', () => {
  it('by default: windows_logins=[op-super] or the user name CORP\\op-super, no platform role, signs in as that Super administrator and is the step-up', async () => {
    for (const token of [await mintConsoleToken('ap-nobody', { roles: [], traits: { windows_logins: ['op-super'] } }), await mintConsoleToken('CORP\\op-super', { roles: [], traits: {} })]) {
      const { client, status, body } = await accessSignIn(token);
      expect([status, body.operator?.username]).toEqual([200, 'op-super']);
      const reauth = await client.post('/api/auth/reauth', { code: '123456' });
      expect([reauth.status, reauth.body.proof]).toEqual([200, 'access']);
    }
  });

  it('Authentication:Access:SuperAdministratorsRequireRoleMapping=true: refused without a mapped platform role (403, audited, no session); with one it signs in', async () => {
    // the stack's access-platform settings (issuer, JWKS, audience) with the key turned on
    const rt = createRuntime({ env: { ...process.env, ...consoleEnvironment(stack), ...consoleAccessConfig('test'), HDC_Authentication__Access__SuperAdministratorsRequireRoleMapping: 'true', NODE_EXTRA_CA_CERTS: stack.directory.caFile }, store });
    const signInWith = async (token: string) => {
      const pre = newClient();
      await pre.antiforgery();
      const res = await createHttpHandler(authRoutes, () => rt)({
        rawPath: '/api/auth/access',
        headers: { cookie: `__Host-hdc=${pre.cookie('__Host-hdc')}`, 'x-csrf-token': pre.csrf!, 'content-type': 'application/json', [HEADER]: token },
        body: '{}',
        requestContext: { http: { method: 'POST', sourceIp: '127.0.0.1' } },
      } as unknown as APIGatewayProxyEventV2);
      return { status: res.statusCode, body: JSON.parse(res.body!), cookies: ((res as { cookies?: string[] }).cookies ?? []).join(';') };
    };
    const mark = await auditMark();
    const refused = await signInWith(await mintConsoleToken('ap-nobody', { roles: [], traits: { windows_logins: ['op-super'] } }));
    expect([refused.status, refused.body]).toEqual([403, { code: 'super_administrator_role_mapping_required' }]);
    expect(refused.cookies).not.toContain('__Host-hdc=');
    const rows = (await auditSince(mark)).filter((x) => x.event === 'auth.login');
    expect(rows.map((x) => [x.outcome, x.reason, x.actor?.name])).toEqual([['denied', 'super_administrator_role_mapping_required', 'op-super']]);
    // an unmapped platform role is not enough either; other operators are not concerned
    expect((await signInWith(await mintConsoleToken('ap-nobody', { roles: ['hdc-super'], traits: { windows_logins: ['op-super'] } }))).status).toBe(403);
    expect((await signInWith(await mintConsoleToken('ap-oscar'))).status).toBe(200);
    const admin = await steppedUp('op-super');
    try {
      expect((await admin.put('/api/settings/access/mappings', { mappings: [{ role: 'hdc-super', group: group('GG-Approvers').sid }] })).status).toBe(200);
      const ok = await signInWith(await mintConsoleToken('ap-nobody', { roles: ['hdc-super'], traits: { windows_logins: ['op-super'] } }));
      expect([ok.status, ok.body.operator.username]).toEqual([200, 'op-super']);
      expect((await admin.get('/api/settings/access')).body.superAdministratorsRequireRoleMapping).toBe(false); // the stack's own setting
    } finally {
      expect((await admin.put('/api/settings/access/mappings', { mappings: [] })).status).toBe(200);
    }
  });
});

describe('the access-platform only mode', () => {
  const env = { ...process.env, ...consoleEnvironment(stack) };
  afterAll(async () => {
    await runAdminCommand(['allow-password-login', '--confirm'], env);
  });

  it('is switched on by an administrator (step-up, audited settings.teleport_only on): password sign-in refused, access sign-in works; the recovery command switches it off', async () => {
    const admin = await steppedUp('op-super');
    const mark = await auditMark();
    const on = await admin.put('/api/settings/access-only', { enabled: true });
    expect([on.status, on.body.accessOnly]).toEqual([200, true]);
    expect((await auditSince(mark)).find((x) => x.event === 'settings.teleport_only')).toMatchObject({ outcome: 'success', reason: 'on', actor: { name: 'op-super' } });

    const pw = await newClient().login('op-helpdesk', account('op-helpdesk').password);
    expect([pw.status, pw.body.code]).toEqual([403, 'access_platform_only']);
    expect((await accessSignIn(await mintConsoleToken('ap-oscar'))).status).toBe(200);

    const off = await runAdminCommand(['allow-password-login', '--confirm'], env);
    expect(off.code).toBe(0);
    expect((await readSignInPolicy(store)).accessOnly).toBe(false);
    expect((await newClient().login('op-helpdesk', account('op-helpdesk').password)).body.code).toBe('totp_required');
  });

  it('refuses to switch on where access-platform sign-in is not configured (409, audited, nothing changed)', async () => {
    const admin = await steppedUp('op-super');
    const rt = createRuntime({ env: { ...env, Authentication__Access__JwksUrl: '' }, store });
    expect(rt.config.Authentication.Access.JwksUrl).toBeUndefined();
    const handler = createHttpHandler((await import('../../functions/console/access-settings')).routes, () => rt);
    const mark = await auditMark();
    const r = await handler({
      rawPath: '/api/settings/access-only',
      headers: { cookie: `__Host-hdc=${admin.cookie('__Host-hdc')}`, 'x-csrf-token': admin.csrf!, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
      requestContext: { http: { method: 'PUT', sourceIp: '127.0.0.1' } },
    } as unknown as APIGatewayProxyEventV2);
    expect([r.statusCode, JSON.parse(r.body!).code]).toEqual([409, 'access_signin_not_configured']);
    expect((await readSignInPolicy(store)).accessOnly).toBe(false);
    expect((await auditSince(mark)).find((x) => x.event === 'settings.teleport_only')).toMatchObject({ outcome: 'denied', reason: 'access_signin_not_configured' });
  });
});
