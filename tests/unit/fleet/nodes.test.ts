import fs from 'node:fs';
import path from 'node:path';
import { buildProxies, kindOf, networkStatus, parseTimestamp, proxiesInScope, proxyInScope, versionState, type ClusterSnapshot, type Desktop, type Proxy } from '../../../lib/fleet/nodes';
import { clientsServed } from '../../../lib/fleet/resources';
import semver from 'semver';
import { listNodes, connectUrl, nodeRow, type NodeRow } from '../../../lib/fleet/node-list';
import { lockRefusal } from '../../../lib/fleet/locks';

// The fixture scenario of ../shared/reference/teleport/README.md, at its "now".
const FIX = path.resolve(__dirname, '../../../local/fleet/fixtures');
const read = (f: string) => JSON.parse(fs.readFileSync(path.join(FIX, f), 'utf8'));
const NOW = Date.parse('2026-11-21T12:00:00Z');
const snap: ClusterSnapshot = {
  instances: read('inventory_ls.json'),
  desktopServices: read('windows_desktop_service.json'),
  desktops: read('windows_desktops.json'),
  locks: read('locks.json'),
};
const byHost = () => new Map(buildProxies(snap, NOW).proxies.map((p) => [p.hostname, p]));

describe('proxies from the cluster CLI fixtures', () => {
  it('gives each agent the status of the scenario table', () => {
    const p = byHost();
    // lab-agent01 has only a node record: the identity role reads no nodes, so it is not listed
    expect([...p.keys()].sort()).toEqual(['acme-gw01', 'acme-gw02', 'globex-gw01', 'globex-gw02', 'teleport-main']);
    expect(p.get('teleport-main')).toMatchObject({ status: 'online', kind: 'auth', clientCode: null, locked: false }); // future date = recent
    expect(p.get('acme-gw01')).toMatchObject({ status: 'online', clientCode: 'acme', locked: false, windowsServers: 2 }); // its lock expired
    expect(p.get('acme-gw02')).toMatchObject({ status: 'locked', networkStatus: 'slow', clientCode: 'acme', updateNeeded: true, windowsServers: 1 });
    expect(p.get('acme-gw02')!.locks.map((l) => l.name).sort()).toEqual(['7d3e1b5a-9c42-4f08-b6d1-25e8a0c94f17', 'acme-gw02-decommission']);
    expect(p.get('globex-gw01')).toMatchObject({ status: 'online', clientCode: 'globex', updateNeeded: true, incompatible: false, kind: 'gateway' });
    expect(p.get('globex-gw02')).toMatchObject({ status: 'unreachable', kind: 'gateway', updateNeeded: true, incompatible: true });
    expect(p.get('globex-gw02')).toMatchObject({ clientCode: null, clientCodes: [], windowsServers: 0 }); // no heartbeat, no desktop: no client
  });
  it('takes the cluster version from the Auth service and ignores user locks', () => {
    const { clusterVersion, proxies } = buildProxies(snap, NOW);
    expect(clusterVersion).toBe('18.4.2');
    expect(proxies.flatMap((p) => p.locks).some((l) => l.name === 'b9f4d216-0a7e-4c35-8e1b-53d6c2a90f8e')).toBe(false);
  });
  it('folds the CLI\'s JSON texts as readSnapshot hands them (each list parsed as it is folded) to the same proxies as parsed lists; a text that is no JSON array is access_unavailable', () => {
    const text = (f: string) => fs.readFileSync(path.join(FIX, f), 'utf8');
    const fromTexts = buildProxies({ instances: text('inventory_ls.json'), desktopServices: text('windows_desktop_service.json'), desktops: text('windows_desktops.json'), locks: text('locks.json') }, NOW);
    expect(fromTexts).toEqual(buildProxies(snap, NOW));
    expect(() => buildProxies({ ...snap, desktops: '<html>' }, NOW)).toThrow(expect.objectContaining({ code: 'access_unavailable' }));
  });
  it('skips malformed items instead of failing (the CLI JSON faces the outside)', () => {
    const junk: unknown[] = [null, 1, 'x', [], {}, { metadata: 'x' }, { metadata: { name: 5 } }, { metadata: { name: 'a' }, spec: null }, { metadata: { name: 'b' }, spec: { services: 'Node', last_seen: 7 } }];
    const { proxies } = buildProxies({ instances: junk, desktopServices: junk, desktops: junk, locks: junk }, NOW);
    expect(proxies.map((p) => p.id)).toEqual(['b']);
    expect(proxies[0].status).toBe('unreachable');
  });
  it("takes an inventoried agent's services from the inventory, and a desktop service's alone from its listing (even listed twice)", () => {
    const svc = (name: string) => ({ kind: 'windows_desktop_service', metadata: { name }, spec: { hostname: `${name}-host`, teleport_version: '18.4.2' } });
    const { proxies } = buildProxies({ instances: [{ metadata: { name: 'n' }, spec: { services: ['Node'], hostname: 'n-host' } }], desktopServices: [svc('n'), svc('w'), svc('w')], desktops: [], locks: [] }, NOW);
    expect(proxies.map((p) => [p.id, p.services, p.kind, p.hostname, p.version])).toEqual([
      ['n', ['Node'], 'ssh', 'n-host', '18.4.2'],
      ['w', ['WindowsDesktop'], 'gateway', 'w-host', '18.4.2'],
    ]);
  });
  it('ignores a lock whose expiry cannot be read rather than locking forever', () => {
    const locks = [{ metadata: { name: 'l' }, spec: { target: { server_id: 'n' }, expires: 'soon' } }];
    const { proxies } = buildProxies({ instances: [{ metadata: { name: 'n' }, spec: { services: ['Node'] } }], desktopServices: [], desktops: [], locks }, NOW);
    expect(proxies[0].locked).toBe(false);
  });
});

