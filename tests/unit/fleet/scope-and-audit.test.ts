import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { randomBytes } from 'node:crypto';
import { makeAccess, type FleetAccess } from '../../../lib/fleet/access';
import { redactForTechnician, type AuditEntry } from '../../../lib/fleet/audit-view';
import { autoUpdateGroupVisible } from '../../../lib/fleet/autoupdate';
import type { Level } from '../../../lib/fleet/config';
import { consoleCreateSchema, consoleUpdateSchema } from '../../../lib/fleet/consoles';
import { guardRoute, refusalFiling } from '../../../lib/fleet/guard';
import { inventoryCsv } from '../../../lib/fleet/inventory';
import { signLocalToken, verifyLocalToken, verifyPlatformToken, type JwksResolver } from '../../../lib/fleet/jwt';
import { listNodes, nodeDetail } from '../../../lib/fleet/node-list';
import { buildProxies, proxiesInScope, proxyInScope, type ClusterSnapshot } from '../../../lib/fleet/nodes';
import { clientsServed } from '../../../lib/fleet/resources';
import type { Addressed, FleetContext, FleetRoute } from '../../../lib/fleet/route';
import { assignmentSchema, technicianNameSchema } from '../../../lib/fleet/technicians';

// Issue 8, "Fleet scope and its audit": what a technician sees of a gateway serving several
// clients, what a lock of it needs, where refusals are filed and how his audit view reads them.

const NOW = Date.parse('2026-11-21T12:00:00Z');
const GW = 'gw-shared';
const desktop = (name: string, code: string | null) => ({ kind: 'windows_desktop', metadata: { name, ...(code ? { labels: { client_code: code } } : {}) }, spec: { addr: `10.0.0.${name.length}:3389`, domain: 'corp.local', host_id: GW, non_ad: false } });
const snapshot = (desktops: unknown[]): ClusterSnapshot => ({
  instances: [{ kind: 'instance', metadata: { name: GW }, spec: { version: '18.4.2', services: ['WindowsDesktop'], hostname: 'shared-gw', last_seen: '2026-11-21T11:59:00Z' } }],
  desktopServices: [],
  desktops,
  locks: [],
});
const shared = () => buildProxies(snapshot([desktop('acme-dc01', 'acme'), desktop('acme-app01', 'acme'), desktop('globex-ws01', 'globex')]), NOW, { desktops: true }).proxies[0];

const tech = (username: string, clients: Record<string, Level>): FleetAccess =>
  makeAccess({ username, method: 'access', admin: false, roles: [] }, { all: false, clients: Object.entries(clients).map(([code, level]) => ({ code, level, sources: ['assignment' as const] })) });
const admin = makeAccess({ username: 'msp-admin', method: 'access', admin: true, roles: [] }, { all: true });

