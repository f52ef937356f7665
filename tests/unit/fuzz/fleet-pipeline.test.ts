import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { fleetRoutes } from '../../../functions/fleet/all-routes';
import { AuditChain } from '../../../lib/audit';
import { ClusterCliError, parseJsonArray, type ClusterCli } from '../../../lib/fleet/cluster-cli';
import { loadFleetConfig } from '../../../lib/fleet/config';
import type { FleetRoute } from '../../../lib/fleet/route';
import { createFleetHttpHandler } from '../../../lib/fleet/http';
import { setLocalAdminPassword } from '../../../lib/fleet/local-admin';
import { signLocalToken } from '../../../lib/fleet/jwt';
import type { FleetRuntime } from '../../../lib/fleet/runtime';
import { logger } from '../../../lib/log';
import { httpEvent, type HttpEventOptions } from '../../support/http-event';
import { memoryDynamoStore } from '../../support/memory-store';

// The fleet plane's real pipeline and handlers, in process (a table in memory, the cluster CLI
// answering from the shipped fixtures or from fuzzed JSON): whatever the request and whatever
// the cluster answers, nothing ends in a 500.

const FIXTURES = path.join(__dirname, '../../../local/fleet/fixtures');
const fixture = (f: string) => fs.readFileSync(path.join(FIXTURES, f), 'utf8');
const KIND_FILE: Record<string, string> = {
  'inventory ls': 'inventory_ls.json',
  'get windows_desktop_service': 'windows_desktop_service.json',
  'get windows_desktop': 'windows_desktops.json',
  'get locks': 'locks.json',
  'get autoupdate_config': 'autoupdate_config.json',
  'get autoupdate_version': 'autoupdate_version.json',
  'get autoupdate_agent_rollout': 'autoupdate_agent_rollout.json',
};

/** A cluster CLI answering each command from `answers` (command → stdout), else from the fixtures. */
class FuzzCli implements ClusterCli {
  answers = new Map<string, string>();
  async run(args: string[]) {
    const cmd = args.filter((a) => !a.startsWith('--format')).slice(0, 2).join(' ');
    if (args[0] === 'lock') return { stdout: 'Created a lock with name "fuzz-lock".\n', stderr: '' };
    if (args[0] === 'rm') return { stdout: '', stderr: '' };
    const answer = this.answers.get(cmd) ?? (KIND_FILE[cmd] ? fixture(KIND_FILE[cmd]) : undefined);
    if (answer === undefined) throw new ClusterCliError('access_unavailable', true);
    return { stdout: answer, stderr: '' };
  }
}

const routes = Object.values(fleetRoutes).flat();
const key = randomBytes(32);
const store = memoryDynamoStore('fleet-fuzz');
const cli = new FuzzCli();
const config = loadFleetConfig({ FLEET_TABLE: 'fleet-fuzz' });
const rt: FleetRuntime = { config, store, audit: new AuditChain(store, 'fleet'), cli, masterKey: async () => key };
// the probe (a health route) rides along: the pipeline serves it like an anonymous route
const handler = createFleetHttpHandler(routes as FleetRoute<any, any, any, any, any>[], () => rt);
let adminToken = '';
let techToken = '';

const event = (method: string, rawPath: string, opts: HttpEventOptions = {}) => httpEvent(method, rawPath, { sourceIp: '192.0.2.7', ...opts });

const errors: unknown[] = [];
async function call(e: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const r = await handler(e);
  if (r.statusCode === 500) errors.push({ path: e.rawPath, method: e.requestContext.http.method, body: e.body, query: e.queryStringParameters, logged: lastError });
  return r;
}
let lastError: unknown;

