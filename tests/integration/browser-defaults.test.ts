import { ConsoleClient } from '../../local/console-client';
import { auditMark, auditSince, signedIn, stack } from '../support/stack';

// The console's browser-facing defaults through the real gateway (serverless-offline): no CORS
// for any origin, the security headers on every answer (errors, 404s and the gateway's own
// answers included), state-changing requests from another site refused 403 cross_site_request
// (audited when an operator's session came along), a path that does not decode answered
// `{ code }`, and a session cookie that ends with the browser.
// Deliberate refusals come from their own loopback address (sign-in limits of other files).
const client = () => new ConsoleClient(stack.consoleUrl, '127.0.0.9');
// the public origin is the web app's (it passes /api/* to the API: one origin, as CloudFront in AWS)
const OWN = stack.consoleWebUrl;
const EVIL = 'https://evil.example';
const CORS = /^access-control-/;

function expectSecurityHeaders(h: Record<string, unknown>, what: string) {
  expect([what, h['content-security-policy']]).toEqual([what, expect.stringMatching(/default-src 'self'.*frame-ancestors 'none'/)]);
  expect([what, h['referrer-policy'], h['x-content-type-options'], h['x-frame-options']]).toEqual([what, 'no-referrer', 'nosniff', 'DENY']);
  // the local stack is plain http on loopback: no HSTS (Hosting:PublicOrigin is http)
  expect([what, h['strict-transport-security']]).toEqual([what, undefined]);
}

