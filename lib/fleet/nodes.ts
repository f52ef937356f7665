import semver from 'semver';
import { allCliReads, getInventory, getResources, type ClusterCli } from './cluster-cli';

// Proxies (agents) as the fleet plane shows them, joined on the agent's host UUID across the
// cluster CLI's lists (COMMANDS.md §6): inventory (services, version, last_seen), windows desktop
// services, windows desktops (spec.host_id, the client_code label) and locks
// (target.server_id/node). Only what the identity role grants is read (identity-role.yaml): it
// has no node rule nor node_labels, so a proxy's client comes from its desktops' labels.

export const NODE_KINDS = ['gateway', 'proxy', 'auth', 'app', 'ssh', 'other'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];
export type NetworkStatus = 'online' | 'slow' | 'unreachable';
export type DisplayedStatus = NetworkStatus | 'locked';

export const ONLINE_MS = 5 * 60_000;
export const SLOW_MS = 20 * 60_000;

export interface ClusterSnapshot {
  instances: unknown[];
  desktopServices: unknown[];
  desktops: unknown[];
  locks: unknown[];
}

export interface Desktop {
  name: string;
  addr: string;
  domain: string;
  nonAd: boolean;
  clientCode: string | null;
}
export interface ActiveLock {
  name: string;
  message: string;
  expires: string | null;
  createdBy: string | null;
  createdAt: string | null;
}
export interface Proxy {
  id: string;
  hostname: string;
  kind: NodeKind;
  services: string[];
  /** the one client the proxy serves (every desktop labelled with it), else null */
  clientCode: string | null;
  /** every client whose desktops the proxy serves, sorted */
  clientCodes: string[];
  /** serves several clients, or a desktop without a client code beside labelled ones */
  shared: boolean;
  version: string | null;
  lastSeen: string | null;
  networkStatus: NetworkStatus;
  locked: boolean;
  status: DisplayedStatus;
  updateNeeded: boolean;
  incompatible: boolean;
  windowsServers: number;
  desktops: Desktop[];
  locks: ActiveLock[];
}

/** Read everything the proxies table needs, in parallel. */
export async function readSnapshot(cli: ClusterCli): Promise<ClusterSnapshot> {
  const [instances, desktopServices, desktops, locks] = await allCliReads([
    getInventory(cli),
    getResources(cli, 'windows_desktop_service'),
    getResources(cli, 'windows_desktop'), // singular: the plural is not a tctl kind
    getResources(cli, 'locks'),
  ]);
  return { instances, desktopServices, desktops, locks };
}

// Defensive readers: the CLI's JSON faces the outside, a malformed item is skipped, never thrown.
const obj = (v: unknown): Record<string, any> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const label = (item: Record<string, any>, name: string) => str(obj(obj(item.metadata)?.labels)?.[name]);

/** Online ≤ 5 min, Slow ≤ 20 min, otherwise or unreadable Unreachable; a future date counts as recent. */
export function networkStatus(lastSeen: string | null | undefined, now: number): NetworkStatus {
  const t = lastSeen ? Date.parse(lastSeen) : NaN;
  if (!Number.isFinite(t)) return 'unreachable';
  const age = now - t;
  if (age <= ONLINE_MS) return 'online';
  if (age <= SLOW_MS) return 'slow';
  return 'unreachable';
}

const cleanVersion = (v: string | null | undefined) => (v ? semver.valid(semver.clean(v) ?? v) : null);

/** Update needed: older than the cluster. Incompatible: more than one major behind, or ahead. */
export function versionState(agent: string | null, cluster: string | null): { updateNeeded: boolean; incompatible: boolean } {
  const a = cleanVersion(agent);
  const c = cleanVersion(cluster);
  if (!a || !c) return { updateNeeded: false, incompatible: false };
  const behind = semver.lt(a, c);
  return { updateNeeded: behind, incompatible: semver.gt(a, c) || semver.major(a) < semver.major(c) - 1 };
}

export function kindOf(services: string[]): NodeKind {
  const s = new Set(services);
  if (s.has('Auth')) return 'auth';
  if (s.has('Proxy')) return 'proxy';
  if (s.has('WindowsDesktop')) return 'gateway';
  if (s.has('Kube') || s.has('Db') || s.has('Discovery') || s.has('Okta')) return 'other';
  if (s.has('App')) return 'app';
  if (s.has('Node')) return 'ssh';
  return 'other';
}

/** A client proxy: a gateway, or any node with a client code. */
export const isClientProxy = (p: Pick<Proxy, 'kind' | 'clientCodes'>) => p.kind === 'gateway' || p.clientCodes.length > 0;

interface Acc {
  id: string;
  hostname?: string;
  services: Set<string>;
  inventoried: boolean;
  version?: string;
  lastSeen?: string;
  desktops: Desktop[];
  locks: ActiveLock[];
}