beforeAll(async () => {
  jest.spyOn(logger, 'error').mockImplementation((...a: unknown[]) => void (lastError = a));
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true); // the audit stream
  await setLocalAdminPassword(store, 'admin', 'Fuzz-Admin-Password-1!');
  adminToken = (await signLocalToken(key, 'admin', 1, 3600)).token;
  // a technician of the access platform: viewer of acme by role, operator of it by assignment
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  rt.jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', kid: 'k1' }] }) as unknown as FleetRuntime['jwks'];
  techToken = await new SignJWT({ username: 'tech', roles: ['fleet-client-acme', 'fleet-client-other'] }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setExpirationTime('1h').sign(privateKey);
  // a register to address: a client with a console
  const as = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  expect((await call(event('POST', '/api/clients', { headers: as, body: JSON.stringify({ code: 'acme', name: 'Acme' }) }))).statusCode).toBe(201);
  expect((await call(event('PUT', '/api/technicians', { headers: as, body: JSON.stringify({ username: 'tech', clients: [{ code: 'acme', level: 'operator' }] }) }))).statusCode).toBe(201);
});
afterAll(() => jest.restoreAllMocks());
afterEach(() => {
  expect(errors).toEqual([]);
  errors.length = 0;
});

// values a field of these routes might plausibly hold, and anything at all
const plausible = fc.oneof(
  fc.constantFrom('acme', 'ACME', '-x', 'a'.repeat(64), 'https://console.acme.test', 'https://u:p@x.test', 'http://x.test', 'javascript:alert(1)', 'https://[::1', 'none', 24, 1, 0, -1, 1e309, 'admin', 'operator', 'viewer', '\u0000', '\ud800', '__proto__', 'constructor', 'x'.repeat(5000)),
  fc.string(),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null),
  fc.constant(undefined),
);
const FIELDS = ['code', 'name', 'notes', 'contacts', 'clientCode', 'url', 'ca', 'token', 'username', 'password', 'clients', 'duration', 'message', '__proto__'];
const bodyArb = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), plausible, { maxKeys: 5 }).map((o) => JSON.stringify(o)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('', '{', '[]', 'null', '"x"', '{"__proto__":{"admin":true}}', '{"contacts":[{"name":"a","email":"not-an-email"}],"name":"x"}'),
);
const paramArb = fc.oneof(fc.constantFrom('acme', 'node-1', 'a%2Fb', '%E0%A4%A', '..', '%00', crypto.randomUUID(), 'x'.repeat(300)), fc.string({ maxLength: 40 }).map(encodeURIComponent));
const queryArb = fc.option(fc.dictionary(fc.constantFrom('limit', 'beforeSeq', 'clientCode', 'status', 'q', 'all', 'kind', 'sort', 'dir', 'group', 'x'), fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('1', '0', '-1', '1e9', 'NaN', 'client', 'desc', 'online', 'gateway'))), { nil: undefined });
const headerArb = fc.record({
  auth: fc.constantFrom('admin', 'technician', 'technician', 'none', 'garbage', 'alg-none'),
  contentType: fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', undefined),
  origin: fc.constantFrom(undefined, 'https://evil.example', 'null'),
});

function headersFor(h: { auth: string; contentType?: string; origin?: string }): Record<string, string> {
  const out: Record<string, string> = {};
  if (h.auth === 'admin') out.authorization = `Bearer ${adminToken}`;
  if (h.auth === 'technician') out.authorization = `Bearer ${techToken}`;
  if (h.auth === 'garbage') out.authorization = 'Bearer a.b.c';
  if (h.auth === 'alg-none') out.authorization = `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"admin"}').toString('base64url')}.`;
  if (h.contentType) out['content-type'] = h.contentType;
  if (h.origin) out.origin = h.origin;
  return out;
}