describe('displayed status windows', () => {
  const ago = (ms: number) => new Date(NOW - ms).toISOString();
  it.each([
    [ago(0), 'online'],
    [ago(5 * 60_000), 'online'],
    [ago(5 * 60_000 + 1), 'slow'],
    [ago(20 * 60_000), 'slow'],
    [ago(20 * 60_000 + 1), 'unreachable'],
    [new Date(NOW + 3 * 3600_000).toISOString(), 'online'],
    [null, 'unreachable'],
    ['yesterday', 'unreachable'],
    ['', 'unreachable'],
  ])('%s → %s', (seen, status) => expect(networkStatus(seen, NOW)).toBe(status));
});

describe('versions', () => {
  it.each([
    ['18.4.2', '18.4.2', false, false],
    ['18.4.1', '18.4.2', true, false],
    ['17.7.3', '18.4.2', true, false], // one major behind: tolerated
    ['16.5.12', '18.4.2', true, true], // two behind: incompatible
    ['18.5.0', '18.4.2', false, true], // ahead: never tolerated
    ['v18.4.1', '18.4.2', true, false],
    ['garbage', '18.4.2', false, false],
    ['18.4.1', null, false, false],
  ])('agent %s on cluster %s', (agent, cluster, updateNeeded, incompatible) => {
    expect(versionState(agent, cluster as string | null)).toEqual({ updateNeeded, incompatible });
  });
});

describe('kinds and lock refusals', () => {
  it.each([
    [['Auth', 'Proxy', 'Node'], 'auth', 'protected_service'],
    [['Proxy'], 'proxy', 'protected_service'],
    [['Node', 'WindowsDesktop'], 'gateway', undefined],
    [['Node'], 'ssh', undefined],
    [['App'], 'app', undefined],
    [['Kube'], 'other', 'unsupported_kind'],
    [['Node', 'Kube'], 'other', 'unsupported_kind'],
    [[], 'other', 'unsupported_kind'],
  ])('%j is %s', (services, kind, refusal) => {
    const k = kindOf(services as string[]);
    expect(k).toBe(kind);
    expect(lockRefusal({ services: services as string[], kind: k })).toBe(refusal);
  });
});

