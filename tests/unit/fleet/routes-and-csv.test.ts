import fs from 'node:fs';
import path from 'node:path';
import { fleetRoutes } from '../../../functions/fleet/all-routes';
import { csvCell, inventoryCsv, neutralise } from '../../../lib/fleet/inventory';
import { clientCodeSchema } from '../../../lib/fleet/clients';
import { consoleCreateSchema } from '../../../lib/fleet/consoles';
import { assignmentSchema } from '../../../lib/fleet/technicians';
import { serverlessHttpEvents } from '../../support/serverless-events';

describe('routes and serverless.fleet.yml', () => {
  it('declares every route of every fleet handler, and nothing else', () => {
    const declared = serverlessHttpEvents('serverless.fleet.yml').map((e) => `${e.handler.replace(/\.handler$/, '')} ${e.method} ${e.path}`).sort();
    const defined = Object.entries(fleetRoutes)
      .flatMap(([file, routes]) => routes.map((r) => `functions/fleet/${file} ${r.method} ${r.path}`))
      .concat(['functions/fleet/openapi GET /openapi/v1.json'])
      .sort();
    expect(declared).toEqual(defined);
  });
  it('gives every non-anonymous id route a resolver or an admin rule', () => {
    for (const r of Object.values(fleetRoutes).flat()) {
      if (r.access === 'client') expect(r.resource).toBeDefined();
      if (r.path.startsWith('/api/') && r.path !== '/api/auth/login') expect(r.access).not.toBe('anonymous');
    }
  });
  it('keeps handlers thin (each file under 150 lines, its answers\' declarations aside)', () => {
    const dir = path.resolve(__dirname, '../../../functions/fleet');
    const code = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => !/^\s*(responses|errors): |^import .* from '@lib\/api\//.test(l));
    for (const f of fs.readdirSync(dir)) expect([f, code(f).length < 150]).toEqual([f, true]);
  });
});

describe('inventory CSV', () => {
  it.each(['=HYPERLINK("http://x")', '+1+1', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd'])('neutralises %j', (v) => {
    expect(neutralise(v)).toBe(`'${v}`);
    expect(csvCell(v).replace(/^"/, '').startsWith("'")).toBe(true);
  });
  it('leaves ordinary text alone and quotes separators', () => {
    expect(csvCell('acme-dc01')).toBe('acme-dc01');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell(null)).toBe('');
  });
  it('writes one line per desktop and one for a proxy without desktops', () => {
    const row = (id: string) => ({ id, hostname: id, kind: 'gateway' as const, clientCode: 'acme', clientName: 'Acme', clientCodes: ['acme'], shared: false, version: '18.4.2', lastSeen: null, status: 'online' as const, networkStatus: 'online' as const, locked: false, updateNeeded: false, incompatible: false, windowsServers: 0 });
    const desk = (name: string) => ({ name, addr: '10.0.0.1:3389', domain: 'acme.local', nonAd: false, clientCode: 'acme' });
    const byId = new Map<string, any>([
      ['a', { desktops: [desk('=evil'), desk('b')] }],
      ['c', { desktops: [] }],
    ]);
    const { csv, lines } = inventoryCsv([row('a'), row('c')], byId, new Map([['acme', 'Acme']]));
    expect(lines).toBe(3);
    const out = csv.trimEnd().split('\r\n');
    expect(out[0]).toBe('client_code,client_name,proxy_id,proxy_hostname,proxy_kind,proxy_version,proxy_status,proxy_last_seen,proxy_locked,desktop_name,desktop_addr,desktop_domain');
    expect(out[1]).toContain(",'=evil,");
    expect(out[3]).toMatch(/,c,c,gateway,18.4.2,online,,false,,,$/);
  });
});

describe('input schemas', () => {
  it.each(['acme', 'a', 'acme-2', '0day'])('accepts client code %s', (c) => expect(clientCodeSchema.safeParse(c).success).toBe(true));
  it.each(['Acme', 'acme_2', '-acme', 'ac me', '', 'a'.repeat(64), 'acmé'])('refuses client code %j', (c) => expect(clientCodeSchema.safeParse(c).success).toBe(false));
  it('refuses a console that is not https or carries credentials', () => {
    const base = { clientCode: 'acme', token: 't'.repeat(20) };
    expect(consoleCreateSchema.safeParse({ ...base, url: 'http://acme.test' }).success).toBe(false);
    expect(consoleCreateSchema.safeParse({ ...base, url: 'https://u:p@acme.test' }).success).toBe(false);
    expect(consoleCreateSchema.safeParse({ ...base, url: 'https://acme.test', ca: 'not a pem' }).success).toBe(false);
    expect(consoleCreateSchema.parse({ ...base, url: 'https://acme.test/' }).url).toBe('https://acme.test');
  });
  it('keeps technician user names exact and refuses a client twice', () => {
    expect(assignmentSchema.safeParse({ username: ' alice', clients: [] }).success).toBe(false);
    expect(assignmentSchema.parse({ username: 'Alice', clients: [] }).username).toBe('Alice');
    expect(assignmentSchema.safeParse({ username: 'a', clients: [{ code: 'x', level: 'viewer' }, { code: 'x', level: 'operator' }] }).success).toBe(false);
    expect(assignmentSchema.safeParse({ username: 'a', clients: [{ code: 'x', level: 'admin' }] }).success).toBe(false);
  });
});
