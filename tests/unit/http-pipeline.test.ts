import { serverlessHttpEvents } from '../support/serverless-events';
import { z } from 'zod';
import { matchPath, STATE_CHANGING } from '../../lib/http/route';
import { validationError } from '../../lib/http/middlewares/validate';
import { caPemSchema, dcUrlSchema } from '../../lib/setup/connection';
import { consoleRoutes } from '../../functions/console/all-routes';
import { consoleDocument } from '../../functions/console/openapi';

describe('routes and serverless.yml', () => {
  const events = serverlessHttpEvents();
  it('declares every route of every console handler, and nothing else', () => {
    const declared = events.map((e) => `${e.handler.replace(/\.handler$/, '')} ${e.method} ${e.path}`).sort();
    const defined = Object.entries(consoleRoutes)
      .flatMap(([file, routes]) => routes.map((r) => `functions/console/${file} ${r.method} ${r.path}`))
      .concat(['functions/console/openapi GET /openapi/v1.json'])
      .sort();
    expect(declared).toEqual(defined);
  });
  it('has state-changing routes to walk (the CSRF integration test uses this list)', () => {
    expect(events.filter((e) => STATE_CHANGING.has(e.method as any)).length).toBeGreaterThan(3);
  });
  it('describes every route in the OpenAPI document, the CSRF token on every state-changing one but the bearer route', () => {
    const doc = consoleDocument({ helpdeskEnabled: true });
    for (const r of Object.values(consoleRoutes).flat()) {
      const op = (doc.paths as Record<string, any>)[r.path]?.[r.method.toLowerCase()];
      expect(op).toBeDefined();
      if (STATE_CHANGING.has(r.method) && r.access !== 'bearer') {
        const csrf = op.security.some((s: object) => 'csrf' in s) || (op.parameters ?? []).some((p: any) => p.name === 'X-CSRF-TOKEN' && p.in === 'header' && p.required);
        expect([r.method, r.path, csrf]).toEqual([r.method, r.path, true]);
      }
    }
  });
});

describe('path matching', () => {
  it('matches templates and decodes parameters', () => {
    expect(matchPath('/api/computers/{id}', '/api/computers/a%20b')).toEqual({ id: 'a b' });
    expect(matchPath('/api/computers/{id}', '/api/computers/')).toBeUndefined();
    expect(matchPath('/api/computers/{id}', '/api/computers/x/laps')).toBeUndefined();
    expect(matchPath('/api/computers/{id}', '/api/computers/%E0%A4%A')).toBeUndefined();
  });
});

describe('validation errors', () => {
  it('name the fields and never echo the rejected value', () => {
    const schema = z.object({ password: z.string().max(3), n: z.number() });
    const r = schema.safeParse({ password: 'SuperSecret-123', n: 'x' });
    const err = validationError(r.error!, 'body');
    expect(err.status).toBe(400);
    expect(err.code).toBe('validation_failed');
    expect(JSON.stringify(err.body())).not.toContain('SuperSecret-123');
    expect((err.body().errors as any[]).map((e) => e.field).sort()).toEqual(['body.n', 'body.password']);
  });
});

describe('directory connection settings', () => {
  it.each(['ldaps://dc1.corp.example.test', 'ldaps://dc1.corp.example.test:636', 'ldaps://127.0.0.1:636'])('accepts %s', (u) => {
    expect(dcUrlSchema.safeParse(u).success).toBe(true);
  });
  it.each([
    ['ldap://dc1.corp.example.test', 'ldaps_required'],
    ['ldaps://dc1.corp.example.test:389', 'ldaps_port_refused'],
    ['ldaps://dc1.corp.example.test:3268', 'ldaps_port_refused'],
    ['ldaps://dc1.corp.example.test:3269', 'ldaps_port_refused'],
    ['ldaps://dc1.corp.example.test:10636', 'ldaps_port_refused'],
  ])('refuses %s with %s', (u, code) => {
    const r = dcUrlSchema.safeParse(u);
    expect(r.success).toBe(false);
    expect(validationError(r.error!, 'body').code).toBe(code);
  });
  it('refuses a CA PEM that holds a private key', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
    const r = caPemSchema.safeParse(pem);
    expect(r.success).toBe(false);
    expect(validationError(r.error!, 'body').code).toBe('ca_contains_private_key');
  });
});
