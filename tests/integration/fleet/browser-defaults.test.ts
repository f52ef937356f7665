import { adminAuth, call, stack } from './support';

// The fleet plane's browser-facing defaults through the real gateway (serverless-offline): no
// CORS for any origin, the security headers on every answer (the gateway's own included), a
// state-changing request from another site refused 403 cross_site_request before the
// credentials are looked at, and a path that does not decode answered `{ code }`.
const EVIL = 'https://evil.example';
const CORS = /^access-control-/;
const FROM = '127.0.0.11';

function expectSecurityHeaders(h: Record<string, unknown>, what: string) {
  expect([what, h['content-security-policy']]).toEqual([what, expect.stringMatching(/default-src 'self'.*frame-ancestors 'none'/)]);
  expect([what, h['referrer-policy'], h['x-content-type-options'], h['x-frame-options']]).toEqual([what, 'no-referrer', 'nosniff', 'DENY']);
  expect([what, h['strict-transport-security']]).toEqual([what, undefined]); // http on loopback
}

describe('fleet plane: browser-facing defaults', () => {
  it('sends no Access-Control-* header to another origin (serverless-offline reflected it with credentials)', async () => {
    for (const [method, p] of [['GET', '/health/live'], ['GET', '/api/nodes'], ['OPTIONS', '/api/auth/login']]) {
      const r = await call(method, p, { headers: { origin: EVIL, 'access-control-request-method': 'POST' }, from: FROM });
      expect([method, p, Object.keys(r.headers).filter((h) => CORS.test(h))]).toEqual([method, p, []]);
    }
  });

  it('puts the security headers on 200, 401, 404 and 403 answers', async () => {
    const answers = [
      ['live', await call('GET', '/health/live', { from: FROM }), 200],
      ['anonymous', await call('GET', '/api/nodes', { from: FROM }), 401],
      ['unknown route', await call('GET', '/api/nope', { from: FROM }), 404],
      ['admin list', await call('GET', '/api/clients', { ...(await adminAuth()), from: FROM }), 200],
      ['cross-site', await call('POST', '/api/auth/login', { body: stack.fleetAdmin, headers: { origin: EVIL }, from: FROM }), 403],
    ] as const;
    for (const [what, r, status] of answers) {
      expect([what, r.status]).toEqual([what, status]);
      expectSecurityHeaders(r.headers, what);
    }
  });

  it.each([
    ['another site', { origin: EVIL }],
    ['an opaque null origin', { origin: 'null' }],
    ['localhost for 127.0.0.1', { origin: stack.fleetWebUrl.replace('127.0.0.1', 'localhost') }],
    ["the API's own port (the public origin is the dashboard's)", { origin: stack.fleetUrl }],
    ['no Origin, Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
  ])('refuses a sign-in with the right password from %s: 403 cross_site_request, no token', async (_n, headers) => {
    const r = await call('POST', '/api/auth/login', { body: stack.fleetAdmin, headers, from: FROM });
    expect([r.status, r.body]).toEqual([403, { code: 'cross_site_request' }]);
  });

  it('lets its own origin (the dashboard, FLEET_PUBLIC_ORIGIN) and command-line clients sign in', async () => {
    const cases: Array<Record<string, string>> = [{ origin: stack.fleetWebUrl }, { 'sec-fetch-site': 'same-origin' }, {}];
    for (const headers of cases) {
      const r = await call('POST', '/api/auth/login', { body: stack.fleetAdmin, headers, from: FROM });
      expect([headers, r.status, typeof r.body.token]).toEqual([headers, 200, 'string']);
    }
  });

  it.each(['/api/nodes/%zz', '/api/clients/%E0%A4%A', '/api/consoles/%'])('answers GET %s 404 { code: not_found } with the headers', async (p) => {
    const r = await call('GET', p, { ...(await adminAuth()), from: FROM });
    expect([r.status, r.body]).toEqual([404, { code: 'not_found' }]);
    expectSecurityHeaders(r.headers, p);
  });
});
