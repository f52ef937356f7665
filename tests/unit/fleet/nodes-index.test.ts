import { buildProxies, kindOf, networkStatus, type Proxy } from '../../../lib/fleet/nodes';
import { ProxyIndex } from '../../../lib/fleet/proxy-index';

// Issue 28: buildProxies finds a proxy by id through ProxyIndex (its own slots, no string hashed in
// full) and derives kind and network status in the inventory's fold. These tests hold both to the
// plain path: a Map, and the fields derived at the end from the final services and heartbeat.

/** A small deterministic generator (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const hex = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
const uuid = (r: () => number) => `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-8${hex(r, 3)}-${hex(r, 12)}`;

/** Ids the index finds hard: all in one slot (same length, first 8 characters and last one), short, non-ASCII, alike but in the middle. */
function oddIds(r: () => number): string[] {
  const sameSlot = Array.from({ length: 40 }, (_, k) => `aaaaaaaa-${String(k).padStart(4, '0')}-z`);
  const middle = Array.from({ length: 10 }, (_, k) => `3f9c2b7e-5d41-4c8a-9a1e-${String(k).padStart(12, '0')}`.replace(/(.)$/, '3'));
  return [...sameSlot, ...middle, 'a', 'b', 'ab', 'ñandú-1', '主机-2', '主机-2 ', 'A', ...Array.from({ length: 30 }, () => uuid(r))];
}

describe('ProxyIndex (issue 28: proxies by id without hashing each id in full)', () => {
  const proxy = (id: string) => ({ id }) as Proxy;

  it.each([0, 3, 5000])('answers as a Map does, grown from %i expected ids, with ids that share a slot, short and non-ASCII ids', (expected) => {
    const r = rng(expected + 1);
    const index = new ProxyIndex<Proxy>(expected);
    const map = new Map<string, Proxy>();
    const ids = [...oddIds(r), ...Array.from({ length: 2000 }, () => uuid(r))];
    for (const id of ids) {
      expect(index.get(id)).toBe(map.get(id));
      if (!map.has(id)) {
        const p = proxy(id);
        map.set(id, p);
        index.add(p);
      }
    }
    expect(index.list).toEqual([...map.values()]); // the order they were added
    const absent = ['aaaaaaaa-9999-z', 'aaaaaaaa-0000-y', '', 'c', '主机-3', uuid(r), `${ids[60]} `, ids[60].slice(1)];
    for (const id of [...ids, ...absent]) expect(index.get(id)).toBe(map.get(id));
    for (const id of absent) expect(index.get(id)).toBeUndefined();
  });

  it('keeps finding every id when all of them share one slot (hostile ids: a few probes, then a Map)', () => {
    const index = new ProxyIndex<Proxy>(4);
    const ids = Array.from({ length: 500 }, (_, k) => `hostile!${String(k).padStart(5, '0')}x`);
    for (const id of ids) index.add(proxy(id));
    for (const id of ids) expect(index.get(id)?.id).toBe(id);
    expect(index.get('hostile!99999x')).toBeUndefined();
    expect(index.list.map((p) => p.id)).toEqual(ids);
  });
});

