import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { consoleRoutes } from '../../functions/console/all-routes';
import { consoleDocument } from '../../functions/console/openapi';
import { fleetRoutes } from '../../functions/fleet/all-routes';
import { fleetDocument } from '../../functions/fleet/openapi';
import { STATE_CHANGING } from '../../lib/http/paths';

// The two OpenAPI documents (issue 30): generated from the route tables, linted by Spectral's
// `oas` ruleset with no result at all, every operation with its id, tag, description, security,
// success answers and errors; the security, media types and statuses the issue found wrong.
const ROOT = path.resolve(__dirname, '../..');
const docs = { console: consoleDocument({ helpdeskEnabled: true }), fleet: fleetDocument() };
type Op = { operationId: string; tags: string[]; description: string; security: Array<Record<string, string[]>>; parameters?: Array<{ name: string; in: string; required: boolean }>; responses: Record<string, { content?: Record<string, unknown> }> };
const op = (app: keyof typeof docs, method: string, p: string) => (docs[app].paths as Record<string, Record<string, Op>>)[p]?.[method.toLowerCase()];
const operations = (app: keyof typeof docs) => Object.entries(docs[app].paths as Record<string, Record<string, Op>>).flatMap(([p, item]) => Object.entries(item).map(([m, o]) => ({ route: `${m.toUpperCase()} ${p}`, o })));