export function buildProxies(snap: ClusterSnapshot, now: number = Date.now()): { proxies: Proxy[]; clusterVersion: string | null } {
  const byId = new Map<string, Acc>();
  const acc = (id: string) => {
    let a = byId.get(id);
    if (!a) byId.set(id, (a = { id, services: new Set(), inventoried: false, desktops: [], locks: [] }));
    return a;
  };
  let clusterVersion: string | null = null;
  for (const raw of snap.instances) {
    const it = obj(raw);
    const id = str(obj(it?.metadata)?.name);
    const spec = obj(it?.spec);
    if (!it || !id || !spec) continue;
    const a = acc(id);
    a.inventoried = true;
    for (const s of strs(spec.services)) a.services.add(s);
    a.hostname = str(spec.hostname) ?? a.hostname;
    a.version = str(spec.version) ?? a.version;
    a.lastSeen = str(spec.last_seen);
    // the cluster's version is the Auth service's
    const v = cleanVersion(a.version);
    if (v && a.services.has('Auth') && (!clusterVersion || semver.gt(v, clusterVersion))) clusterVersion = v;
  }
  for (const raw of snap.desktopServices) {
    const it = obj(raw);
    const id = str(obj(it?.metadata)?.name);
    const spec = obj(it?.spec);
    if (!it || !id || !spec) continue;
    const a = acc(id);
    if (!a.inventoried) a.services.add('WindowsDesktop');
    a.hostname ??= str(spec.hostname);
    a.version ??= str(spec.teleport_version);
  }
  for (const raw of snap.desktops) {
    const it = obj(raw);
    const spec = obj(it?.spec);
    const name = str(obj(it?.metadata)?.name);
    const hostId = str(spec?.host_id);
    if (!it || !spec || !name || !hostId) continue;
    const a = byId.get(hostId);
    if (!a) continue; // served by an agent the cluster no longer lists
    a.desktops.push({ name, addr: str(spec.addr) ?? '', domain: typeof spec.domain === 'string' ? spec.domain : '', nonAd: spec.non_ad === true, clientCode: label(it, 'client_code') ?? null });
  }
  for (const raw of snap.locks) {
    const it = obj(raw);
    const spec = obj(it?.spec);
    const target = obj(spec?.target);
    const id = str(target?.server_id) ?? str(target?.node); // `node` is the legacy field
    const name = str(obj(it?.metadata)?.name);
    if (!spec || !id || !name) continue;
    const expires = str(spec.expires) ?? null;
    // tctl lists expired locks too: only a lock without expiry or expiring later is in force
    if (expires !== null) {
      const t = Date.parse(expires);
      if (!Number.isFinite(t) || t <= now) continue;
    }
    byId.get(id)?.locks.push({ name, message: typeof spec.message === 'string' ? spec.message : '', expires, createdBy: str(spec.created_by) ?? null, createdAt: str(spec.created_at) ?? null });
  }

  const proxies: Proxy[] = [];
  for (const a of byId.values()) {
    const services = [...a.services];
    const kind = kindOf(services);
    const network = networkStatus(a.lastSeen, now);
    const locked = a.locks.length > 0;
    proxies.push({
      id: a.id,
      hostname: a.hostname ?? a.id,
      kind,
      services,
      ...clientsOf(a.desktops),
      version: a.version ?? null,
      lastSeen: a.lastSeen ?? null,
      networkStatus: network,
      locked,
      status: locked ? 'locked' : network,
      ...versionState(a.version ?? null, clusterVersion),
      windowsServers: a.desktops.length,
      desktops: a.desktops,
      locks: a.locks,
    });
  }
  return { proxies, clusterVersion };
}

/** The clients of a proxy, from its desktops' `client_code` labels (spec: Proxy, client code). */
export function clientsOf(desktops: Desktop[]): Pick<Proxy, 'clientCode' | 'clientCodes' | 'shared'> {
  const codes = [...new Set(desktops.map((d) => d.clientCode).filter((c): c is string => c !== null))].sort();
  const unlabelled = desktops.some((d) => d.clientCode === null);
  return { clientCode: codes.length === 1 ? codes[0] : null, clientCodes: codes, shared: codes.length > 1 || (codes.length > 0 && unlabelled) };
}

/**
 * A proxy as a technician may see it (visible = his client codes; undefined = administrator):
 * hidden when it serves none of his clients; otherwise only his clients' desktops are shown and
 * counted, so a desktop whose client differs from the caller's scope is never shown.
 */
export function proxyInScope(p: Proxy, visible: Set<string> | undefined): Proxy | undefined {
  if (!visible) return p;
  const codes = p.clientCodes.filter((c) => visible.has(c));
  if (codes.length === 0) return undefined;
  if (!p.shared) return p;
  const desktops = p.desktops.filter((d) => d.clientCode !== null && visible.has(d.clientCode));
  return { ...p, clientCode: codes.length === 1 ? codes[0] : null, clientCodes: codes, windowsServers: desktops.length, desktops };
}

export const proxiesInScope = (proxies: Proxy[], visible: Set<string> | undefined): Proxy[] =>
  proxies.map((p) => proxyInScope(p, visible)).filter((p): p is Proxy => p !== undefined);
