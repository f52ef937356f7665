import fs from 'node:fs';
import path from 'node:path';
import { buildProxies, kindOf, networkStatus, proxiesInScope, proxyInScope, versionState, type ClusterSnapshot, type Desktop, type Proxy } from '../../../lib/fleet/nodes';
import { clientsServed } from '../../../lib/fleet/resources';
import { listNodes, connectUrl } from '../../../lib/fleet/node-list';
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