describe('the OpenAPI documents', () => {
  it.each(['console', 'fleet'] as const)('pass Spectral oas with no error, warning, information or hint (%s)', (app) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-openapi-'));
    const file = path.join(dir, `${app}.json`);
    fs.writeFileSync(file, JSON.stringify(docs[app], null, 2));
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/@stoplight/spectral-cli/dist/index.js'), 'lint', file, '--ruleset', path.join(ROOT, '.spectral.yaml'), '--format', 'json', '--fail-severity', 'hint', '--quiet'], { encoding: 'utf8', cwd: ROOT });
    fs.rmSync(dir, { recursive: true, force: true });
    const results = JSON.parse(r.stdout || '[]') as Array<{ code: string; message: string; path: string[] }>;
    expect(results.map((x) => `${x.code} ${x.path.join('.')}: ${x.message}`)).toEqual([]);
    expect(r.status).toBe(0);
  });

  it.each(['console', 'fleet'] as const)('describe every route of the table (%s)', (app) => {
    const table = Object.values(app === 'console' ? consoleRoutes : fleetRoutes).flat();
    for (const r of table) expect([r.method, r.path, !!op(app, r.method, r.path)]).toEqual([r.method, r.path, true]);
    expect(op(app, 'GET', '/openapi/v1.json')).toBeDefined();
  });

  it.each(['console', 'fleet'] as const)('give every operation a unique id, a tag, a description, its security, a success answer and the internal error (%s)', (app) => {
    const ids = new Set<string>();
    for (const { route, o } of operations(app)) {
      expect([route, ids.has(o.operationId)]).toEqual([route, false]);
      ids.add(o.operationId);
      expect([route, o.tags.length, o.description.length > 10, Array.isArray(o.security)]).toEqual([route, 1, true, true]);
      expect([route, Object.keys(o.responses).some((s) => /^2\d\d$/.test(s)), !!o.responses['500']]).toEqual([route, true, true]);
    }
    expect(docs[app].servers.length).toBe(1);
  });

  it('declares the anonymous console routes anonymous, and each credential where it is taken', () => {
    for (const [m, p] of [['GET', '/api/auth/antiforgery'], ['GET', '/api/branding'], ['GET', '/api/setup'], ['POST', '/api/auth/login'], ['POST', '/api/setup'], ['GET', '/health/live'], ['GET', '/health/ready']]) expect([p, op('console', m, p).security]).toEqual([p, []]);
    // sign-in: the pre-session's cookie and CSRF token
    for (const p of ['/api/auth/login', '/api/auth/access', '/api/setup', '/api/auth/logout']) {
      expect(op('console', 'POST', p).parameters?.filter((x) => x.required).map((x) => `${x.in} ${x.name}`)).toEqual(expect.arrayContaining(['header X-CSRF-TOKEN', 'cookie __Host-hdc']));
    }
    expect(op('console', 'POST', '/api/auth/access').security).toEqual([{ accessPlatform: [] }]);
    expect(op('console', 'GET', '/api/fleet/v1/status').security).toEqual([{ fleetToken: [] }]);
    expect(op('console', 'GET', '/api/computers').security).toEqual([{ session: [] }]);
    expect(op('console', 'POST', '/api/users/{id}/unlock').security).toEqual([{ session: [], csrf: [] }]);
    expect(docs.console.components.securitySchemes).toMatchObject({ accessPlatform: { in: 'header', name: 'Teleport-Jwt-Assertion' }, fleetToken: { scheme: 'bearer' } });
    // every state-changing route but the bearer one carries the CSRF token, by its security or its parameter
    for (const r of Object.values(consoleRoutes).flat().filter((x) => STATE_CHANGING.has(x.method) && x.access !== 'bearer')) {
      const o = op('console', r.method, r.path);
      expect([r.path, o.security.some((s) => 'csrf' in s) || !!o.parameters?.some((x) => x.name === 'X-CSRF-TOKEN')]).toEqual([r.path, true]);
    }
  });

  it('declares the fleet credentials: the platform JWT or a bearer token, anonymous only where open', () => {
    for (const { route, o } of operations('fleet')) {
      const open = ['POST /api/auth/login', 'GET /health/live'].includes(route);
      expect([route, o.security]).toEqual([route, open ? [] : [{ accessPlatform: [] }, { bearer: [] }]]);
    }
  });

  it('declares the real success statuses: 201 on creates, 204 on deletes and sign-out', () => {
    for (const [m, p] of [['POST', '/api/groups'], ['POST', '/api/approvals'], ['POST', '/api/admin/protected-groups'], ['POST', '/api/admin/super-administrators']]) expect([p, Object.keys(op('console', m, p).responses).filter((s) => s < '300')]).toEqual([p, ['201']]);
    for (const [m, p] of [['POST', '/api/auth/logout'], ['DELETE', '/api/admin/roles/{id}'], ['DELETE', '/api/admin/delegations/{id}'], ['DELETE', '/api/admin/super-administrators/{guid}'], ['DELETE', '/api/admin/notifications/channels/{id}']]) {
      expect([p, Object.keys(op('console', m, p).responses).filter((s) => s < '300'), op('console', m, p).responses['204'].content]).toEqual([p, ['204'], undefined]);
    }
    for (const p of ['/api/admin/roles/{id}', '/api/admin/delegations/{id}']) expect(Object.keys(op('console', 'PUT', p).responses).filter((s) => s < '300')).toEqual(['200', '201']);
    for (const [m, p] of [['POST', '/api/clients'], ['POST', '/api/consoles'], ['POST', '/api/alerts/channels'], ['POST', '/api/bundles/proxy-token'], ['POST', '/api/deployment/generate']]) expect([p, Object.keys(op('fleet', m, p).responses).filter((s) => s < '300')]).toEqual([p, ['201']]);
    for (const p of ['/api/clients/{code}', '/api/consoles/{id}', '/api/alerts/channels/{id}', '/api/technicians/{username}', '/api/bundles/proxy-token/{tokenId}']) expect([p, Object.keys(op('fleet', 'DELETE', p).responses).filter((s) => s < '300')]).toEqual([p, ['204']]);
  });

  it('declares the files: CSV exports, the delegation script as text, the upgrade pack as JSON or zip', () => {
    const types = (app: keyof typeof docs, p: string, m = 'GET') => Object.keys(op(app, m, p).responses['200'].content ?? {});
    expect(types('console', '/api/exports/users')).toEqual(['text/csv']);
    expect(types('console', '/api/exports/watch-lists/{list}')).toEqual(['text/csv']);
    expect(types('console', '/api/admin/delegation-export/{kind}')).toEqual(['text/plain']);
    expect(types('fleet', '/api/nodes/inventory')).toEqual(['text/csv']);
    expect(types('fleet', '/api/upgrades/pack', 'POST').sort()).toEqual(['application/json', 'application/zip']);
  });

  it('declares a success body for every answer that has one, from the zod schemas', () => {
    for (const app of ['console', 'fleet'] as const) {
      for (const { route, o } of operations(app)) for (const [s, r] of Object.entries(o.responses)) if (s !== '204') expect([route, s, !!r.content]).toEqual([route, s, true]);
    }
  });

  it('asks a fleet DELETE for no content type, a body or a POST for JSON (415 declared on state-changing routes)', () => {
    for (const { route, o } of operations('fleet')) if (/^(POST|PUT|DELETE) /.test(route)) expect([route, !!o.responses['415']]).toEqual([route, true]);
  });
});
