import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { sessionCookie } from '../../lib/auth/sessions';
import { loadConfig } from '../../lib/config';
import { loadFleetConfig } from '../../lib/fleet/config';
import { createFleetHttpHandler, fleetBrowserPolicy } from '../../lib/fleet/http';
import { defineFleetRoute } from '../../lib/fleet/route';
import type { FleetRuntime } from '../../lib/fleet/runtime';
import { crossSiteRequest, securityHeaders } from '../../lib/http/browser';
import { browserDefaults } from '../../lib/http/middlewares/browser-defaults';
import { consoleBrowserPolicy, createHttpHandler } from '../../lib/http/console';
import { defineRoute } from '../../lib/http/route';
import { file } from '../../lib/http/answers';
import { z } from 'zod';
import type { ConsoleRuntime } from '../../lib/runtime';

// The browser-facing defaults of both applications, in-process: security headers on every answer
// (errors and 404s included, HSTS only behind https), and state-changing requests from another
// site refused 403 cross_site_request before anything else looks at them.

const OWN = 'https://console.corp.example.test';
const event = (method: string, path: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 =>
  ({ rawPath: path, headers, requestContext: { http: { method, sourceIp: '127.0.0.1' } } }) as unknown as APIGatewayProxyEventV2;

describe('cross-site requests', () => {
  const policy = { publicOrigin: OWN, hstsMaxAge: 0 };
  const verdict = (headers: Record<string, string>) => crossSiteRequest(event('POST', '/api/x', headers), policy);
  it.each([
    ['another site', { origin: 'https://evil.example' }],
    ['an opaque null origin', { origin: 'null' }],
    ['a suffix of the own host', { origin: 'https://console.corp.example.test.evil.example' }],
    ['the own host over http', { origin: 'http://console.corp.example.test' }],
    ['the own host on another port', { origin: 'https://console.corp.example.test:8443' }],
    ['a sibling subdomain (same site)', { origin: 'https://other.corp.example.test' }],
    ['garbage', { origin: 'not a url' }],
    ['no Origin, Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['no Origin, Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
    ['no Origin, Sec-Fetch-Site CROSS-SITE', { 'sec-fetch-site': 'CROSS-SITE' }],
  ])('refuses %s', (_name, headers) => {
    expect(verdict(headers)).toBeDefined();
  });
  it.each([
    ['the own origin', { origin: OWN }],
    ['the own origin respelt (case, default port, trailing slash)', { Origin: 'HTTPS://Console.Corp.Example.Test:443/' }],
    ['the own origin with Sec-Fetch-Site same-site (SPA on a sibling host is the configured origin)', { origin: OWN, 'sec-fetch-site': 'same-site' }],
    ['no Origin, Sec-Fetch-Site same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['no Origin, Sec-Fetch-Site none', { 'sec-fetch-site': 'none' }],
    ['a command-line client (neither header)', {}],
  ])('lets %s through', (_name, headers) => {
    expect(verdict(headers)).toBeUndefined();
  });
  it('without a configured origin compares the Origin host with the request Host', () => {
    const p = { hstsMaxAge: 0 };
    expect(crossSiteRequest(event('POST', '/x', { origin: 'http://127.0.0.1:3000', host: '127.0.0.1:3000' }), p)).toBeUndefined();
    expect(crossSiteRequest(event('POST', '/x', { origin: 'http://127.0.0.1:3001', host: '127.0.0.1:3000' }), p)).toBeDefined();
    expect(crossSiteRequest(event('POST', '/x', { origin: 'http://127.0.0.1:3000' }), p)).toBeDefined();
  });
  it('keeps what it saw short (it is logged and audited)', () => {
    expect(verdict({ origin: `https://${'a'.repeat(5000)}.example` })!.origin!.length).toBeLessThanOrEqual(200);
  });
});

describe('security headers', () => {
  it('sends CSP with frame-ancestors none, no-referrer, nosniff, DENY framing; HSTS only for an https origin', () => {
    const h = securityHeaders({ publicOrigin: OWN, hstsMaxAge: 31536000 });
    expect(h['content-security-policy']).toMatch(/default-src 'self'/);
    expect(h['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(h['referrer-policy']).toBe('no-referrer');
    expect(h['x-content-type-options']).toBe('nosniff');
    expect(h['x-frame-options']).toBe('DENY');
    expect(h['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(securityHeaders({ publicOrigin: 'http://127.0.0.1:3000', hstsMaxAge: 31536000 })['strict-transport-security']).toBeUndefined();
    expect(securityHeaders({ publicOrigin: OWN, hstsMaxAge: 0 })['strict-transport-security']).toBeUndefined();
    expect(securityHeaders({ hstsMaxAge: 31536000 })['strict-transport-security']).toBeUndefined();
  });
});

describe('the console pipeline', () => {
  const hit = jest.fn();
  const routes = [
    defineRoute({ method: 'POST', path: '/api/x', summary: 't', access: 'anonymous', responses: { 200: z.unknown() }, async handle() { hit(); return { body: { ok: true } }; } }),
    defineRoute({ method: 'GET', path: '/api/x', summary: 't', access: 'anonymous', responses: { 200: z.unknown() }, async handle() { return { body: { ok: true } }; } }),
    defineRoute({ method: 'GET', path: '/api/boom', summary: 't', access: 'anonymous', responses: {}, async handle(): Promise<never> { throw new Error('boom'); } }),
    defineRoute({ method: 'GET', path: '/api/csv', summary: 't', access: 'anonymous', responses: { 200: file('text/csv', 'csv') }, async handle() { return { text: 'a,b\r\n', contentType: 'text/csv' }; } }),
  ];
  const handlerFor = (env: Record<string, string>) => {
    const rt = { config: loadConfig(env).config } as unknown as ConsoleRuntime;
    return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
      .use(browserDefaults(() => consoleBrowserPolicy(rt.config)))
      .handler(createHttpHandler(routes, () => rt));
  };
  const handler = handlerFor({ Hosting__PublicOrigin: OWN });
  const call = (e: APIGatewayProxyEventV2) => handler(e, {} as any) as Promise<APIGatewayProxyStructuredResultV2>;

  it('refuses a cross-site POST 403 cross_site_request before the CSRF check and the route run', async () => {
    hit.mockClear();
    const warn = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const cases: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null', 'x-csrf-token': 'x' }];
      for (const headers of cases) {
        const r = await call(event('POST', '/api/x', headers));
        expect([r.statusCode, JSON.parse(r.body!)]).toEqual([403, { code: 'cross_site_request' }]);
        expect(r.headers!['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      }
    } finally {
      warn.mockRestore();
    }
    expect(hit).not.toHaveBeenCalled();
    // the own origin goes on to the CSRF check (no session here: 400 csrf_token_missing)
    const own = await call(event('POST', '/api/x', { origin: OWN }));
    expect([own.statusCode, JSON.parse(own.body!).code]).toEqual([400, 'csrf_token_missing']);
    // reads are not refused (a cross-site read of a same-origin answer is the browser's to block)
    expect((await call(event('GET', '/api/x', { origin: 'https://evil.example' }))).statusCode).toBe(200);
  });

  it('puts the security headers and HSTS on 200, 404, 500 and text answers', async () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      for (const [path, status] of [['/api/x', 200], ['/api/nothing', 404], ['/api/boom', 500], ['/api/csv', 200]] as const) {
        const r = await call(event('GET', path));
        expect([path, r.statusCode]).toEqual([path, status]);
        for (const h of ['content-security-policy', 'referrer-policy', 'x-content-type-options', 'x-frame-options', 'strict-transport-security']) expect([path, h, !!r.headers![h]]).toEqual([path, h, true]);
      }
    } finally {
      write.mockRestore();
    }
    const plain = handlerFor({ Hosting__PublicOrigin: 'http://127.0.0.1:3000' });
    const r = (await plain(event('GET', '/api/nothing'), {} as any)) as APIGatewayProxyStructuredResultV2;
    expect(r.headers!['strict-transport-security']).toBeUndefined();
    expect(r.headers!['referrer-policy']).toBe('no-referrer');
  });

  it('refuses a public origin that is not an origin, naming the key', () => {
    expect(() => loadConfig({ Hosting__PublicOrigin: 'https://console.example.test/app' })).toThrow(/Hosting:PublicOrigin/);
    expect(() => loadConfig({ Hosting__PublicOrigin: 'console.example.test' })).toThrow(/Hosting:PublicOrigin/);
    expect(loadConfig({ Hosting__PublicOrigin: 'https://Console.Example.Test/' }).config.Hosting.PublicOrigin).toBe('https://console.example.test');
    expect(loadConfig({}).config.Hosting).toMatchObject({ PublicOrigin: undefined, HstsMaxAge: 31536000 });
  });
});

describe('the fleet pipeline', () => {
  const hit = jest.fn();
  const routes = [defineFleetRoute({ method: 'POST', path: '/api/auth/login', summary: 't', access: 'anonymous', responses: { 200: z.unknown() }, async handle() { hit(); return { body: { ok: true } }; } })];
  const config = loadFleetConfig({ FLEET_PUBLIC_ORIGIN: 'https://fleet.msp.example.test' });
  const rt = { config } as unknown as FleetRuntime;
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(browserDefaults(() => fleetBrowserPolicy(config)))
    .handler(createFleetHttpHandler(routes, () => rt));
  const call = (e: APIGatewayProxyEventV2) => handler(e, {} as any) as Promise<APIGatewayProxyStructuredResultV2>;

  it('refuses a cross-site POST 403 cross_site_request before authentication and the route, with the headers', async () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const r = await call({ ...event('POST', '/api/auth/login', { origin: 'https://evil.example', 'content-type': 'application/json' }), body: '{}' });
      expect([r.statusCode, JSON.parse(r.body!)]).toEqual([403, { code: 'cross_site_request' }]);
      expect(r.headers!['strict-transport-security']).toMatch(/max-age=31536000/);
    } finally {
      write.mockRestore();
    }
    expect(hit).not.toHaveBeenCalled();
    const ok = await call({ ...event('POST', '/api/auth/login', { origin: 'https://fleet.msp.example.test', 'content-type': 'application/json' }), body: '{}' });
    expect(ok.statusCode).toBe(200);
    const notFound = await call(event('GET', '/api/nope'));
    expect([notFound.statusCode, notFound.headers!['content-security-policy']]).toEqual([404, expect.stringMatching(/frame-ancestors 'none'/)]);
  });

  it('refuses a fleet public origin that is not an origin', () => {
    expect(() => loadFleetConfig({ FLEET_PUBLIC_ORIGIN: 'https://fleet.example.test/x' })).toThrow(/FLEET_PUBLIC_ORIGIN/);
  });
});

describe('the session cookie', () => {
  it('is a browser session cookie: no Max-Age, no Expires; __Host-, Secure, HttpOnly, SameSite=Strict, Path=/', () => {
    const c = sessionCookie('abc');
    expect(c).not.toMatch(/max-age|expires/i);
    for (const attr of ['__Host-hdc=abc', 'Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']) expect(c).toContain(attr);
  });
});