describe('CORS: no origin may read an answer', () => {
  it.each([
    ['GET /health/live', 'GET', '/health/live'],
    ['GET /api/auth/me', 'GET', '/api/auth/me'],
    ['GET /api/nope (404)', 'GET', '/api/nope'],
  ])('%s from another origin carries no Access-Control-* header (serverless-offline reflected it with credentials)', async (_n, method, path) => {
    const r = await client().request(method, path, undefined, { origin: EVIL });
    expect(Object.keys(r.headers).filter((h) => CORS.test(h))).toEqual([]);
  });

  it('answers a preflight from another origin without allowing anything', async () => {
    const r = await client().request('OPTIONS', '/api/auth/login', undefined, { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token,content-type' });
    expect(Object.keys(r.headers).filter((h) => CORS.test(h))).toEqual([]);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.body).toEqual({ code: 'not_found' });
    expectSecurityHeaders(r.headers, 'preflight');
  });

  it('needs none for its own origin either (same-origin)', async () => {
    const r = await client().request('GET', '/health/live', undefined, { origin: OWN });
    expect(r.status).toBe(200);
    expect(Object.keys(r.headers).filter((h) => CORS.test(h))).toEqual([]);
  });
});

describe('security headers on every answer', () => {
  it('200, 401, 404, 400 invalid JSON, 400 CSRF, 403 cross-site, the API description', async () => {
    const c = client();
    const answers: Array<[string, Awaited<ReturnType<ConsoleClient['get']>>, number]> = [
      ['live', await c.get('/health/live'), 200],
      ['ready', await c.get('/health/ready'), 200],
      ['me anonymous', await c.get('/api/auth/me'), 401],
      ['unknown route', await c.get('/api/nope'), 404],
      ['openapi', await c.get('/openapi/v1.json'), 200],
    ];
    await c.antiforgery();
    answers.push(['invalid json', await c.request('POST', '/api/auth/login', '{"username": ', {}), 400]);
    answers.push(['csrf missing', await c.post('/api/auth/login', {}, { 'x-csrf-token': '' }), 400]);
    answers.push(['cross-site', await c.post('/api/auth/login', {}, { origin: EVIL }), 403]);
    for (const [what, r, status] of answers) {
      expect([what, r.status]).toEqual([what, status]);
      expectSecurityHeaders(r.headers, what);
    }
  });
});

describe('state-changing requests from another site', () => {
  // a pre-session's login with an empty body: past the origin check it is a 400 validation_failed
  async function loginWith(headers: Record<string, string>) {
    const c = client();
    await c.antiforgery();
    return c.post('/api/auth/login', {}, headers);
  }

  it.each([
    ['another site', { origin: EVIL }],
    ['an opaque null origin', { origin: 'null' }],
    ['the own host as a suffix', { origin: `${OWN}.evil.example` }],
    ['localhost for 127.0.0.1', { origin: OWN.replace('127.0.0.1', 'localhost') }],
    ['another port', { origin: OWN.replace(/:(\d+)$/, (_m, p) => `:${Number(p) + 1}`) }],
    ['https for http', { origin: OWN.replace('http:', 'https:') }],
    ['no Origin, Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['no Origin, Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
  ])('refuses %s: 403 cross_site_request, nothing audited for an anonymous pre-session', async (_n, headers) => {
    const mark = await auditMark();
    const r = await loginWith(headers);
    expect([r.status, r.body]).toEqual([403, { code: 'cross_site_request' }]);
    expect(await auditSince(mark)).toEqual([]);
  });

  it('refuses before the CSRF token is looked at (a forged POST without one is still 403)', async () => {
    const r = await client().post('/api/auth/login', {}, { origin: EVIL, 'x-csrf-token': '' });
    expect([r.status, r.body]).toEqual([403, { code: 'cross_site_request' }]);
  });

  it.each([
    ['its own origin', { origin: OWN }],
    ['its own origin respelt (scheme case, trailing slash)', { origin: `${OWN.replace('http://', 'HTTP://')}/` }],
    ['Sec-Fetch-Site same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['Sec-Fetch-Site none', { 'sec-fetch-site': 'none' }],
    ['a command-line client (neither header)', {}],
  ])('lets %s through to the next check', async (_n, headers) => {
    const r = await loginWith(headers);
    expect([r.status, r.body.code]).toEqual([400, 'validation_failed']);
  });

  it('refuses a same-site POST carrying an operator session, audits it, and leaves the session alive', async () => {
    const op = await signedIn('op-helpdesk');
    const mark = await auditMark();
    const r = await op.post('/api/auth/logout', {}, { origin: OWN.replace('127.0.0.1', 'localhost') });
    expect([r.status, r.body]).toEqual([403, { code: 'cross_site_request' }]);
    const rows = await auditSince(mark);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      event: 'authz.decision',
      outcome: 'denied',
      reason: 'cross_site_request',
      actor: { name: 'op-helpdesk', provider: 'ad' },
      details: { route: 'POST /api/auth/logout', origin: OWN.replace('127.0.0.1', 'localhost') },
    });
    expect((await op.get('/api/auth/me')).status).toBe(200);
  });
});

describe('a path that does not decode', () => {
  it.each(['/api/computers/%zz', '/api/users/%E0%A4%A', '/api/groups/%', '/api/computers/%C3/laps'])('GET %s answers 404 { code: not_found } with the headers, anonymous or signed in', async (p) => {
    const anon = await client().get(p);
    expect([anon.status, anon.body]).toEqual([404, { code: 'not_found' }]);
    expectSecurityHeaders(anon.headers, p);
    const op = await signedIn('op-helpdesk');
    const signed = await op.get(p);
    expect([signed.status, signed.body]).toEqual([404, { code: 'not_found' }]);
  });

  it('POST /api/computers/%zz/laps answers 404 { code: not_found } too', async () => {
    const op = await signedIn('op-helpdesk');
    const r = await op.post('/api/computers/%zz/laps', { ticket: 'T-1', confirm: true });
    expect([r.status, r.body]).toEqual([404, { code: 'not_found' }]);
  });
});

describe('the session cookie', () => {
  it('is a browser session cookie (no Max-Age, no Expires; sign-in sets it with the same function)', async () => {
    const c = client();
    const pre = await c.get('/api/auth/antiforgery');
    const cookie = pre.setCookies.find((x) => x.startsWith('__Host-hdc='))!;
    expect(cookie).toBeDefined();
    expect(cookie).not.toMatch(/max-age|expires/i);
    for (const attr of ['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']) expect(cookie).toContain(attr);
  });
});
