import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { fleetRoutes } from '../../../functions/fleet/all-routes';
import { fleetDocument } from '../../../functions/fleet/openapi';
import { AuditChain } from '../../../lib/audit';
import { loadFleetConfig } from '../../../lib/fleet/config';
import { createFleetHttpHandler } from '../../../lib/fleet/http';
import { signLocalToken } from '../../../lib/fleet/jwt';
import { setLocalAdminPassword } from '../../../lib/fleet/local-admin';
import type { FleetRoute } from '../../../lib/fleet/route';
import type { FleetRuntime } from '../../../lib/fleet/runtime';
import { logger } from '../../../lib/log';
import { ContractValidator } from '../../support/contract';
import { httpEvent } from '../../support/http-event';
import { memoryDynamoStore } from '../../support/memory-store';

// Issue 30: a fleet DELETE without a body needs no content type (`curl -X DELETE`); a body must
// be JSON and so must every POST (a cross-site form can POST); the token and the cross-site
// checks still apply. The real pipeline and routes in process, each answer held against the
// fleet plane's document.
const ORIGIN = 'https://fleet.msp.example.test';
const key = randomBytes(32);
const store = memoryDynamoStore('fleet-json');
const rt: FleetRuntime = { config: loadFleetConfig({ FLEET_TABLE: 'fleet-json', FLEET_PUBLIC_ORIGIN: ORIGIN }), store, audit: new AuditChain(store, 'fleet'), cli: { run: async () => ({ stdout: '[]', stderr: '' }) }, masterKey: async () => key };
const handler = createFleetHttpHandler(Object.values(fleetRoutes).flat() as FleetRoute<any, any, any, any, any>[], () => rt);
const contract = new ContractValidator('fleet', fleetDocument() as never);
let admin = '';

async function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<APIGatewayProxyStructuredResultV2> {
  const r = await handler(httpEvent(method, path, { headers, body }));
  const verdict = contract.validate({ method, url: path, status: r.statusCode ?? 0, headers: (r.headers ?? {}) as Record<string, string>, body: String(r.body ?? '') });
  expect(verdict.violations).toEqual([]);
  return r;
}
const codeOf = (r: APIGatewayProxyStructuredResultV2) => (r.body ? JSON.parse(String(r.body)).code : undefined);

beforeAll(async () => {
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true); // the audit stream
  await setLocalAdminPassword(store, 'admin', 'Json-Admin-Password-1!');
  admin = `Bearer ${(await signLocalToken(key, 'admin', 1, 3600)).token}`;
  expect((await send('POST', '/api/clients', { authorization: admin, 'content-type': 'application/json' }, JSON.stringify({ code: 'acme', name: 'Acme' }))).statusCode).toBe(201);
});
afterAll(() => jest.restoreAllMocks());

const assign = (username: string) => send('PUT', '/api/technicians', { authorization: admin, 'content-type': 'application/json' }, JSON.stringify({ username, clients: [{ code: 'acme', level: 'viewer' }] }));

describe('the fleet plane asks for JSON only where a body is sent, and on every POST', () => {
  it('answers a DELETE without a body and without a content type (was 415 json_required)', async () => {
    expect((await assign('tech-a')).statusCode).toBe(201);
    const r = await send('DELETE', '/api/technicians/tech-a', { authorization: admin });
    expect([r.statusCode, r.body]).toEqual([204, '']);
    expect((await send('GET', '/api/technicians', { authorization: admin })).body).not.toContain('tech-a');
  });

  it('still refuses a DELETE whose body is not JSON', async () => {
    expect((await assign('tech-b')).statusCode).toBe(201);
    const r = await send('DELETE', '/api/technicians/tech-b', { authorization: admin, 'content-type': 'text/plain' }, 'x');
    expect([r.statusCode, codeOf(r)]).toEqual([415, 'json_required']);
    expect((await send('GET', '/api/technicians', { authorization: admin })).body).toContain('tech-b');
  });

  it('still refuses a POST that is not JSON, with or without a body (a cross-site form can POST)', async () => {
    for (const [headers, body] of [[{}, undefined], [{ 'content-type': 'application/x-www-form-urlencoded' }, 'code=evil&name=Evil'], [{ 'content-type': 'text/plain' }, '{"code":"evil","name":"Evil"}']] as const) {
      const r = await send('POST', '/api/clients', { authorization: admin, ...headers }, body);
      expect([r.statusCode, codeOf(r)]).toEqual([415, 'json_required']);
    }
    expect((await send('GET', '/api/clients', { authorization: admin })).body).not.toContain('evil');
  });

  it('still asks the DELETE for its token, and refuses it cross-site', async () => {
    expect((await assign('tech-c')).statusCode).toBe(201);
    const anonymous = await send('DELETE', '/api/technicians/tech-c', {});
    expect([anonymous.statusCode, codeOf(anonymous)]).toEqual([401, 'unauthenticated']);
    const crossSite = await send('DELETE', '/api/technicians/tech-c', { authorization: admin, origin: 'https://evil.example.test', 'sec-fetch-site': 'cross-site' });
    expect([crossSite.statusCode, codeOf(crossSite)]).toEqual([403, 'cross_site_request']);
    expect((await send('GET', '/api/technicians', { authorization: admin })).body).toContain('tech-c');
  });
});
