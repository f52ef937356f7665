import semver from 'semver';
import { allCliReads, parseJsonArray, type ClusterCli } from './cluster-cli';

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

/**
 * The cluster CLI's lists: each as parsed items, or as the CLI's JSON text, parsed by buildProxies
 * one list at a time right before it is folded in (issue 28: the parsed list is garbage as soon as
 * it is folded, so the next list's parse and the join never carry the whole parsed output).
 */
export interface ClusterSnapshot {
  instances: unknown[] | string;
  desktopServices: unknown[] | string;
  desktops: unknown[] | string;
  locks: unknown[] | string;
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
  /** its desktops per client, aligned with clientCodes */
  clientDesktops: number[];
  /** its desktops without a client code */
  unlabelledDesktops: number;
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
  /** the desktops themselves: only when buildProxies is asked for them (`{ desktops: true }`) */
  desktops?: Desktop[];
  locks: ActiveLock[];
}
/** A proxy read with its desktops: node detail, inventory CSV. */
export type ProxyWithDesktops = Proxy & { desktops: Desktop[] };

export interface BuildOptions {
  /** materialize each proxy's desktops (default: counted per client only) */
  desktops?: boolean;
}
export interface BuiltProxies<P extends Proxy = Proxy> {
  proxies: P[];
  clusterVersion: string | null;
}

/** Read everything the proxies table needs, in parallel: the CLI's JSON texts (buildProxies parses each as it folds it). */
export async function readSnapshot(cli: ClusterCli): Promise<ClusterSnapshot> {
  const stdout = async (args: string[]) => (await cli.run(args)).stdout;
  const [instances, desktopServices, desktops, locks] = await allCliReads([
    stdout(['inventory', 'ls', '--format=json']),
    stdout(['get', 'windows_desktop_service', '--format=json']),
    stdout(['get', 'windows_desktop', '--format=json']), // singular: the plural is not a tctl kind
    stdout(['get', 'locks', '--format=json']),
  ]);
  return { instances, desktopServices, desktops, locks };
}

/** A list of the snapshot as items (text parsed now; anything but a JSON array: the CLI cannot read the cluster). */
const itemsOf = (list: unknown[] | string): unknown[] => (typeof list === 'string' ? parseJsonArray(list) : list);

// Defensive readers: the CLI's JSON faces the outside, a malformed item is skipped, never thrown.
const obj = (v: unknown): Record<string, any> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

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
  // no helper object per call: kindOf runs once per proxy of each request (issue 28)
  if (services.includes('Auth')) return 'auth';
  if (services.includes('Proxy')) return 'proxy';
  if (services.includes('WindowsDesktop')) return 'gateway';
  if (services.includes('Kube') || services.includes('Db') || services.includes('Discovery') || services.includes('Okta')) return 'other';
  if (services.includes('App')) return 'app';
  if (services.includes('Node')) return 'ssh';
  return 'other';
}

/** A client proxy: a gateway, or any node with a client code. */
export const isClientProxy = (p: Pick<Proxy, 'kind' | 'clientCodes'>) => p.kind === 'gateway' || p.clientCodes.length > 0;

/**
 * The proxies of one snapshot, in one pass over each list of the CLI's output (issue 28, bench/nodes:
 * the whole request within 1.3x the JSON parse): each list parsed right before its loop and garbage
 * after it; one record per agent, created once and completed in place (no second object per proxy,
 * no per-item re-scan of locks or desktops); versions parsed once per distinct string (a fleet runs
 * a handful, semver's parse costs microseconds) and version states looked up per distinct version.
 *
 * Desktops are counted per client unless `{ desktops: true }` asks for them (node detail, CSV):
 * the list needs only the counts, and a desktops loop that allocates nothing triggers no scavenge
 * while the parsed desktops list is alive, so that list dies young instead of being promoted
 * (issue 28: the GC was ~15% of the list's time, the per-desktop objects the cause).
 */
