import { execFileSync } from 'node:child_process';
import { Client } from 'ldapts';
import fs from 'node:fs';
import { ConsoleClient } from '../../local/console-client';
import { account, auditMark, auditSince, nextCode, seedUser, signedIn, stack } from '../support/stack';

// This file's deliberate failures come from their own loopback address, so they never add up with
// other files' sign-ins against the per-address limit.
const newClient = () => new ConsoleClient(stack.consoleUrl, '127.0.0.8');

describe('sign-in, sessions and CSRF', () => {
  it('opens a pre-session whose cookie is __Host-, Secure, HttpOnly, SameSite=Strict, Path=/', async () => {
    const c = newClient();
    const r = await c.get('/api/auth/antiforgery');
    expect(r.status).toBe(200);
    expect(typeof r.body.token).toBe('string');
    const cookie = r.setCookies.find((x) => x.startsWith('__Host-hdc='))!;
    expect(cookie).toBeDefined();
    for (const attr of ['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']) expect(cookie).toContain(attr);
    // the same session answers the same token
    expect((await c.get('/api/auth/antiforgery')).body.token).toBe(r.body.token);
  });

  it('refuses sign-in without or with a wrong CSRF token, before looking at the credentials', async () => {
    const c = newClient();
    await c.antiforgery();
    const mark = await auditMark();
    const a = account('op-helpdesk');
    const missing = await c.post('/api/auth/login', { username: a.username, password: a.password }, { 'x-csrf-token': '' });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('csrf_token_missing');
    const wrong = await c.post('/api/auth/login', { username: a.username, password: a.password }, { 'x-csrf-token': 'not-the-token' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('csrf_token_invalid');
    expect((await auditSince(mark)).filter((r) => r.event === 'auth.login')).toEqual([]);
  });

  it('asks the enrolled operator for the authenticator code, then signs in with a new session id', async () => {
    const a = account('op-helpdesk');
    const c = newClient();
    await c.antiforgery();
    const preSession = c.cookie('__Host-hdc');
    const noCode = await c.post('/api/auth/login', { username: a.username, password: a.password });
    expect(noCode.status).toBe(401);
    expect(noCode.body.code).toBe('totp_required');
    expect((await c.get('/api/auth/me')).status).toBe(401);
    const mark = await auditMark();
    const ok = await c.post('/api/auth/login', { username: a.username, password: a.password, code: await nextCode(a.username) });
    expect(ok.status).toBe(200);
    c.csrf = ok.body.csrfToken;
    expect(c.cookie('__Host-hdc')).toBeDefined();
    expect(c.cookie('__Host-hdc')).not.toBe(preSession);
    const me = await c.get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: 'op-helpdesk', superAdministrator: false });
    expect(me.body.permissions).toContain('computers.read');
    const rows = await auditSince(mark);
    expect(rows.find((r) => r.event === 'auth.login' && r.outcome === 'success' && r.actor?.name === 'op-helpdesk')).toBeDefined();
    // the old pre-session id is gone
    const old = newClient();
    old.setCookie('__Host-hdc', preSession);
    expect((await old.get('/api/auth/me')).status).toBe(401);
  });

  it('refuses a wrong password (401 invalid_credentials) and audits the failure', async () => {
    const mark = await auditMark();
    const c = newClient();
    const r = await c.login('op-approver', 'wrong-password');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ code: 'invalid_credentials' });
    expect((await c.get('/api/auth/me')).status).toBe(401);
    const row = (await auditSince(mark)).find((x) => x.event === 'auth.login');
    expect(row).toMatchObject({ outcome: 'failure', reason: 'bad_password' });
    expect(JSON.stringify(row)).not.toContain('wrong-password');
  });

  it('answers an unknown account exactly like a wrong password', async () => {
    const r = await newClient().login('nobody-here', 'whatever');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ code: 'invalid_credentials' });
  });

  it('refuses an operator without a console role (403 no_console_role), audited', async () => {
    const mark = await auditMark();
    const a = account('op-norole');
    const r = await newClient().login(a.username, a.password);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('no_console_role');
    expect((await auditSince(mark)).find((x) => x.event === 'auth.login')).toMatchObject({ outcome: 'denied', reason: 'no_role' });
  });

  it('enrols an authenticator inside the sign-in: password, key, first code; no session before', async () => {
    const a = account('op-enrol');
    const c = newClient();
    const step1 = await c.login(a.username, a.password);
    expect(step1.status).toBe(401);
    expect(step1.body.code).toBe('totp_enrolment_required');
    expect(step1.body.otpauthUri).toMatch(/^otpauth:\/\/totp\//);
    const secret: string = step1.body.secret;
    expect((await c.get('/api/auth/me')).status).toBe(401);
    // the same pending key is offered until it is confirmed
    expect((await c.login(a.username, a.password)).body.secret).toBe(secret);
    // a wrong first code does not enrol
    const bad = await c.login(a.username, a.password, '000000');
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('totp_invalid');
    // the first code comes from an independent implementation (Debian's oathtool)
    const code = execFileSync('oathtool', ['--totp', '-b', secret]).toString().trim();
    const ok = await c.login(a.username, a.password, code);
    expect(ok.status).toBe(200);
    expect((await c.get('/api/auth/me')).status).toBe(200);
    // from now on the code is asked, not the enrolment
    const again = await newClient().login(a.username, a.password);
    expect(again.body.code).toBe('totp_required');
  });

  it('does not accept the same authenticator code twice', async () => {
    const a = account('op-approver2');
    const code = await nextCode(a.username);
    expect((await newClient().login(a.username, a.password, code)).status).toBe(200);
    const replay = await newClient().login(a.username, a.password, code);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('totp_invalid');
  });

  it('logs out: the session is gone', async () => {
    const c = await signedIn('op-auditor');
    expect((await c.get('/api/auth/me')).status).toBe(200);
    const out = await c.post('/api/auth/logout');
    expect(out.status).toBe(204);
    expect((await c.get('/api/auth/me')).status).toBe(401);
  });

  it('rate-limits sign-in per account without locking the directory account out', async () => {
    const target = seedUser('alice');
    const c = newClient();
    for (let i = 0; i < 5; i++) expect((await c.login('alice', `wrong-${i}`)).status).toBe(401);
    const mark = await auditMark();
    const limited = await c.login('alice', target.password);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('signin_rate_limited');
    expect((await auditSince(mark)).find((x) => x.event === 'auth.login')).toMatchObject({ outcome: 'denied', reason: 'rate_limited:account_address' });
    // the directory still accepts alice's password: the console stopped before any lockout
    const ldap = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
    await expect(ldap.bind(target.dn, target.password)).resolves.toBeUndefined();
    await ldap.unbind();
  });

  it('rate-limits sign-in per source address', async () => {
    const c = new ConsoleClient(stack.consoleUrl, '127.0.0.9');
    let last;
    for (let i = 0; i < 21; i++) last = await c.login(`no-such-user-${i}`, 'x');
    expect(last!.status).toBe(429);
    expect(last!.body.code).toBe('signin_rate_limited');
    // X-Forwarded-For is not trusted: the limited address cannot claim to be another
    await c.antiforgery();
    const spoofed = await c.post('/api/auth/login', { username: 'no-such-user-y', password: 'x' }, { 'x-forwarded-for': '203.0.113.77' });
    expect(spoofed.status).toBe(429);
    // another address is not affected
    const other = await newClient().login('no-such-user-x', 'x');
    expect(other.status).toBe(401);
  });
});