describe('a gateway serving desktops of several clients', () => {
  it('takes its clients from its desktops: no single client, shared', () => {
    expect(shared()).toMatchObject({ clientCode: null, clientCodes: ['acme', 'globex'], shared: true, windowsServers: 3 });
  });
  it("shows a technician only his clients' desktops, counted as such (detail, list, CSV)", () => {
    const p = proxyInScope(shared(), new Set(['acme']))!;
    expect(p).toMatchObject({ clientCode: 'acme', clientCodes: ['acme'], windowsServers: 2 });
    const names = new Map([['acme', 'Acme'], ['globex', 'Globex']]);
    const detail = nodeDetail(p, names, {});
    expect(detail.desktops.map((d) => d.name)).toEqual(['acme-dc01', 'acme-app01']);
    expect(JSON.stringify(detail)).not.toMatch(/globex/i);
    const list = listNodes([p], { all: false }, names);
    expect(list.nodes[0]).toMatchObject({ clientCode: 'acme', windowsServers: 2 });
    const { csv, coverage } = inventoryCsv(list.nodes, new Map([[p.id, p]]), names);
    expect(csv).not.toMatch(/globex/i);
    expect([...coverage]).toEqual([['acme', { lines: 2, proxies: 1 }]]);
  });
  it('shows a technician of both clients both parts, and an administrator everything', () => {
    expect(proxyInScope(shared(), new Set(['acme', 'globex']))!.desktops).toHaveLength(3);
    expect(proxyInScope(shared(), undefined)!.desktops).toHaveLength(3);
    expect(proxyInScope(shared(), new Set(['initech']))).toBeUndefined();
  });
  it('hides an unlabelled desktop from technicians, and counts the gateway as shared', () => {
    const p = buildProxies(snapshot([desktop('acme-dc01', 'acme'), desktop('mystery', null)]), NOW, { desktops: true }).proxies[0];
    expect(p).toMatchObject({ clientCode: 'acme', clientCodes: ['acme'], shared: true });
    expect(clientsServed(p)).toEqual(['acme', null]);
    expect(proxyInScope(p, new Set(['acme']))!.desktops.map((d) => d.name)).toEqual(['acme-dc01']);
  });
  it('a gateway of one client is not shared and is shown whole', () => {
    const p = buildProxies(snapshot([desktop('acme-dc01', 'acme')]), NOW).proxies[0];
    expect(p.shared).toBe(false);
    expect(proxiesInScope([p], new Set(['acme']))[0]).toBe(p);
  });
  it('writes each desktop line under its own client in the administrator CSV, filed per client', () => {
    const p = shared();
    const rows = listNodes([p], { all: false }, new Map()).nodes;
    const { csv, coverage } = inventoryCsv(rows, new Map([[p.id, p]]), new Map());
    expect(csv.trimEnd().split('\r\n').slice(1).map((l) => l.split(',')[0])).toEqual(['acme', 'acme', 'globex']);
    expect(Object.fromEntries(coverage)).toEqual({ acme: { lines: 2, proxies: 1 }, globex: { lines: 1, proxies: 1 } });
  });
});

describe('the guard on a resource of several clients', () => {
  const route = (level: Level): FleetRoute => ({ method: 'POST', path: '/api/nodes/{id}/lock', summary: '', access: 'client', level, resource: async () => addressed, responses: {}, handle: async () => ({}) });
  let addressed: Addressed | undefined;
  const decide = async (access: FleetAccess, level: Level, codes: Array<string | null>) => {
    addressed = { clientCode: codes.length === 1 ? codes[0] : null, ...(codes.length > 1 ? { clientCodes: codes } : {}), resource: {} };
    const rows: any[] = [];
    const ctx = { rt: { audit: { append: async (r: any) => void rows.push(r) } }, access, actor: { name: access.identity.username }, correlationId: 'c-1', route: `POST /api/nodes/{id}/${level}` } as unknown as FleetContext;
    const outcome = await guardRoute(route(level), ctx).then(
      () => 'allowed',
      (e) => `${e.status} ${e.code}`,
    );
    return { outcome, rows };
  };
  it.each([
    ['an operator of one of them', { acme: 'operator' }, ['acme', 'globex'], '403 client_scope'],
    ['a viewer of one, operator of the other', { acme: 'viewer', globex: 'operator' }, ['acme', 'globex'], '403 insufficient_level'],
    ['a viewer of both', { acme: 'viewer', globex: 'viewer' }, ['acme', 'globex'], '403 insufficient_level'],
    ['an operator of both', { acme: 'operator', globex: 'operator' }, ['acme', 'globex'], 'allowed'],
    ['an operator of its client, beside an unlabelled desktop', { acme: 'operator' }, ['acme', null], '403 client_scope'],
    ['an operator of neither', { initech: 'operator' }, ['acme', 'globex'], '404 not_found'],
  ] as const)('a lock by %s: %s', async (_n, clients, codes, expected) => {
    const { outcome, rows } = await decide(tech('t', clients as Record<string, Level>), 'operator', [...codes]);
    expect(outcome).toBe(expected);
    if (expected !== 'allowed') expect(rows).toEqual([expect.objectContaining({ event: 'auth.forbidden', details: expect.objectContaining({ clients: [...codes] }) })]);
  });
  it('lets an administrator lock it, and a viewer of one client read it', async () => {
    expect((await decide(admin, 'operator', ['acme', 'globex', null])).outcome).toBe('allowed');
    expect((await decide(tech('t', { acme: 'viewer' }), 'viewer', ['acme', 'globex'])).outcome).toBe('allowed');
  });
  it("files a refusal under the caller's scope, never under the target's client", async () => {
    const { rows } = await decide(tech('alice', { acme: 'operator' }), 'operator', ['acme', 'globex']);
    expect(rows[0]).toMatchObject({ client: 'acme', reason: 'client_scope' });
    const probe = await decide(tech('carol', { initech: 'operator' }), 'viewer', ['globex']);
    expect(probe.rows[0]).toMatchObject({ client: 'initech', reason: 'out_of_scope', details: { client: 'globex' } });
  });
});