describe('fuzz: the fleet pipeline and handlers', () => {
  it('answers every request to every route without a 500', async () => {
    const routeArb = fc.constantFrom(...routes);
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(routeArb, paramArb, queryArb, bodyArb, headerArb, fc.boolean(), async (route, param, query, body, h, b64) => {
        const p = route.path.replace(/\{\w+\}/g, param);
        const r = await call(event(route.method, p, { headers: headersFor(h), query, body: b64 ? Buffer.from(body).toString('base64') : body, isBase64Encoded: b64 }));
        expect(r.statusCode).toBeLessThan(600);
        seen.add(r.statusCode!);
        if (r.statusCode! >= 400) expect(typeof JSON.parse(r.body!).code).toBe('string');
      }),
      { numRuns: 250 },
    );
    // the inputs reach the handlers, not only the pipeline's refusals
    expect([...seen].sort()).toEqual(expect.arrayContaining([200, 400, 401, 403, 404]));
  });

  it('reads any cluster answer (fuzzed JSON in the resource shapes) without a 500', async () => {
    const str = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', 'acme', 'Auth', 'Proxy', 'WindowsDesktop', 'Node', '17.0.1', 'v16.4.0', '2026-11-21T12:00:00Z', 'not-a-date', '__proto__'));
    const any = fc.oneof(str, fc.jsonValue({ maxDepth: 2 }));
    const meta = fc.record({ name: any, labels: fc.oneof(fc.dictionary(fc.constantFrom('client_code', '__proto__', 'x'), any), any) }, { requiredKeys: [] });
    const resource = fc.record(
      {
        kind: any,
        metadata: fc.oneof(meta, any),
        spec: fc.oneof(
          fc.record(
            {
              hostname: any, services: fc.oneof(fc.array(any, { maxLength: 3 }), any), version: any, last_seen: any, host_id: any, addr: any, domain: any, non_ad: any,
              teleport_version: any, target: fc.oneof(fc.record({ server_id: any, node: any }, { requiredKeys: [] }), any), expires: any, message: any, created_by: any,
              agents: fc.oneof(fc.record({ mode: any, target_version: any, strategy: any }, { requiredKeys: [] }), any),
            },
            { requiredKeys: [] },
          ),
          any,
        ),
        status: fc.oneof(fc.record({ state: any, groups: fc.oneof(fc.array(fc.record({ name: fc.oneof(any, fc.constantFrom('client-acme', 'canary')), state: any, config_days: any, config_start_hour: any, present_count: any }, { requiredKeys: [] }), { maxLength: 3 }), any) }, { requiredKeys: [] }), any),
      },
      { requiredKeys: [] },
    );
    // mostly arrays of resources; sometimes anything at all, or text that is no JSON
    const answer = fc.oneof({ weight: 6, arbitrary: fc.array(fc.oneof({ weight: 4, arbitrary: resource }, { weight: 1, arbitrary: any }), { maxLength: 5 }).map((v) => JSON.stringify(v)) }, { weight: 1, arbitrary: any.map((v) => JSON.stringify(v)) }, { weight: 1, arbitrary: fc.string() });
    const reads: Array<[string, string]> = [
      ['GET', '/api/nodes'],
      ['GET', '/api/nodes/inventory'],
      ['GET', '/api/access/gateways'],
      ['GET', '/api/access/autoupdate'],
    ];
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom(...Object.keys(KIND_FILE)), answer), fc.constantFrom(...reads), queryArb, fc.string({ maxLength: 20 }), fc.constantFrom('admin', 'technician'), async (answers, [method, p], query, id, who) => {
        cli.answers = new Map(Object.entries(answers));
        const auth = { authorization: `Bearer ${who === 'admin' ? adminToken : techToken}`, 'content-type': 'application/json' };
        const r = await call(event(method, p, { headers: auth, query }));
        expect([200, 400, 502]).toContain(r.statusCode);
        // one proxy by id, and a lock and unlock of it, on the same answers
        const nodeId = encodeURIComponent(id || 'x');
        for (const [m, path, body] of [['GET', `/api/nodes/${nodeId}`], ['POST', `/api/nodes/${nodeId}/lock`, '{"duration":1}'], ['POST', `/api/nodes/${nodeId}/unlock`]] as const) {
          const res = await call(event(m, path, { headers: auth, body }));
          expect(res.statusCode).not.toBe(500);
        }
      }),
      { numRuns: 100 },
    );
    cli.answers = new Map();
  });
});

describe('fuzz: the cluster CLI JSON reader', () => {
  it('answers an array or refuses with access_unavailable, for any stdout', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v))), (stdout) => {
        try {
          return Array.isArray(parseJsonArray(stdout));
        } catch (e) {
          return e instanceof ClusterCliError && e.code === 'access_unavailable';
        }
      }),
      { numRuns: 1000 },
    );
  });
});