/** The plain path: the CLI's lists folded with a Map, kind and network status derived at the end (as before issue 28's index). */
function plain(snap: { instances: unknown[]; desktopServices: unknown[]; desktops: unknown[]; locks: unknown[] }, now: number) {
  const o = (v: unknown): Record<string, any> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined);
  const s = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  const byId = new Map<string, { id: string; hostname: string; services: string[]; version: string | null; lastSeen: string | null; counts: Map<string | null, number>; locks: string[] }>();
  const make = (id: string) => {
    const p = { id, hostname: '', services: [] as string[], version: null as string | null, lastSeen: null as string | null, counts: new Map<string | null, number>(), locks: [] as string[] };
    byId.set(id, p);
    return p;
  };
  for (const raw of snap.instances) {
    const id = s(o(o(raw)?.metadata)?.name);
    const spec = o(o(raw)?.spec);
    if (!id || !spec) continue;
    const p = byId.get(id) ?? make(id);
    if (Array.isArray(spec.services)) for (const sv of spec.services) if (typeof sv === 'string' && !p.services.includes(sv)) p.services.push(sv);
    p.hostname = s(spec.hostname) ?? p.hostname;
    p.version = s(spec.version) ?? p.version;
    p.lastSeen = s(spec.last_seen) ?? null;
  }
  for (const raw of snap.desktopServices) {
    const id = s(o(o(raw)?.metadata)?.name);
    const spec = o(o(raw)?.spec);
    if (!id || !spec) continue;
    let p = byId.get(id);
    if (!p) (p = make(id)).services.push('WindowsDesktop');
    if (!p.hostname) p.hostname = s(spec.hostname) ?? '';
    p.version ??= s(spec.teleport_version) ?? null;
  }
  for (const raw of snap.desktops) {
    const spec = o(o(raw)?.spec);
    const p = byId.get(s(spec?.host_id) ?? '');
    const metadata = o(o(raw)?.metadata);
    if (!spec || !p || !s(metadata?.name)) continue;
    const code = s(o(metadata!.labels)?.client_code) ?? null;
    p.counts.set(code, (p.counts.get(code) ?? 0) + 1);
  }
  for (const raw of snap.locks) {
    const target = o(o(o(raw)?.spec)?.target);
    const name = s(o(o(raw)?.metadata)?.name);
    const id = s(target?.server_id) ?? s(target?.node);
    if (id && name) byId.get(id)?.locks.push(name);
  }
  return [...byId.values()].map((p) => {
    const codes = [...p.counts.keys()].filter((c): c is string => c !== null).sort();
    return {
      id: p.id,
      hostname: p.hostname || p.id,
      services: p.services,
      kind: kindOf(p.services),
      networkStatus: networkStatus(p.lastSeen, now),
      version: p.version,
      lastSeen: p.lastSeen,
      clientCodes: codes,
      clientDesktops: codes.map((c) => p.counts.get(c)),
      unlabelledDesktops: p.counts.get(null) ?? 0,
      windowsServers: [...p.counts.values()].reduce((n, k) => n + k, 0),
      locks: p.locks,
    };
  });
}

