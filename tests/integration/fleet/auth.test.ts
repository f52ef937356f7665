import { mintToken, strangerKey } from '../../../local/fleet/issuer';
import { auditRowOf, call, localAdmin, stack } from './support';

// a fresh loopback source address per run: failure windows of earlier runs do not leak in
const addr = (() => {
  const base = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
  return (n: number) => `${base}.${n}`;
})();

describe('local administrator login', () => {
  it('signs in as an unscoped administrator and answers a bearer token', async () => {
    const r = await call('POST', '/api/auth/login', { body: stack.fleetAdmin, from: addr(21) });
    expect(r.status).toBe(200);
    const me = await call('GET', '/api/auth/me', { token: r.body.token });
    expect(me.body).toEqual({ username: 'admin', method: 'local', admin: true, scope: { all: true } });
    expect((await auditRowOf(r.correlationId))).toMatchObject({ event: 'auth.login', outcome: 'success' });
    expect(JSON.stringify(await auditRowOf(r.correlationId))).not.toContain(stack.fleetAdmin.password);
  });
  it('refuses a wrong password without saying which part was wrong, audited, password never echoed', async () => {
    const wrong = { username: 'admin', password: 'Wrong-Password-123' };
    const r = await call('POST', '/api/auth/login', { body: wrong, from: addr(22) });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ code: 'invalid_credentials' });
    const u = await call('POST', '/api/auth/login', { body: { username: 'root', password: stack.fleetAdmin.password }, from: addr(22) });
    expect(u.body).toEqual({ code: 'invalid_credentials' });
    const row = await auditRowOf(r.correlationId);
    expect(row).toMatchObject({ event: 'auth.login', outcome: 'failure', reason: 'invalid_credentials' });
    expect(JSON.stringify(row)).not.toContain('Wrong-Password-123');
  });
  it('slows brute force: the 6th try from one address in the window is refused even with the right password', async () => {
    for (let i = 0; i < 5; i++) expect((await call('POST', '/api/auth/login', { body: { username: 'admin', password: `guess-${i}-xxxxxxxx` }, from: addr(23) })).status).toBe(401);
    const r = await call('POST', '/api/auth/login', { body: stack.fleetAdmin, from: addr(23) });
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('too_many_attempts');
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.login', outcome: 'denied', reason: 'too_many_attempts' });
    // another address is not affected
    expect((await call('POST', '/api/auth/login', { body: stack.fleetAdmin, from: addr(24) })).status).toBe(200);
  });
  it('10 parallel wrong passwords from one address: 5 answered 401, 5 answered 429 too_many_attempts (counted atomically)', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call('POST', '/api/auth/login', { body: { username: 'admin', password: `parallel-guess-${i}-xxxx` }, from: addr(25) })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.code === 'too_many_attempts')).toBe(true);
  });
  it('refuses a forged or tampered local token', async () => {
    const token = await localAdmin();
    const [h, p, s] = token.split('.');
    const forged = [h, Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'mallory' })).toString('base64url'), s].join('.');
    expect((await call('GET', '/api/auth/me', { token: forged })).status).toBe(401);
  });
});

describe('access-platform sign-in (JWT verified against the JWKS on every request)', () => {
  const me = async (assertion: string) => call('GET', '/api/auth/me', { assertion });
  it('admin role → administrator, scope all', async () => {
    expect((await me(await mintToken('msp-admin', ['fleet-admin']))).body).toEqual({ username: 'msp-admin', method: 'access', admin: true, scope: { all: true } });
  });
  it('break-glass user list → administrator', async () => {
    expect((await me(await mintToken('breakglass-ops', []))).body.admin).toBe(true);
  });
  it('accepts the token as Authorization: Bearer too', async () => {
    expect((await call('GET', '/api/auth/me', { token: await mintToken('msp-admin', ['fleet-admin']) })).status).toBe(200);
  });
  it('scope = assignments ∪ fleet-client roles, ∩ register, stronger level wins, with sources', async () => {
    const r = await me(await mintToken('tech-bob', ['fleet-technician', 'fleet-client-acme', 'fleet-client-ghost']));
    expect(r.body.scope).toEqual({
      all: false,
      clients: [
        { code: 'acme', level: 'viewer', sources: ['assignment', 'role'] },
        { code: 'globex', level: 'viewer', sources: ['assignment'] },
      ],
    });
    const alice = await me(await mintToken('tech-alice', ['fleet-client-acme']));
    expect(alice.body.scope.clients).toEqual([{ code: 'acme', level: 'operator', sources: ['assignment', 'role'] }]);
  });
  it('a convention role alone signs in as a viewer technician', async () => {
    const r = await me(await mintToken('someone', ['fleet-client-globex']));
    expect(r.body).toMatchObject({ admin: false, scope: { all: false, clients: [{ code: 'globex', level: 'viewer', sources: ['role'] }] } });
  });
  it('user names are case-sensitive: Tech-Alice is not tech-alice', async () => {
    expect((await me(await mintToken('Tech-Alice', ['fleet-technician']))).body.scope).toEqual({ all: false, clients: [] });
  });
  it.each([
    ['no allowed role', ['access']],
    ['an invalid convention code', ['fleet-client-Acme_1']],
  ])('refuses sign-in with %s: 403 signin_refused, audited', async (_n, roles) => {
    const r = await me(await mintToken('intruder', roles));
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('signin_refused');
    // the row names the user who tried (the signed token's), and his roles; never the token
    const row = await auditRowOf(r.correlationId);
    expect(row).toMatchObject({ event: 'auth.forbidden', reason: 'signin_refused', actor: { name: 'intruder', provider: 'access', ip: expect.any(String) }, details: { roles } });
    expect(row.client).toBeUndefined();
  });
  it.each([
    ['expired', () => mintToken('msp-admin', ['fleet-admin'], { expired: true })],
    ['signed by another key', async () => mintToken('msp-admin', ['fleet-admin'], { privateJwk: await strangerKey() })],
    ['from another issuer', () => mintToken('msp-admin', ['fleet-admin'], { issuer: 'other-cluster' })],
    ['for another audience', () => mintToken('msp-admin', ['fleet-admin'], { audience: 'https://console.example' })],
    ['without exp (valid forever once leaked)', () => mintToken('msp-admin', ['fleet-admin'], { noExpiry: true })],
    ['not valid before an hour from now (nbf)', () => mintToken('msp-admin', ['fleet-admin'], { notBeforeIn: 3600 })],
    ['garbage', async () => 'not.a.jwt'],
  ])('refuses a token %s with 401', async (_n, make) => {
    const r = await me(await make());
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('invalid_token');
  });
  it('needs a token', async () => {
    expect((await call('GET', '/api/auth/me')).body).toEqual({ code: 'unauthenticated' });
  });
});
