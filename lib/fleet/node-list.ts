import semver from 'semver';
import { z } from 'zod';
import { isClientProxy, NODE_KINDS, type Proxy, type ProxyWithDesktops } from './nodes';

// GET /api/nodes: the spec's deep links (?status, ?q, ?all, ?kind, ?sort, ?dir, ?group) applied
// to the proxies the caller may see. Summary counts describe the rows the table can show.

const flag = z
  .enum(['1', '0', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');

export const nodeListQuerySchema = z.object({
  status: z.enum(['online', 'down', 'locked', 'outdated']).optional(),
  q: z.string().trim().max(200).optional(),
  all: flag,
  kind: z.enum(NODE_KINDS).optional(),
  sort: z.enum(['client', 'status', 'version', 'desktops']).optional(),
  dir: z.enum(['asc', 'desc']).optional(),
  group: z.enum(['client']).optional(),
});
export type NodeListQuery = z.output<typeof nodeListQuerySchema>;

export interface NodeRow {
  id: string;
  hostname: string;
  kind: Proxy['kind'];
  clientCode: string | null;
  clientName: string | null;
  clientCodes: string[];
  shared: boolean;
  version: string | null;
  lastSeen: string | null;
  status: Proxy['status'];
  networkStatus: Proxy['networkStatus'];
  locked: boolean;
  updateNeeded: boolean;
  incompatible: boolean;
  windowsServers: number;
}

export interface Summary {
  total: number;
  online: number;
  slow: number;
  unreachable: number;
  locked: number;
  outdated: number;
}

const STATUS_ORDER = { online: 0, slow: 1, unreachable: 2, locked: 3 } as const;

export const nodeRow = (p: Proxy, clientNames: Map<string, string>): NodeRow => ({
  id: p.id,
  hostname: p.hostname,
  kind: p.kind,
  clientCode: p.clientCode,
  clientName: p.clientCode ? (clientNames.get(p.clientCode) ?? null) : null,
  clientCodes: p.clientCodes,
  shared: p.shared,
  version: p.version,
  lastSeen: p.lastSeen,
  status: p.status,
  networkStatus: p.networkStatus,
  locked: p.locked,
  updateNeeded: p.updateNeeded,
  incompatible: p.incompatible,
  windowsServers: p.windowsServers,
});

/** `needle` lower-cased by the caller, once per request. */
function matchesText(r: NodeRow, needle: string) {
  return r.hostname.toLowerCase().includes(needle) || r.clientCodes.some((c) => c.toLowerCase().includes(needle)) || (r.clientName ?? '').toLowerCase().includes(needle);
}

function matchesStatus(r: NodeRow, status: NonNullable<NodeListQuery['status']>) {
  switch (status) {
    case 'online':
      return r.status === 'online'; // a locked node is never counted online
    case 'down':
      return r.networkStatus === 'unreachable';
    case 'locked':
      return r.locked;
    case 'outdated':
      return r.updateNeeded;
  }
}

export function summarize(rows: NodeRow[]): Summary {
  const s: Summary = { total: rows.length, online: 0, slow: 0, unreachable: 0, locked: 0, outdated: 0 };
  for (const r of rows) {
    if (r.status === 'online') s.online++;
    if (r.status === 'slow') s.slow++;
    if (r.networkStatus === 'unreachable') s.unreachable++;
    if (r.locked) s.locked++;
    if (r.updateNeeded) s.outdated++;
  }
  return s;
}

const cleanVersion = (v: string | null) => (v ? semver.valid(semver.clean(v) ?? v) : null);

/** Versions as semver orders them; one that is no version before any. */
function compareCleanVersions(va: string | null, vb: string | null) {
  if (va && vb) return semver.compare(va, vb);
  if (va) return 1;
  if (vb) return -1;
  return 0;
}

const clientKey = (r: NodeRow) => r.clientName ?? r.clientCode ?? '\uffff';
const byHost = (a: NodeRow, b: NodeRow) => a.hostname.localeCompare(b.hostname) || a.id.localeCompare(b.id);
type Sort = NonNullable<NodeListQuery['sort']>;

/**
 * The table's order, as this comparison would sort the rows (Array.prototype.sort, stable):
 *   primary(a, b) * dir || byClient(a, b) || byHost(a, b)
 * where byClient compares the client's name, else its code (rows without a client last), and
 * byHost the host name then the id, each with localeCompare; the client sort is
 * (byClient || byHost) * dir. That comparison called ~n log n times made most of listNodes' time
 * (2.2-2.7 ms for 5,000 proxies; 1.5-1.8 ms this way: issue 28, bench/nodes), so each row gets
 * numbers instead: its client and host class (rows grouped per client, the few hundred distinct
 * clients ordered once, each client's few rows by host), its primary value's class and its index,
 * folded into one number per row; one numeric sort of those keys gives the same order, ties in
 * their input order as the stable sort left them (unit test: the same order as the comparison).
 */
function sortRows(rows: NodeRow[], sort: Sort, dir: 1 | -1): NodeRow[] {
  const n = rows.length;
  const hostClass = clientHostClasses(rows);
  let classes = 0;
  for (let i = 0; i < n; i++) if (hostClass[i] >= classes) classes = hostClass[i] + 1;
  const primary = sort === 'client' ? undefined : primaryClasses(rows, sort);
  let primaries = 1;
  if (primary) for (let i = 0; i < n; i++) if (primary[i] >= primaries) primaries = primary[i] + 1;
  if (primaries * classes * n >= Number.MAX_SAFE_INTEGER) return fallbackSort(rows, primary, hostClass, dir);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = primary ? hostClass[i] : dir === 1 ? hostClass[i] : classes - 1 - hostClass[i];
    const p = !primary ? 0 : dir === 1 ? primary[i] : primaries - 1 - primary[i];
    keys[i] = (p * classes + c) * n + i;
  }
  keys.sort();
  const out = new Array<NodeRow>(n);
  for (let k = 0; k < n; k++) out[k] = rows[keys[k] % n];
  return out;
}

/** Rows too many for one safe integer key: the same order by comparing the classes. */
function fallbackSort(rows: NodeRow[], primary: number[] | undefined, hostClass: number[], dir: 1 | -1): NodeRow[] {
  const order = rows.map((_, i) => i);
  order.sort((i, j) => (primary ? (primary[i] - primary[j]) * dir || hostClass[i] - hostClass[j] : (hostClass[i] - hostClass[j]) * dir) || i - j);
  return order.map((i) => rows[i]);
}

/**
 * Each row's class in the order byClient || byHost: equal classes for rows that compare equal,
 * numbered from 0 in order. Clients are ranked once (distinct names, ordered by localeCompare,
 * names it calls equal merged), then each client's rows by host.
 */
function clientHostClasses(rows: NodeRow[]): number[] {
  const perClient = new Map<string, number[]>();
  for (let i = 0; i < rows.length; i++) {
    const k = clientKey(rows[i]);
    const g = perClient.get(k);
    if (g) g.push(i);
    else perClient.set(k, [i]);
  }
  const clients = [...perClient.keys()].sort((a, b) => a.localeCompare(b));
  const cls = new Array<number>(rows.length);
  let next = 0;
  for (let c = 0; c < clients.length; ) {
    // the clients localeCompare calls equal sort next to each other: one group
    let group = perClient.get(clients[c])!;
    let e = c + 1;
    for (; e < clients.length && clients[e - 1].localeCompare(clients[e]) === 0; e++) group = group.concat(perClient.get(clients[e])!);
    group.sort((i, j) => byHost(rows[i], rows[j]));
    for (let g = 0; g < group.length; g++) cls[group[g]] = g > 0 && byHost(rows[group[g - 1]], rows[group[g]]) === 0 ? next - 1 : next++;
    c = e;
  }
  return cls;
}

/** Each row's class in the primary order (equal classes for rows the primary comparison calls equal). */
function primaryClasses(rows: NodeRow[], sort: Exclude<Sort, 'client'>): number[] {
  if (sort === 'status') return rows.map((r) => STATUS_ORDER[r.status]);
  if (sort === 'desktops') return classesOf(rows.map((r) => r.windowsServers), (a, b) => a - b);
  // versions: each distinct string parsed once, not twice per comparison
  const cleaned = new Map<string | null, string | null>();
  for (const r of rows) if (!cleaned.has(r.version)) cleaned.set(r.version, cleanVersion(r.version));
  return classesOf(rows.map((r) => cleaned.get(r.version)!), compareCleanVersions);
}

/** Classes of values under a comparison (a total preorder): distinct values sorted once, equal ones one class. */
function classesOf<T>(values: T[], compare: (a: T, b: T) => number): number[] {
  const distinct = [...new Set(values)].sort(compare);
  const classOf = new Map<T, number>();
  let c = 0;
  distinct.forEach((v, i) => classOf.set(v, i > 0 && compare(distinct[i - 1], v) !== 0 ? ++c : c));
  return values.map((v) => classOf.get(v)!);
}

/**
 * The rows of the proxies table, from the proxies of the caller's scope (proxiesInScope: nothing
 * out of scope is ever counted); the summary covers scope + all/kind + q, before ?status.
 */
export function listNodes(proxies: Proxy[], query: NodeListQuery, clientNames: Map<string, string>) {
  const shown: NodeRow[] = [];
  const needle = query.q ? query.q.toLowerCase() : '';
  for (const p of proxies) {
    if (!query.all && !isClientProxy(p)) continue;
    if (query.kind && p.kind !== query.kind) continue;
    const row = nodeRow(p, clientNames);
    if (query.q && !matchesText(row, needle)) continue;
    shown.push(row);
  }
  const summary = summarize(shown);
  const filtered = query.status ? shown.filter((r) => matchesStatus(r, query.status!)) : shown;
  const rows = sortRows(filtered, query.sort ?? 'client', query.dir === 'desc' ? -1 : 1);
  const out: { nodes: NodeRow[]; summary: Summary; groups?: Array<{ clientCode: string | null; clientName: string | null; count: number; nodeIds: string[] }> } = { nodes: rows, summary };
  if (query.group === 'client') {
    const groups = new Map<string, { clientCode: string | null; clientName: string | null; count: number; nodeIds: string[] }>();
    for (const r of sortRows(rows, 'client', 1)) {
      const key = r.clientCode ?? '';
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { clientCode: r.clientCode, clientName: r.clientName, count: 0, nodeIds: [] }));
      g.count++;
      g.nodeIds.push(r.id);
    }
    out.groups = [...groups.values()];
  }
  return out;
}

/** A placeholder left from an example configuration is as good as unknown. */
const isPlaceholder = (v: string | undefined) => !v || /example|changeme|placeholder|[<>{}]/i.test(v);

/** Connect link of a desktop (the platform's web UI), hidden when the proxy or cluster is unknown. */
export function connectUrl(proxyAddr: string | undefined, cluster: string | undefined, desktop: string): string | null {
  if (isPlaceholder(proxyAddr) || isPlaceholder(cluster)) return null;
  const host = proxyAddr!.replace(/^https?:\/\//, '').replace(/\/+$/, '');
  return `https://${host}/web/cluster/${encodeURIComponent(cluster!)}/resources?kinds=windows_desktop&search=${encodeURIComponent(desktop)}`;
}

export function nodeDetail(p: ProxyWithDesktops, clientNames: Map<string, string>, link: { proxyAddr?: string; cluster?: string }) {
  return {
    ...nodeRow(p, clientNames),
    services: p.services,
    desktops: p.desktops.map((d) => ({ name: d.name, addr: d.addr, domain: d.domain, nonAd: d.nonAd, connectUrl: connectUrl(link.proxyAddr, link.cluster, d.name) })),
    locks: p.locks,
  };
}