describe('sign-in limits (issue 8): keyed on the account, counted atomically, no lock-out by strangers', () => {
  const from = (n: number) => new ConsoleClient(stack.consoleUrl, `127.0.3.${n}`);
  const loginRaw = async (c: ConsoleClient, username: string, password: string, code?: string) => c.post('/api/auth/login', { username, password, ...(code ? { code } : {}) });

  it('respellings CORP\\bob, x\\bob, bob@corp.example.test, BOB and bob share one counter: the 6th attempt is refused, even with the right password', async () => {
    const bob = seedUser('bob');
    const c = from(1);
    await c.antiforgery();
    for (const spelling of ['CORP\\bob', 'x\\bob', 'bob@corp.example.test', 'BOB', 'bob']) {
      const r = await loginRaw(c, spelling, 'wrong-password');
      expect([spelling, r.status, r.body.code]).toEqual([spelling, 401, 'invalid_credentials']);
    }
    const mark = await auditMark();
    const sixth = await loginRaw(c, 'Bob@Corp.Example.Test', bob.password);
    expect([sixth.status, sixth.body.code]).toEqual([429, 'signin_rate_limited']);
    expect(sixth.body.retryAfterSeconds).toBeGreaterThan(0);
    const row = (await auditSince(mark)).find((x) => x.event === 'auth.login');
    expect(row).toMatchObject({ outcome: 'denied', reason: 'rate_limited:account_address', actor: { id: bob.guid } });
  });

  it('10 parallel wrong passwords for one account from one address: 5 answered 401, 5 answered 429', async () => {
    const clients = Array.from({ length: 10 }, () => from(2));
    await Promise.all(clients.map((c) => c.antiforgery()));
    const mark = await auditMark();
    const results = await Promise.all(clients.map((c, i) => loginRaw(c, 'branch-bea', `wrong-${i}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    const rows = (await auditSince(mark)).filter((x) => x.event === 'auth.login');
    expect(rows.filter((x) => x.outcome === 'failure')).toHaveLength(5);
    expect(rows.filter((x) => x.outcome === 'denied' && x.reason === 'rate_limited:account_address')).toHaveLength(5);
  });

  it('a stranger failing from 4 other addresses (24 wrong passwords) does not keep op-auditor out of his own sign-in: slowed, not refused', async () => {
    const a = account('op-auditor');
    for (let addr = 10; addr < 14; addr++) {
      const c = from(addr);
      await c.antiforgery();
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push((await loginRaw(c, i % 2 ? 'CORP\\op-auditor' : 'op-auditor', `guess-${i}`)).status);
      expect(answers).toEqual([401, 401, 401, 401, 401, 429]);
    }
    const mark = await auditMark();
    const owner = from(20);
    const t0 = Date.now();
    const r = await owner.login(a.username, a.password, await nextCode(a.username));
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900); // SignIn:AccountSlowdown (2 s)
    expect((await auditSince(mark)).find((x) => x.event === 'auth.login')).toMatchObject({ outcome: 'success', details: { slowed: true } });
  });
});