describe('where a refusal is filed', () => {
  it.each([
    ['a target inside his scope', tech('t', { acme: 'viewer' }), ['acme'], 'acme'],
    ['a target outside, one client in scope', tech('t', { acme: 'operator' }), ['globex'], 'acme'],
    ['a target outside, several clients in scope', tech('t', { acme: 'viewer', initech: 'viewer' }), ['globex'], undefined],
    ['no target (unknown id), one client', tech('t', { initech: 'viewer' }), [null], 'initech'],
    ['no scope at all', tech('t', {}), ['globex'], undefined],
    ['an administrator', admin, ['globex'], 'globex'],
  ] as const)('%s', (_n, access, targets, filed) => expect(refusalFiling(access, [...targets])).toBe(filed));
  it('files a refused sign-in under no client', () => expect(refusalFiling(undefined, ['acme'])).toBeUndefined());
});

describe("a technician's audit view", () => {
  const row = (over: Partial<AuditEntry>): AuditEntry => ({ seq: 1, at: 'x', id: 'i', event: 'auth.forbidden', outcome: 'denied', actor: { name: 'alice', provider: 'access' }, correlationId: 'c', ...over });
  it('reads an out-of-scope refusal exactly like an unknown id', () => {
    const visible = new Set(['acme']);
    const hidden = redactForTechnician(row({ reason: 'out_of_scope', client: 'acme', details: { route: 'GET /api/nodes/{id}', requiredLevel: 'viewer', client: 'globex' } }), visible);
    const unknown = redactForTechnician(row({ reason: 'not_found', client: 'acme', details: { route: 'GET /api/nodes/{id}', requiredLevel: 'viewer', client: null } }), visible);
    expect(hidden).toEqual(unknown);
  });
  it('reads rows filed before the fix (under the target client) the same way', () => {
    const visible = new Set(['acme']);
    const old = redactForTechnician(row({ reason: 'out_of_scope', client: 'globex', details: { route: 'GET /api/nodes/{id}', requiredLevel: 'viewer', client: 'globex' } }), visible);
    const unknown = redactForTechnician(row({ reason: 'not_found', details: { route: 'GET /api/nodes/{id}', requiredLevel: 'viewer', client: null } }), visible);
    expect(old).toEqual(unknown);
  });
  it('names no client outside his scope: details client, from, clients', () => {
    const r = redactForTechnician(row({ event: 'console.update', outcome: 'success', client: 'acme', details: { from: 'globex', fields: ['clientCode'] } }), new Set(['acme']));
    expect(r.details).toEqual({ from: null, fields: ['clientCode'] });
    const s = redactForTechnician(row({ reason: 'client_scope', client: 'acme', details: { client: null, clients: ['acme', 'globex'] } }), new Set(['acme']));
    expect(JSON.stringify(s)).not.toContain('globex');
    const both = redactForTechnician(row({ reason: 'client_scope', client: 'acme', details: { client: null, clients: ['acme', 'globex', null] } }), new Set(['acme', 'globex']));
    expect(both.details!.clients).toEqual(['acme', 'globex']);
  });
});

describe('auto-update groups', () => {
  const groups = ['canary', 'clients', 'client-acme', 'client-globex', 'client-acme-2'];
  it("shows a technician only his clients' client-<code> groups, never shared ones with fleet-wide counts", () => {
    expect(groups.filter(autoUpdateGroupVisible(new Set(['acme'])))).toEqual(['client-acme']);
    expect(groups.filter(autoUpdateGroupVisible(new Set()))).toEqual([]);
  });
  it('shows an administrator every group', () => expect(groups.filter(autoUpdateGroupVisible(undefined))).toEqual(groups));
});

