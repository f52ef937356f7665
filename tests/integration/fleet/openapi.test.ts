import { fleetDocument } from '../../../functions/fleet/openapi';
import { adminAuth, auditRowOf, call, localAdmin, personaHeaders } from './support';

// The fleet plane publishes its OpenAPI document (issue 30), and a DELETE needs no content type.
describe("the fleet plane's OpenAPI document", () => {
  it('is served to any signed-in caller at /openapi/v1.json, the one generated from the route table', async () => {
    for (const who of [await personaHeaders('viewer'), { token: await localAdmin() }]) {
      const r = await call('GET', '/openapi/v1.json', who);
      expect([r.status, r.headers['content-type']]).toEqual([200, 'application/json; charset=utf-8']);
      expect(r.body.openapi).toBe('3.1.0');
      expect(r.body.paths).toEqual(fleetDocument().paths);
      expect(Object.keys(r.body.components.securitySchemes).sort()).toEqual(['accessPlatform', 'bearer']);
    }
  });

  it('is refused anonymously (401) like every other route but the login', async () => {
    const r = await call('GET', '/openapi/v1.json');
    expect([r.status, r.body]).toEqual([401, { code: 'unauthenticated' }]);
  });
});

describe('a DELETE without a body (issue 30: was 415 json_required)', () => {
  it('is answered without a content type, audited like any other', async () => {
    const admin = await adminAuth();
    expect((await call('PUT', '/api/technicians', { ...admin, body: { username: 'openapi-temp', clients: [{ code: 'acme', level: 'viewer' }] } })).status).toBe(201);
    // call() sends no content type on a DELETE without a body, as curl -X DELETE does
    const r = await call('DELETE', '/api/technicians/openapi-temp', admin);
    expect([r.status, r.text]).toEqual([204, '']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'technician.delete', outcome: 'success', target: { id: 'openapi-temp' } });
    expect((await call('GET', '/api/technicians', admin)).body.technicians.map((t: { username: string }) => t.username)).not.toContain('openapi-temp');
  });

  it('still needs the token, and a body still needs JSON', async () => {
    const anonymous = await call('DELETE', '/api/technicians/tech-bob');
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'unauthenticated']);
    const text = await call('DELETE', '/api/technicians/tech-bob', { ...(await adminAuth()), body: 'x', headers: { 'content-type': 'text/plain' } });
    expect([text.status, text.body.code]).toEqual([415, 'json_required']);
    expect((await call('GET', '/api/technicians', await adminAuth())).body.technicians.map((t: { username: string }) => t.username)).toContain('tech-bob');
  });
});
