import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RouteTable } from '../../lib/gateway/http-api';
import { createGateway, type Handler, type HandlerLoader } from '../../lib/gateway/server';
import { rateToMs, readServiceMap, type ServiceMap } from '../../lib/gateway/service-map';
import { slotOf } from '../../lib/gateway/scheduler';
import { staticApp } from '../../lib/gateway/static-files';

// The container gateway: API Gateway's route selection and payload 2.0 events, Lambda's invoke
// API, the static app, over real HTTP on loopback.

const ROOT = path.resolve(__dirname, '../..');

describe('the service files as a container reads them', () => {
  it('finds every console function, its routes and its resolved schedules', () => {
    const map = readServiceMap(path.join(ROOT, 'serverless.yml'), (ref) => (ref.includes('approvalsExpiry') ? 'rate(5 minutes)' : ref.includes('schedules.') ? 'rate(1 day)' : undefined));
    const auth = map.functions.find((f) => f.module === 'functions/console/auth')!;
    expect(auth.exportName).toBe('handler');
    expect(auth.routes).toContainEqual({ method: 'POST', path: '/api/auth/login' });
    expect(map.functions.find((f) => f.name === 'approvalsExpiry')!.schedule).toBe('rate(5 minutes)');
    expect(map.functions.some((f) => f.routes.some((r) => r.path === '*'))).toBe(true);
  });
  it('refuses a schedule it cannot resolve rather than never running it', () => {
    expect(() => readServiceMap(path.join(ROOT, 'serverless.yml'))).toThrow(/cannot be resolved/);
  });
  it('reads the fleet plane (its 1-minute poll) and the password service (no route)', () => {
    const fleet = readServiceMap(path.join(ROOT, 'serverless.fleet.yml'));
    expect(fleet.functions.find((f) => f.name === 'fleetPoll')).toMatchObject({ schedule: 'rate(1 minute)', timeout: 60 });
    const pwd = readServiceMap(path.join(ROOT, 'serverless.password-service.yml'));
    expect(pwd.functions.flatMap((f) => f.routes)).toEqual([]);
  });
  it.each([
    ['rate(1 minute)', 60_000],
    ['rate(5 minutes)', 300_000],
    ['rate(2 hours)', 7_200_000],
    ['rate(1 day)', 86_400_000],
  ])('%s', (rate, ms) => expect(rateToMs(rate)).toBe(ms));
  it.each(['rate(0 minutes)', 'cron(0 12 * * ? *)', 'rate(5 seconds)', ''])('refuses %j', (rate) => expect(() => rateToMs(rate)).toThrow());
  it('slots start on clock boundaries', () => {
    expect(slotOf(Date.parse('2026-11-25T10:07:59.999Z'), 300_000)).toBe(Date.parse('2026-11-25T10:05:00Z'));
    expect(slotOf(Date.parse('2026-11-25T10:10:00.000Z'), 300_000)).toBe(Date.parse('2026-11-25T10:10:00Z'));
  });
});

describe('route selection as API Gateway', () => {
  const t = new RouteTable<string>();
  t.add({ method: 'GET', path: '/api/computers/{id}' }, 'computer');
  t.add({ method: 'GET', path: '/api/computers/search' }, 'search');
  t.add({ method: 'POST', path: '/api/computers/{id}/laps/reveal' }, 'reveal');
  t.add({ method: 'ANY', path: '/api/files/{proxy+}' }, 'files');
  t.add({ method: 'GET', path: '/api/files/{proxy+}' }, 'files-get');
  t.add({ method: '*', path: '*' }, 'fallback');
  it.each([
    ['GET', '/api/computers/search', 'search', undefined],
    ['GET', '/api/computers/abc', 'computer', { id: 'abc' }],
    ['GET', '/api/computers/a%2Fb', 'computer', { id: 'a/b' }],
    ['POST', '/api/computers/x/laps/reveal', 'reveal', { id: 'x' }],
    ['GET', '/api/files/a/b/c', 'files-get', { proxy: 'a/b/c' }],
    ['DELETE', '/api/files/a', 'files', { proxy: 'a' }],
    ['GET', '/api/computers/x/laps/reveal', 'fallback', undefined],
    ['GET', '/api/computers', 'fallback', undefined],
    ['GET', '/api/files', 'fallback', undefined],
  ])('%s %s → %s', (method, p, target, params) => {
    const m = t.match(method, p)!;
    expect(m.target).toBe(target);
    expect(m.pathParameters).toEqual(params);
  });
});