describe('inputs that used to throw or slip through', () => {
  it.each(['', ' ', 'x', 'https://', 'https://[::1', '\ud800', 'javascript:alert(1)', 'http://acme.test'])('refuses console URL %j with a validation error, never a throw', (url) => {
    expect(() => consoleUpdateSchema.safeParse({ url })).not.toThrow();
    expect(consoleUpdateSchema.safeParse({ url }).success).toBe(false);
    expect(consoleCreateSchema.safeParse({ clientCode: 'acme', url, token: 't'.repeat(20) }).success).toBe(false);
  });
  it.each([
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate', 'tech-\udc00'],
    ['an empty name', ''],
    ['whitespace only', '   '],
    ['a no-break space only', '\u00a0'],
    ['a right-to-left override', 'tech-\u202eecila'],
    ['a zero-width space', 'tech\u200b-alice'],
    ['a NUL', 'tech\u0000'],
    ['a DEL', 'tech\u007f'],
    ['257 characters', 'a'.repeat(257)],
  ])('refuses a technician name with %s', (_n, username) => {
    expect(technicianNameSchema.safeParse(username).success).toBe(false);
    expect(assignmentSchema.safeParse({ username, clients: [] }).success).toBe(false);
  });
  it.each(['tech-alice', 'Tech-Alice', 'tech-😀', 'José Müller', 'DOMAIN\\user', 'a'.repeat(256)])('accepts the technician name %j', (username) => {
    expect(technicianNameSchema.parse(username)).toBe(username);
  });
});

describe('access-platform JWT lifetime', () => {
  let jwks: JwksResolver;
  let key: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    key = pair.privateKey;
    jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(pair.publicKey)), alg: 'RS256', kid: 'k' }] }) as unknown as JwksResolver;
  });
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (times: { exp?: number; nbf?: number }) => {
    const jwt = new SignJWT({ username: 'alice', roles: ['fleet-admin'] }).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuedAt();
    if (times.exp !== undefined) jwt.setExpirationTime(times.exp);
    if (times.nbf !== undefined) jwt.setNotBefore(times.nbf);
    return jwt.sign(key);
  };
  it.each([
    ['without exp', {}],
    ['with exp an hour ago', { exp: -3600 }],
    ['with exp 31 s ago (past the 30 s skew)', { exp: -31 }],
    ['with nbf in an hour', { exp: 7200, nbf: 3600 }],
    ['with nbf 31 s ahead', { exp: 3600, nbf: 31 }],
  ])('refuses a token %s', async (_n, rel: { exp?: number; nbf?: number }) => {
    const token = await sign({ exp: rel.exp === undefined ? undefined : now() + rel.exp, nbf: rel.nbf === undefined ? undefined : now() + rel.nbf });
    await expect(verifyPlatformToken(token, jwks, {})).rejects.toThrow();
  });
  it.each([
    ['expiring in 5 minutes', { exp: 300 }],
    ['expired 10 s ago (inside the skew)', { exp: -10 }],
    ['with nbf 10 s ahead (inside the skew)', { exp: 300, nbf: 10 }],
  ])('accepts a token %s', async (_n, rel: { exp?: number; nbf?: number }) => {
    const token = await sign({ exp: now() + rel.exp!, nbf: rel.nbf === undefined ? undefined : now() + rel.nbf });
    await expect(verifyPlatformToken(token, jwks, {})).resolves.toEqual({ username: 'alice', roles: ['fleet-admin'], traits: {} });
  });
  it('refuses a local administrator token without exp, even correctly signed', async () => {
    const master = randomBytes(32);
    const { token } = await signLocalToken(master, 'admin', 1, 60);
    await expect(verifyLocalToken(master, token)).resolves.toEqual({ username: 'admin', epoch: 1 });
    const { createHmac } = await import('node:crypto');
    const k = createHmac('sha256', master).update('hdc-fleet/local-admin-token/v1').digest();
    const noExp = await new SignJWT({ ep: 1 }).setProtectedHeader({ alg: 'HS256' }).setIssuer('hdc-fleet-local').setAudience('hdc-fleet-local').setSubject('admin').setIssuedAt().sign(k);
    await expect(verifyLocalToken(master, noExp)).rejects.toThrow();
  });
});