describe('the proxies table', () => {
  const { proxies } = buildProxies(snap, NOW);
  const names = new Map([['acme', 'Acme Industries'], ['globex', 'Globex SA']]);
    it('shows client proxies only unless all nodes are asked, and counts what it can show', () => {
    const out = listNodes(proxies, { all: false }, names);
    expect(out.nodes.map((n) => n.hostname)).toEqual(['acme-gw01', 'acme-gw02', 'globex-gw01', 'globex-gw02']);
    expect(out.summary).toEqual({ total: 4, online: 2, slow: 0, unreachable: 1, locked: 1, outdated: 3 });
    expect(listNodes(proxies, { all: true }, names).summary.total).toBe(5);
  });
  it('never counts a row out of scope', () => {
    const out = listNodes(proxiesInScope(proxies, new Set(['globex'])), { all: true }, names);
    expect(out.nodes.map((n) => n.hostname)).toEqual(['globex-gw01']);
    expect(out.summary.total).toBe(1);
  });
  it.each([
    ['online', ['acme-gw01', 'globex-gw01']],
    ['down', ['globex-gw02']],
    ['locked', ['acme-gw02']],
    ['outdated', ['acme-gw02', 'globex-gw01', 'globex-gw02']],
  ] as const)('?status=%s', (status, hosts) => {
    const out = listNodes(proxies, { all: false, status }, names);
    expect(out.nodes.map((n) => n.hostname)).toEqual(hosts);
    expect(out.summary.total).toBe(4); // the cards keep describing the table, not the filter
  });
  it('searches client name, code or host name, and filters kinds', () => {
    expect(listNodes(proxies, { all: false, q: 'globex sa' }, names).nodes.map((n) => n.hostname)).toEqual(['globex-gw01']);
    expect(listNodes(proxies, { all: false, q: 'ACME' }, names).nodes).toHaveLength(2);
    expect(listNodes(proxies, { all: true, q: 'teleport-' }, names).nodes.map((n) => n.hostname)).toEqual(['teleport-main']);
    expect(listNodes(proxies, { all: true, kind: 'auth' }, names).nodes.map((n) => n.hostname)).toEqual(['teleport-main']);
  });
  it('sorts and groups', () => {
    expect(listNodes(proxies, { all: false, sort: 'desktops', dir: 'desc' }, names).nodes[0].hostname).toBe('acme-gw01');
    expect(listNodes(proxies, { all: false, sort: 'version', dir: 'asc' }, names).nodes[0].hostname).toBe('globex-gw02');
    expect(listNodes(proxies, { all: false, sort: 'status' }, names).nodes.map((n) => n.status)).toEqual(['online', 'online', 'unreachable', 'locked']);
    const g = listNodes(proxies, { all: true, group: 'client' }, names).groups!;
    expect(g.map((x) => [x.clientCode, x.count])).toEqual([['acme', 2], ['globex', 1], [null, 2]]);
  });
});

describe('Connect links', () => {
  it('are hidden while the proxy address or cluster name is unknown or a placeholder', () => {
    expect(connectUrl('teleport.msp.test:443', 'msp', 'acme-dc01')).toBe('https://teleport.msp.test:443/web/cluster/msp/resources?kinds=windows_desktop&search=acme-dc01');
    expect(connectUrl(undefined, 'msp', 'x')).toBeNull();
    expect(connectUrl('teleport.example.com:443', 'msp', 'x')).toBeNull();
    expect(connectUrl('teleport.msp.test', '<cluster>', 'x')).toBeNull();
  });
});

