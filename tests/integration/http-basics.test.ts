import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHttpHandler } from '../../lib/http/console';
import { createRuntime } from '../../lib/runtime';
import { consoleDocument, routes as openapiRoutes } from '../../functions/console/openapi';
import { routes as computerRoutes } from '../../functions/console/computers';
import { consoleRoutes } from '../../functions/console/all-routes';
import { newClient, signedIn, stack, store } from '../support/stack';

describe('health, errors and the API description', () => {
  it('answers /health/live and /health/ready anonymously, without detail', async () => {
    const c = newClient();
    const live = await c.get('/health/live');
    const ready = await c.get('/health/ready');
    expect([live.status, ready.status]).toEqual([200, 200]);
    expect(live.body).toEqual({ status: 'ok' });
    expect(ready.body).toEqual({ status: 'ok' });
  });

  it('answers an unknown route 404 { code: not_found }', async () => {
    for (const p of ['/api/nope', '/nope', '/api/auth/login/extra']) {
      const r = await newClient().get(p);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ code: 'not_found' });
    }
  });

  it('answers invalid JSON and invalid fields with 400 and a stable code, echoing no value', async () => {
    const c = newClient();
    await c.antiforgery();
    const bad = await c.request('POST', '/api/auth/login', '{"username": ', {});
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: 'invalid_json' });
    const invalid = await c.post('/api/auth/login', { username: '', password: 'P4ssw0rd-Echo-Check' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation_failed');
    expect(invalid.body.errors.map((e: any) => e.field)).toContain('body.username');
    expect(invalid.text).not.toContain('P4ssw0rd-Echo-Check');
  });

  it('refuses a second setup (409 setup_closed)', async () => {
    const c = newClient();
    await c.antiforgery();
    expect((await c.get('/api/setup')).body).toEqual({ configured: true, setupOpen: false });
    const r = await c.post('/api/setup', {}, { 'x-setup-token': 'x' });
    expect(r.status).toBe(400); // the body is validated first
    const again = await c.post(
      '/api/setup',
      {
        domain: stack.directory.domain,
        dcs: [{ name: 'dc1', url: 'ldaps://127.0.0.1:636' }],
        caPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
        readAccount: { user: 'x', password: 'y' },
        writeAccount: { user: 'x', password: 'y' },
        managedOus: ['OU=Managed,DC=corp,DC=example,DC=test'],
        superAdministrator: 'op-super',
      },
      { 'x-setup-token': 'x' },
    );
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('setup_closed');
  });

  it('serves the OpenAPI document to anyone in Development', async () => {
    const r = await newClient().get('/openapi/v1.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(Object.keys(r.body.paths)).toEqual(expect.arrayContaining(['/api/auth/login', '/api/audit/verify']));
  });

  describe('outside Development (the same pipeline in-process, on the stack’s DynamoDB)', () => {
    const rt = createRuntime({
      env: { HDC_ENVIRONMENT: 'Production', HDC_MASTER_KEY_FILE: stack.masterKeyFile, ...stack.stores.console },
      store,
    });
    const handler = createHttpHandler(openapiRoutes, () => rt);
    const event = (cookie?: string): APIGatewayProxyEventV2 =>
      ({
        rawPath: '/openapi/v1.json',
        headers: cookie ? { cookie } : {},
        requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' } },
      }) as unknown as APIGatewayProxyEventV2;

    it('anonymous 401, without settings.manage 403, with it 200', async () => {
      const anon = await handler(event());
      expect(anon.statusCode).toBe(401);
      const helpdesk = await signedIn('op-helpdesk');
      const noPerm = await handler(event(`__Host-hdc=${helpdesk.cookie('__Host-hdc')}`));
      expect(noPerm.statusCode).toBe(403);
      const admin = await signedIn('op-super');
      const ok = await handler(event(`__Host-hdc=${admin.cookie('__Host-hdc')}`));
      expect(ok.statusCode).toBe(200);
      expect(JSON.parse(ok.body!).paths['/api/auth/login']).toBeDefined();
    });
  });

  describe('with Helpdesk:Enabled=false', () => {
    const rt = createRuntime({
      env: { Helpdesk__Enabled: 'false', HDC_MASTER_KEY_FILE: stack.masterKeyFile },
      store,
    });
    const handler = createHttpHandler(computerRoutes, () => rt);
    const post = (path: string) =>
      handler({ rawPath: path, headers: {}, body: '{}', requestContext: { http: { method: 'POST', sourceIp: '127.0.0.1' } } } as unknown as APIGatewayProxyEventV2);
    const guid = stack.computers.find((c) => c.name === 'WS-STD-01')!.guid;

    it('has no LAPS routes (404, before anything else) and no LAPS entries in the OpenAPI document', async () => {
      for (const p of [`/api/computers/${guid}/laps`, `/api/computers/${guid}/laps/expire`]) {
        const r = await post(p);
        expect(r.statusCode).toBe(404);
        expect(JSON.parse(r.body!)).toEqual({ code: 'not_found' });
      }
      const off = consoleDocument({ helpdeskEnabled: false });
      const on = consoleDocument({ helpdeskEnabled: true });
      const lapsRoutes = (doc: ReturnType<typeof consoleDocument>) => Object.keys(doc.paths).filter((p) => p.startsWith('/api/computers/') && p.includes('/laps'));
      expect(lapsRoutes(off)).toEqual([]);
      expect(lapsRoutes(on).sort()).toEqual(['/api/computers/{id}/laps', '/api/computers/{id}/laps/expire']);
      expect(off.paths['/api/computers']).toBeDefined();
    });
  });
});