export function buildProxies(snap: ClusterSnapshot, now: number | undefined, options: BuildOptions & { desktops: true }): BuiltProxies<ProxyWithDesktops>;
export function buildProxies(snap: ClusterSnapshot, now?: number, options?: BuildOptions): BuiltProxies;
export function buildProxies(snap: ClusterSnapshot, now: number = Date.now(), options: BuildOptions = {}): BuiltProxies {
  const withDesktops = options.desktops === true;
  const byId = new Map<string, Proxy>();
  const cleaned = new Map<string, string | null>();
  const clean = (v: string | null) => {
    if (!v) return null;
    let c = cleaned.get(v);
    if (c === undefined) cleaned.set(v, (c = cleanVersion(v)));
    return c;
  };
  const proxyOf = (id: string): Proxy => {
    let p = byId.get(id);
    if (!p) {
      // every field in its final order; the derived ones are completed below
      p = { id, hostname: '', kind: 'other', services: [], clientCode: null, clientCodes: [], clientDesktops: [], unlabelledDesktops: 0, shared: false, version: null, lastSeen: null, networkStatus: 'unreachable', locked: false, status: 'unreachable', updateNeeded: false, incompatible: false, windowsServers: 0, locks: [] };
      if (withDesktops) p.desktops = [];
      byId.set(id, p);
    }
    return p;
  };
  let clusterVersion: string | null = null;
  for (const raw of itemsOf(snap.instances)) {
    const it = obj(raw);
    const id = str(obj(it?.metadata)?.name);
    const spec = obj(it?.spec);
    if (!it || !id || !spec) continue;
    const p = proxyOf(id);
    if (Array.isArray(spec.services)) for (const sv of spec.services) if (typeof sv === 'string' && !p.services.includes(sv)) p.services.push(sv);
    p.hostname = str(spec.hostname) ?? p.hostname;
    p.version = str(spec.version) ?? p.version;
    p.lastSeen = str(spec.last_seen) ?? null;
    // the cluster's version is the Auth service's
    if (p.services.includes('Auth')) {
      const v = clean(p.version);
      if (v && (!clusterVersion || semver.gt(v, clusterVersion))) clusterVersion = v;
    }
  }
  for (const raw of itemsOf(snap.desktopServices)) {
    const it = obj(raw);
    const id = str(obj(it?.metadata)?.name);
    const spec = obj(it?.spec);
    if (!it || !id || !spec) continue;
    // a proxy already there is one the inventory lists: its services are the inventory's
    let p = byId.get(id);
    if (!p) (p = proxyOf(id)).services.push('WindowsDesktop');
    if (!p.hostname) p.hostname = str(spec.hostname) ?? '';
    p.version ??= str(spec.teleport_version) ?? null;
  }
  for (const raw of itemsOf(snap.desktops)) {
    // the hottest loop (a desktop per Windows server): the host first, each field read once, and
    // no object made per desktop unless the desktops were asked for: counted per client instead
    const it = obj(raw);
    const spec = obj(it?.spec);
    const hostId = str(spec?.host_id);
    if (!spec || !hostId) continue;
    const p = byId.get(hostId);
    if (!p) continue; // served by an agent the cluster no longer lists
    const metadata = obj(it!.metadata);
    const name = str(metadata?.name);
    if (!name) continue;
    const clientCode = str(obj(metadata!.labels)?.client_code) ?? null;
    p.windowsServers++;
    if (clientCode === null) p.unlabelledDesktops++;
    else {
      const i = p.clientCodes.indexOf(clientCode);
      if (i >= 0) p.clientDesktops[i]++;
      else {
        p.clientCodes.push(clientCode);
        p.clientDesktops.push(1);
      }
    }
    if (withDesktops) p.desktops!.push({ name, addr: str(spec.addr) ?? '', domain: typeof spec.domain === 'string' ? spec.domain : '', nonAd: spec.non_ad === true, clientCode });
  }
  for (const raw of itemsOf(snap.locks)) {
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

  const states = new Map<string, { updateNeeded: boolean; incompatible: boolean }>();
  const proxies: Proxy[] = [];
  for (const p of byId.values()) {
    if (!p.hostname) p.hostname = p.id;
    p.kind = kindOf(p.services);
    const n = p.clientCodes.length;
    if (n > 1) sortClients(p);
    p.clientCode = n === 1 ? p.clientCodes[0] : null;
    p.shared = n > 1 || (n > 0 && p.unlabelledDesktops > 0);
    p.networkStatus = networkStatus(p.lastSeen, now);
    p.locked = p.locks.length > 0;
    p.status = p.locked ? 'locked' : p.networkStatus;
    const key = p.version ?? '';
    let st = states.get(key);
    if (!st) states.set(key, (st = versionState(clean(p.version), clusterVersion)));
    p.updateNeeded = st.updateNeeded;
    p.incompatible = st.incompatible;
    proxies.push(p);
  }
  return { proxies, clusterVersion };
}

/** Sort a proxy's client codes, their desktop counts along (a shared proxy: rare, a few codes). */
function sortClients(p: Proxy) {
  const order = p.clientCodes.map((_, i) => i).sort((a, b) => (p.clientCodes[a] < p.clientCodes[b] ? -1 : 1));
  const codes = p.clientCodes;
  const counts = p.clientDesktops;
  p.clientCodes = order.map((i) => codes[i]);
  p.clientDesktops = order.map((i) => counts[i]);
}

/**
 * A proxy as a technician may see it (visible = his client codes; undefined = administrator):
 * hidden when it serves none of his clients; otherwise only his clients' desktops are shown and
 * counted, so a desktop whose client differs from the caller's scope is never shown.
 */
export function proxyInScope<P extends Proxy>(p: P, visible: Set<string> | undefined): P | undefined {
  if (!visible) return p;
  if (!p.clientCodes.some((c) => visible.has(c))) return undefined;
  if (!p.shared) return p;
  const clientCodes: string[] = [];
  const clientDesktops: number[] = [];
  p.clientCodes.forEach((c, i) => {
    if (!visible.has(c)) return;
    clientCodes.push(c);
    clientDesktops.push(p.clientDesktops[i]);
  });
  const scoped: P = { ...p, clientCode: clientCodes.length === 1 ? clientCodes[0] : null, clientCodes, clientDesktops, unlabelledDesktops: 0, windowsServers: clientDesktops.reduce((n, k) => n + k, 0) };
  if (p.desktops) scoped.desktops = p.desktops.filter((d) => d.clientCode !== null && visible.has(d.clientCode));
  return scoped;
}

/** The proxies in scope (an administrator's: the list itself, no copy). */
export const proxiesInScope = <P extends Proxy>(proxies: P[], visible: Set<string> | undefined): P[] =>
  visible ? proxies.map((p) => proxyInScope(p, visible)).filter((p): p is P => p !== undefined) : proxies;
