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

function matchesText(r: NodeRow, q: string) {
  const needle = q.toLowerCase();
  return [r.hostname, ...r.clientCodes, r.clientName ?? ''].some((s) => s.toLowerCase().includes(needle));
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

function compareVersions(a: string | null, b: string | null) {
  const va = a ? semver.valid(semver.clean(a) ?? a) : null;
  const vb = b ? semver.valid(semver.clean(b) ?? b) : null;
  if (va && vb) return semver.compare(va, vb);
  if (va) return 1;
  if (vb) return -1;
  return 0;
}

const byClientThenHost = (a: NodeRow, b: NodeRow) =>
  (a.clientName ?? a.clientCode ?? '\uffff').localeCompare(b.clientName ?? b.clientCode ?? '\uffff') || a.hostname.localeCompare(b.hostname) || a.id.localeCompare(b.id);

/**
 * The rows of the proxies table, from the proxies of the caller's scope (proxiesInScope: nothing
 * out of scope is ever counted); the summary covers scope + all/kind + q, before ?status.
 */
export function listNodes(proxies: Proxy[], query: NodeListQuery, clientNames: Map<string, string>) {
  const shown: NodeRow[] = [];
  for (const p of proxies) {
    if (!query.all && !isClientProxy(p)) continue;
    if (query.kind && p.kind !== query.kind) continue;
    const row = nodeRow(p, clientNames);
    if (query.q && !matchesText(row, query.q)) continue;
    shown.push(row);
  }
  const summary = summarize(shown);
  const rows = query.status ? shown.filter((r) => matchesStatus(r, query.status!)) : shown;
  const dir = query.dir === 'desc' ? -1 : 1;
  const cmp: Record<string, (a: NodeRow, b: NodeRow) => number> = {
    client: byClientThenHost,
    status: (a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status],
    version: (a, b) => compareVersions(a.version, b.version),
    desktops: (a, b) => a.windowsServers - b.windowsServers,
  };
  const primary = cmp[query.sort ?? 'client'];
  rows.sort((a, b) => primary(a, b) * dir || byClientThenHost(a, b));
  const out: { nodes: NodeRow[]; summary: Summary; groups?: Array<{ clientCode: string | null; clientName: string | null; count: number; nodeIds: string[] }> } = { nodes: rows, summary };
  if (query.group === 'client') {
    const groups = new Map<string, { clientCode: string | null; clientName: string | null; count: number; nodeIds: string[] }>();
    for (const r of [...rows].sort(byClientThenHost)) {
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