describe('the gateway over HTTP', () => {
  let server: http.Server;
  let base: string;
  const seen: any[] = [];
  const handlers: Record<string, Handler> = {
    echo: async (event) => {
      seen.push(event);
      return { statusCode: 201, headers: { 'Content-Type': 'application/json', 'X-Thing': 'y' }, cookies: ['a=1; Path=/', 'b=2; Path=/'], body: JSON.stringify({ ok: true }) };
    },
    plain: async () => ({ hello: 'world' }),
    binary: async () => ({ statusCode: 200, headers: { 'content-type': 'application/zip' }, isBase64Encoded: true, body: Buffer.from([0, 1, 2, 255]).toString('base64') }),
    boom: async () => {
      throw new Error('secret detail Hunter2');
    },
    slow: () => new Promise(() => undefined),
    service: async (event) => ({ ok: true, got: event }),
  };
  const load: HandlerLoader = async (module) => handlers[module];
  const map: ServiceMap = {
    service: 'svc',
    functions: [
      { name: 'echo', module: 'echo', exportName: 'handler', routes: [{ method: 'POST', path: '/api/things/{id}' }], timeout: 5 },
      { name: 'plain', module: 'plain', exportName: 'handler', routes: [{ method: 'GET', path: '/api/plain' }], timeout: 5 },
      { name: 'binary', module: 'binary', exportName: 'handler', routes: [{ method: 'GET', path: '/api/zip' }], timeout: 5 },
      { name: 'boom', module: 'boom', exportName: 'handler', routes: [{ method: 'GET', path: '/api/boom' }], timeout: 5 },
      { name: 'slow', module: 'slow', exportName: 'handler', routes: [{ method: 'GET', path: '/api/slow' }], timeout: 1 },
      { name: 'passwordService', module: 'service', exportName: 'handler', routes: [], timeout: 5 },
    ],
  };
  let dist: string;
  beforeAll(async () => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>app</title>');
    fs.writeFileSync(path.join(dist, 'assets', 'app-1a2b.js'), 'console.log(1)');
    server = createGateway({ map, load, http: true, invoke: true, staticApp: staticApp(dist, { 'x-frame-options': 'DENY' }) });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it('builds the payload 2.0 event: route key, path parameters, cookies apart, query, JSON body as text', async () => {
    const r = await fetch(`${base}/api/things/t%201?a=1&a=2&b=x`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: '__Host-hdc=s1; other=2', 'X-Csrf-Token': 'c' }, body: '{"x":1}' });
    expect(r.status).toBe(201);
    expect(r.headers.get('x-thing')).toBe('y');
    expect(r.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    const e = seen.at(-1);
    expect(e).toMatchObject({
      version: '2.0',
      routeKey: 'POST /api/things/{id}',
      rawPath: '/api/things/t%201',
      rawQueryString: 'a=1&a=2&b=x',
      cookies: ['__Host-hdc=s1', 'other=2'],
      queryStringParameters: { a: '1,2', b: 'x' },
      pathParameters: { id: 't 1' },
      body: '{"x":1}',
      isBase64Encoded: false,
      requestContext: { http: { method: 'POST', sourceIp: '127.0.0.1' }, stage: '$default' },
    });
    expect(e.headers['x-csrf-token']).toBe('c');
    expect(e.headers.cookie).toBeUndefined();
  });
  it('sends a binary body base64-encoded, and answers a base64 result as bytes', async () => {
    await fetch(`${base}/api/things/1`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0xff, 0x00]) });
    expect(seen.at(-1)).toMatchObject({ isBase64Encoded: true, body: Buffer.from([0xff, 0x00]).toString('base64') });
    const z = await fetch(`${base}/api/zip`);
    expect(Buffer.from(await z.arrayBuffer())).toEqual(Buffer.from([0, 1, 2, 255]));
  });
  it('answers a bare result as a 200 JSON body', async () => {
    const r = await fetch(`${base}/api/plain`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ hello: 'world' });
  });
  it('a handler that throws: 500 with a code, never its message', async () => {
    const r = await fetch(`${base}/api/boom`);
    expect(r.status).toBe(500);
    const text = await r.text();
    expect(JSON.parse(text)).toEqual({ code: 'internal_error' });
    expect(text).not.toContain('Hunter2');
  });
  it('a handler past its timeout: 503 function_timeout', async () => {
    const r = await fetch(`${base}/api/slow`);
    expect(r.status).toBe(503);
    expect(((await r.json()) as { code: string }).code).toBe('function_timeout');
  });
  it('app paths get the app, a missing asset a 404, unknown API paths no app', async () => {
    const app = await fetch(`${base}/computers/abc`);
    expect(app.status).toBe(200);
    expect(await app.text()).toContain('<title>app</title>');
    expect(app.headers.get('x-frame-options')).toBe('DENY');
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${base}/assets/app-1a2b.js`)).headers.get('cache-control')).toContain('immutable');
    const api = await fetch(`${base}/api/nope`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as { code: string }).code).toBe('not_found');
    expect((await fetch(`${base}/../../etc/passwd`)).status).toBe(200); // normalised by the URL: the app, never the file
  });
  it('answers Lambda Invoke for a function by its short or full name', async () => {
    const r = await fetch(`${base}/2015-03-31/functions/svc-prod-passwordService/invocations`, { method: 'POST', body: '{"op":"health"}' });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, got: { op: 'health' } });
    const err = await fetch(`${base}/2015-03-31/functions/boom/invocations`, { method: 'POST', body: '{}' });
    expect(err.headers.get('x-amz-function-error')).toBe('Unhandled');
    expect(await err.text()).not.toContain('Hunter2');
    expect((await fetch(`${base}/2015-03-31/functions/nope/invocations`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
  it('refuses a request body over the payload limit with 413', async () => {
    const r = await fetch(`${base}/api/things/1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(6 * 1024 * 1024 + 1) });
    expect(r.status).toBe(413);
  });
});

describe('the gateway with the console handlers themselves', () => {
  it('serves /health/live through the real health function', async () => {
    const map = readServiceMap(path.join(ROOT, 'serverless.yml'), () => 'rate(1 day)');
    const load: HandlerLoader = async (module, exportName) => require(path.join(ROOT, module))[exportName];
    const server = createGateway({ map, load, http: true });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/health/live`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ status: 'ok' });
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