describe('desktops counted (the list) or materialized (detail, CSV): issue 28', () => {
  // a shared gateway (three clients in no order, an unlabelled desktop), a gateway of one client,
  // one of unlabelled desktops only, one without desktops
  const desk = (name: string, host: string, code?: string) => ({ kind: 'windows_desktop', metadata: { name, ...(code === undefined ? {} : { labels: { client_code: code } }) }, spec: { addr: `${name}:3389`, domain: 'corp.local', host_id: host, non_ad: false } });
  const agent = (name: string) => ({ kind: 'instance', metadata: { name }, spec: { version: '18.4.2', services: ['WindowsDesktop'], hostname: name, last_seen: '2026-11-21T11:59:00Z' } });
  const mixed: ClusterSnapshot = {
    instances: ['shared', 'single', 'nobody', 'empty'].map(agent),
    desktopServices: [],
    desktops: [desk('g1', 'shared', 'globex'), desk('a1', 'shared', 'acme'), desk('m1', 'shared'), desk('i1', 'shared', 'initech'), desk('a2', 'shared', 'acme'), desk('e1', 'shared', ''), desk('s1', 'single', 'acme'), desk('s2', 'single', 'acme'), desk('n1', 'nobody')],
    locks: [],
  };
  const withoutDesktops = ({ desktops: _, ...p }: Proxy) => p;
  /** what the counts must say, read from the desktops themselves */
  const fromDesktops = (desktops: Desktop[]) => {
    const codes = [...new Set(desktops.map((d) => d.clientCode).filter((c): c is string => c !== null))].sort();
    const unlabelled = desktops.filter((d) => d.clientCode === null).length;
    return { clientCodes: codes, clientDesktops: codes.map((c) => desktops.filter((d) => d.clientCode === c).length), windowsServers: desktops.length, clientCode: codes.length === 1 ? codes[0] : null };
  };
  const scopes = [undefined, new Set(['acme']), new Set(['globex']), new Set(['acme', 'globex']), new Set(['initech', 'acme', 'globex']), new Set(['umbrella'])];

  it.each([['the fixtures', snap], ['a shared gateway with an unlabelled desktop', mixed]] as const)('gives the same proxies both ways (%s), for every scope', (_, s) => {
    const counted = buildProxies(s, NOW).proxies;
    const full = buildProxies(s, NOW, { desktops: true }).proxies;
    expect(counted.every((p) => !('desktops' in p))).toBe(true); // the list never reads them
    expect(counted).toEqual(full.map(withoutDesktops));
    for (const visible of scopes) {
      const a = proxiesInScope(counted, visible);
      const b = proxiesInScope(full, visible);
      expect(a).toEqual(b.map(withoutDesktops));
      expect(a.map(clientsServed)).toEqual(b.map(clientsServed));
      for (const p of b) expect(p).toMatchObject(fromDesktops(p.desktops));
    }
  });
  it('counts a shared gateway per client, its unlabelled desktops apart, and a technician only his part', () => {
    const byName = new Map(buildProxies(mixed, NOW).proxies.map((p) => [p.id, p]));
    const p = byName.get('shared')!;
    expect(p).toMatchObject({ clientCode: null, clientCodes: ['acme', 'globex', 'initech'], clientDesktops: [2, 1, 1], unlabelledDesktops: 2, shared: true, windowsServers: 6 });
    expect(clientsServed(p)).toEqual(['acme', 'globex', 'initech', null]);
    expect(proxyInScope(p, new Set(['acme']))).toMatchObject({ clientCode: 'acme', clientCodes: ['acme'], clientDesktops: [2], unlabelledDesktops: 0, shared: true, windowsServers: 2 });
    expect(proxyInScope(p, new Set(['globex', 'initech']))).toMatchObject({ clientCode: null, clientCodes: ['globex', 'initech'], windowsServers: 2 });
    expect(proxyInScope(p, new Set(['umbrella']))).toBeUndefined();
    expect(byName.get('single')).toMatchObject({ clientCode: 'acme', clientCodes: ['acme'], clientDesktops: [2], shared: false, windowsServers: 2 });
    expect(proxyInScope(byName.get('single')!, new Set(['acme']))).toBe(byName.get('single'));
    expect(byName.get('nobody')).toMatchObject({ clientCode: null, clientCodes: [], unlabelledDesktops: 1, shared: false, windowsServers: 1 });
    expect(proxyInScope(byName.get('nobody')!, new Set(['acme']))).toBeUndefined();
    expect(byName.get('empty')).toMatchObject({ clientCodes: [], clientDesktops: [], unlabelledDesktops: 0, windowsServers: 0 });
  });
  it("hands an administrator's list over as it is (no copy per request)", () => {
    const { proxies } = buildProxies(mixed, NOW);
    expect(proxiesInScope(proxies, undefined)).toBe(proxies);
  });
});