describe('buildProxies through the index gives the plain path\'s proxies (issue 28)', () => {
  const NOW = Date.parse('2026-11-28T12:00:00Z');
  const SERVICES = [['Node'], ['WindowsDesktop'], ['Node', 'WindowsDesktop'], ['Auth', 'Proxy'], ['Proxy'], ['App', 'Node'], ['Kube'], [], 'Node', [7, 'Db']];

  function snapshot(seed: number) {
    const r = rng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
    const ids = oddIds(r);
    const known = ids.filter(() => r() < 0.7);
    const seen = (k: number) => new Date(NOW - k * 60_000).toISOString();
    const instances: unknown[] = known.map((id) => ({ kind: 'instance', metadata: { name: id }, spec: { services: pick(SERVICES), hostname: r() < 0.9 ? `h-${id}` : undefined, version: pick(['18.4.2', '17.7.3', 'v18.4.2', undefined]), last_seen: pick([seen(1), seen(10), seen(30), 'soon', 7, undefined]) } }));
    // an agent listed twice (its later heartbeat and services count), and items without what the fold needs
    for (const id of known.slice(0, 5)) instances.push({ metadata: { name: id }, spec: { services: ['Auth'], last_seen: seen(r() < 0.5 ? 2 : 50) } });
    instances.push(null, 1, {}, { metadata: { name: 5 }, spec: {} }, { metadata: { name: 'no-spec' } }, { metadata: {}, spec: { services: ['Node'] } });
    const desktopServices: unknown[] = [...ids.filter(() => r() < 0.5), ...ids.slice(0, 3)].map((id) => ({ metadata: { name: id }, spec: { hostname: r() < 0.5 ? `svc-${id}` : '', teleport_version: '18.4.2' } }));
    desktopServices.push({ metadata: { name: '' }, spec: {} }, { spec: { hostname: 'x' } });
    // desktops: of known hosts, of hosts no list has, repeated hosts not adjacent and in runs, missing fields
    const desktops: unknown[] = [];
    for (let i = 0; i < 600; i++) {
      const host = r() < 0.1 ? `gone-${i % 7}` : pick(ids);
      const run = r() < 0.2 ? 1 + Math.floor(r() * 4) : 1;
      for (let k = 0; k < run; k++) {
        const labels = r() < 0.8 ? { client_code: pick(['acme', 'globex', 'initech', '', 'ACME']) } : r() < 0.5 ? {} : undefined;
        desktops.push({ kind: 'windows_desktop', metadata: { name: r() < 0.97 ? `d-${i}-${k}` : '', ...(labels ? { labels } : {}) }, spec: r() < 0.98 ? { host_id: r() < 0.98 ? host : 42, addr: 'x:3389' } : undefined });
      }
    }
    desktops.push(null, { metadata: { name: 'x' } }, { spec: { host_id: ids[0] } });
    const locks: unknown[] = ids.filter(() => r() < 0.2).map((id, i) => ({ metadata: { name: `l${i}` }, spec: { target: i % 2 ? { server_id: id } : { node: id } } }));
    locks.push({ metadata: { name: 'user' }, spec: { target: { user: 'bob' } } }, { metadata: { name: 'gone' }, spec: { target: { server_id: 'gone-1' } } });
    return { instances, desktopServices, desktops, locks };
  }

  it.each([1, 2, 3, 4, 5, 6])('seed %i: same proxies, order, kinds, statuses and counts, from parsed lists and from the JSON texts', (seed) => {
    const snap = snapshot(seed);
    const want = plain(snap, NOW);
    const pick = (p: Proxy) => ({ id: p.id, hostname: p.hostname, services: p.services, kind: p.kind, networkStatus: p.networkStatus, version: p.version, lastSeen: p.lastSeen, clientCodes: p.clientCodes, clientDesktops: p.clientDesktops, unlabelledDesktops: p.unlabelledDesktops, windowsServers: p.windowsServers, locks: p.locks.map((l) => l.name) });
    expect(buildProxies(snap, NOW).proxies.map(pick)).toEqual(want);
    const texts = { instances: JSON.stringify(snap.instances), desktopServices: JSON.stringify(snap.desktopServices), desktops: JSON.stringify(snap.desktops), locks: JSON.stringify(snap.locks) };
    const parsed = { instances: JSON.parse(texts.instances), desktopServices: JSON.parse(texts.desktopServices), desktops: JSON.parse(texts.desktops), locks: JSON.parse(texts.locks) };
    expect(buildProxies(texts, NOW).proxies.map(pick)).toEqual(plain(parsed, NOW));
    // the statuses follow from the final heartbeat and services, and the displayed one from the locks
    for (const p of buildProxies(snap, NOW).proxies) expect(p.status).toBe(p.locks.length ? 'locked' : p.networkStatus);
  });

  it('gives an agent listed twice the kind and status of its merged services and its last heartbeat', () => {
    const { proxies } = buildProxies(
      {
        instances: [
          { metadata: { name: 'n' }, spec: { services: ['Node'], last_seen: '2026-11-28T11:59:00Z' } },
          { metadata: { name: 'n' }, spec: { services: ['Auth'], last_seen: '2026-11-28T11:30:00Z' } },
        ],
        desktopServices: [{ metadata: { name: 'w' }, spec: {} }],
        desktops: [],
        locks: [],
      },
      NOW,
    );
    expect(proxies.map((p) => [p.id, p.services, p.kind, p.networkStatus, p.status])).toEqual([
      ['n', ['Node', 'Auth'], 'auth', 'unreachable', 'unreachable'],
      ['w', ['WindowsDesktop'], 'gateway', 'unreachable', 'unreachable'],
    ]);
  });
});
