import semver from 'semver';
import { allCliReads, parseJsonArray, type ClusterCli } from './cluster-cli';
import { ProxyIndex } from './proxy-index';

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

const digits = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
};
/** Days from 1970-01-01 to a valid date (the proleptic Gregorian calendar's civil-to-days count, as Date.UTC counts them). */
function daysSinceEpoch(y: number, m: number, d: number): number {
  if (m <= 2) y--;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}
const daysIn = (y: number, m: number) => (m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31);

/**
 * Date.parse, with the CLI's own form read directly: `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (tctl
 * writes nanoseconds), a valid date from 1970 on, 1 to 9 fraction digits of which the first three
 * are the milliseconds, as Date.parse reads them. Anything else goes to Date.parse. Once per proxy
 * of each request: 0.7 ms for 5,000 proxies where Date.parse took 1.3 (issue 28, bench/nodes).
 */
export function parseTimestamp(s: string): number {
  const len = s.length;
  if (len >= 20 && len <= 30 && s.charCodeAt(len - 1) === 90 /* Z */ && s.charCodeAt(4) === 45 && s.charCodeAt(7) === 45 && s.charCodeAt(10) === 84 /* T */ && s.charCodeAt(13) === 58 && s.charCodeAt(16) === 58) {
    const y = digits(s, 0, 4);
    const mo = digits(s, 5, 7);
    const d = digits(s, 8, 10);
    const h = digits(s, 11, 13);
    const mi = digits(s, 14, 16);
    const sec = digits(s, 17, 19);
    let ms = 0;
    let ok = true;
    if (len > 20) {
      // `.` and 1 to 9 digits
      const f = digits(s, 20, len - 1);
      ok = s.charCodeAt(19) === 46 && len >= 22 && f >= 0;
      if (ok) ms = digits(s, 20, Math.min(len - 1, 23)) * (len - 21 >= 3 ? 1 : len - 21 === 2 ? 10 : 100);
    }
    if (ok && y >= 1970 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo) && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59) return ((daysSinceEpoch(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms;
  }
  return Date.parse(s);
}

/** Online ≤ 5 min, Slow ≤ 20 min, otherwise or unreadable Unreachable; a future date counts as recent. */
export function networkStatus(lastSeen: string | null | undefined, now: number): NetworkStatus {
  const t = lastSeen ? parseTimestamp(lastSeen) : NaN;
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
  // one small function per list (issue 28, bench/nodes): each is optimized on its own feedback; in
  // one function, the loop optimized first deoptimized on reaching the next (no feedback yet for
  // its accesses), so a fresh instance ran its first requests half in the interpreter
  const instances = itemsOf(snap.instances);
  const fold: Fold = { byId: new ProxyIndex<Proxy>(instances.length), withDesktops: options.desktops === true, versions: new Map() };
  const clusterVersion = foldInstances(fold, instances);
  foldDesktopServices(fold, itemsOf(snap.desktopServices));
  foldDesktops(fold, itemsOf(snap.desktops));
  foldLocks(fold, itemsOf(snap.locks), now);
  return { proxies: completeProxies(fold, clusterVersion, now), clusterVersion };
}

/** The state of one buildProxies: one record per agent, and versions parsed once per distinct string. */
interface Fold {
  byId: ProxyIndex<Proxy>;
  withDesktops: boolean;
  versions: Map<string, string | null>;
}

function cleanOnce(fold: Fold, v: string | null): string | null {
  if (!v) return null;
  let c = fold.versions.get(v);
  if (c === undefined) fold.versions.set(v, (c = cleanVersion(v)));
  return c;
}

function newProxy(fold: Fold, id: string): Proxy {
  // every field in its final order; the derived ones (kind, network status, status...) are
  // completed by completeProxies
  const p: Proxy = { id, hostname: '', kind: 'other', services: [], clientCode: null, clientCodes: [], clientDesktops: [], unlabelledDesktops: 0, shared: false, version: null, lastSeen: null, networkStatus: 'unreachable', locked: false, status: 'unreachable', updateNeeded: false, incompatible: false, windowsServers: 0, locks: [] };
  if (fold.withDesktops) p.desktops = [];
  fold.byId.add(p);
  return p;
}

/** The inventory: services, hostname, version, last heartbeat. Returns the cluster's version (the Auth service's). */
function foldInstances(fold: Fold, items: unknown[]): string | null {
  let clusterVersion: string | null = null;
  for (const raw of items) {
    const it = obj(raw);
    const id = str(obj(it?.metadata)?.name);
    const spec = obj(it?.spec);
    if (!it || !id || !spec) continue;
    const p = fold.byId.get(id) ?? newProxy(fold, id);
    if (Array.isArray(spec.services)) for (const sv of spec.services) if (typeof sv === 'string' && !p.services.includes(sv)) p.services.push(sv);
    p.hostname = str(spec.hostname) ?? p.hostname;
    p.version = str(spec.version) ?? p.version;
    p.lastSeen = str(spec.last_seen) ?? null;
    if (p.services.includes('Auth')) {
      const v = cleanOnce(fold, p.version);
      if (v && (!clusterVersion || semver.gt(v, clusterVersion))) clusterVersion = v;
    }
  }
  return clusterVersion;
}

function foldDesktopServices(fold: Fold, items: unknown[]) {
  for (const raw of items) {
    const it = obj(raw);
    const id = str(obj(it?.metadata)?.name);
    const spec = obj(it?.spec);
    if (!it || !id || !spec) continue;
    // a proxy already there is one the inventory lists: its services are the inventory's
    let p = fold.byId.get(id);
    if (!p) (p = newProxy(fold, id)).services.push('WindowsDesktop');
    if (!p.hostname) p.hostname = str(spec.hostname) ?? '';
    p.version ??= str(spec.teleport_version) ?? null;
  }
}

function foldDesktops(fold: Fold, items: unknown[]) {
  const { byId, withDesktops } = fold;
  for (const raw of items) {
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
}

function foldLocks(fold: Fold, items: unknown[], now: number) {
  for (const raw of items) {
    const it = obj(raw);
    const spec = obj(it?.spec);
    const target = obj(spec?.target);
    const id = str(target?.server_id) ?? str(target?.node); // `node` is the legacy field
    const name = str(obj(it?.metadata)?.name);
    if (!spec || !id || !name) continue;
    const expires = str(spec.expires) ?? null;
    // tctl lists expired locks too: only a lock without expiry or expiring later is in force
    if (expires !== null) {
      const t = parseTimestamp(expires);
      if (!Number.isFinite(t) || t <= now) continue;
    }
    fold.byId.get(id)?.locks.push({ name, message: typeof spec.message === 'string' ? spec.message : '', expires, createdBy: str(spec.created_by) ?? null, createdAt: str(spec.created_at) ?? null });
  }
}

/** The derived fields (clients, displayed status, version states: one per distinct version), in place; kind and network status come from the folds. */
function completeProxies(fold: Fold, clusterVersion: string | null, now: number): Proxy[] {
  const states = new Map<string, { updateNeeded: boolean; incompatible: boolean }>();
  const proxies: Proxy[] = [];
  for (const p of fold.byId.list) {
    if (!p.hostname) p.hostname = p.id;
    p.kind = kindOf(p.services);
    p.networkStatus = networkStatus(p.lastSeen, now);
    const n = p.clientCodes.length;
    if (n > 1) sortClients(p);
    p.clientCode = n === 1 ? p.clientCodes[0] : null;
    p.shared = n > 1 || (n > 0 && p.unlabelledDesktops > 0);
    p.locked = p.locks.length > 0;
    p.status = p.locked ? 'locked' : p.networkStatus;
    const key = p.version ?? '';
    let st = states.get(key);
    if (!st) states.set(key, (st = versionState(cleanOnce(fold, p.version), clusterVersion)));
    p.updateNeeded = st.updateNeeded;
    p.incompatible = st.incompatible;
    proxies.push(p);
  }
  return proxies;
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