describe('the table order (issue 28: rows sorted by numeric keys instead of a comparison per pair)', () => {
  // the comparison the table was sorted with before: the order must stay exactly this one
  const STATUS = { online: 0, slow: 1, unreachable: 2, locked: 3 } as const;
  const version = (v: string | null) => (v ? semver.valid(semver.clean(v) ?? v) : null);
  const byClientThenHost = (a: NodeRow, b: NodeRow) =>
    (a.clientName ?? a.clientCode ?? '\uffff').localeCompare(b.clientName ?? b.clientCode ?? '\uffff') || a.hostname.localeCompare(b.hostname) || a.id.localeCompare(b.id);
  const primaries = {
    client: byClientThenHost,
    status: (a: NodeRow, b: NodeRow) => STATUS[a.status] - STATUS[b.status],
    version: (a: NodeRow, b: NodeRow) => {
      const [va, vb] = [version(a.version), version(b.version)];
      return va && vb ? semver.compare(va, vb) : va ? 1 : vb ? -1 : 0;
    },
    desktops: (a: NodeRow, b: NodeRow) => a.windowsServers - b.windowsServers,
  };
  const reference = (rows: NodeRow[], sort: keyof typeof primaries, dir: 1 | -1) => [...rows].sort((a, b) => primaries[sort](a, b) * dir || byClientThenHost(a, b));

  // names localeCompare orders apart from code points: case, accents, a decomposed é equal to the
  // composed one, digits, a code without a name; hosts repeated across clients and within one
  const codes = ['acme', 'Acme', 'ACME', 'b', 'zulu', 'émile', 'e\u0301mile', 'emile', 'Émile', '10', '9', 'nameless', ''];
  const names = new Map(codes.filter((c) => c !== 'nameless').map((c, i) => [c, i % 3 === 0 ? c.toUpperCase() : c]));
  names.set('émile', '\u00c9mile').set('e\u0301mile', 'E\u0301mile'); // two clients, names localeCompare calls equal
  let seed = 7;
  const pick = <T,>(xs: readonly T[]): T => xs[((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 16) % xs.length]; // the LCG's high bits
  const proxies: Proxy[] = Array.from({ length: 300 }, (_, i) => {
    const clientCodes = pick([[], [pick(codes)], [pick(codes)], [pick(codes), pick(codes)].sort()]);
    const status = pick(['online', 'slow', 'unreachable', 'locked'] as const);
    return {
      id: pick([`id-${i % 40}`, `ID-${i % 40}`, `\u00edd-${i % 40}`, `i\u0301d-${i % 40}`]), // ties: equal rows, and í composed or not
      hostname: pick(['gw-1', 'GW-1', 'gw-10', 'gw-9', 'gẃ-2', `h-${i % 17}`, '']),
      kind: pick(['gateway', 'ssh'] as const),
      services: [],
      clientCode: clientCodes.length === 1 ? clientCodes[0] : null,
      clientCodes,
      clientDesktops: clientCodes.map(() => 1),
      unlabelledDesktops: 0,
      shared: clientCodes.length > 1,
      version: pick(['18.4.2', 'v18.4.2', '17.7.3', '18.10.0', 'junk', null]),
      lastSeen: `row ${i}`, // no sort reads it: tells equal rows apart
      networkStatus: status === 'locked' ? 'online' : status,
      locked: status === 'locked',
      status,
      updateNeeded: false,
      incompatible: false,
      windowsServers: pick([0, 1, 2, 3, 10, 250]),
      locks: [],
    };
  });
  // equal rows of two clients localeCompare calls equal, listed against the order their clients were first seen
  [['émile', 'first'], ['e\u0301mile', 'dup'], ['émile', 'dup']].forEach(([code, host], k) =>
    Object.assign(proxies[k], { clientCode: code, clientCodes: [code], clientDesktops: [1], shared: false, hostname: host, id: host, status: 'online', networkStatus: 'online', locked: false, version: '18.4.2', windowsServers: 1 }),
  );
  const rows = proxies.map((p) => nodeRow(p, names));

  it.each(['client', 'status', 'version', 'desktops'] as const)('sorts by %s as the comparison did, both ways, ties in their listed order', (sort) => {
    for (const dir of [1, -1] as const) {
      const got = listNodes(proxies, { all: true, sort, dir: dir === 1 ? 'asc' : 'desc' }, names).nodes;
      const want = reference(rows, sort, dir);
      expect(got.length).toBe(300);
      expect(got.map((r) => r.lastSeen)).toEqual(want.map((r) => r.lastSeen)); // each row's own place, equal rows too
      expect(got).toEqual(want);
    }
  });
  it('groups by client in the client order', () => {
    const groups = listNodes(proxies, { all: true, sort: 'status', group: 'client' }, names).groups!;
    const expected = new Map<string, string[]>();
    for (const r of reference(reference(rows, 'status', 1), 'client', 1)) expected.set(r.clientCode ?? '', [...(expected.get(r.clientCode ?? '') ?? []), r.id]);
    expect(groups.map((g) => [g.clientCode ?? '', g.nodeIds])).toEqual([...expected.entries()]);
  });
});

describe('timestamps read as Date.parse reads them (issue 28: the CLI\'s form without the generic parser)', () => {
  it.each([
    '2026-11-21T11:59:00Z', '2026-11-21T11:59:00.5Z', '2026-11-21T11:59:00.12Z', '2026-11-21T11:59:00.123512734Z', '2026-11-21T11:59:00.9999999999Z',
    '2024-02-29T23:59:59.999Z', '2026-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-11-21T24:00:00Z', '2026-11-21T11:59:60Z',
    '2026-11-21 11:59:00Z', '2026-11-21T11:59:00z', '2026-11-21T11:59:00+00:00', '+002026-11-21T11:59:00Z', '0099-01-01T00:00:00Z', '1969-12-31T23:59:59.999Z',
    '1970-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2026-11-21T11:59:00.Z', '2026-11-21T11:59:00.-12Z', '2026-11-21T11:59:00.1e2Z', '２026-11-21T11:59:00Z', 'yesterday', '',
  ])('%j', (s) => expect(parseTimestamp(s)).toBe(Date.parse(s)));
  it('agrees with Date.parse on 50,000 generated timestamps, valid or not', () => {
    let seed = 11;
    const r = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 8) % k;
    const pad = (x: number, w: number) => String(x).padStart(w, '0');
    const wrong: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      const digits = Array.from({ length: r(12) }, () => r(10)).join('');
      let s = `${pad(r(10) < 8 ? 1960 + r(150) : r(10000), 4)}-${pad(r(15), 2)}-${pad(r(34), 2)}T${pad(r(26), 2)}:${pad(r(62), 2)}:${pad(r(62), 2)}${digits ? '.' + digits : ''}Z`;
      if (r(20) === 0) {
        const at = r(s.length);
        s = s.slice(0, at) + String.fromCharCode(32 + r(95)) + s.slice(at + 1);
      }
      if (!Object.is(parseTimestamp(s), Date.parse(s))) wrong.push(s);
    }
    expect(wrong).toEqual([]);
  });
});
