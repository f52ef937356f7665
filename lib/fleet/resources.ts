import { getSilence, type Silence } from './alerts/silences';
import { getActiveAlert, type Alert } from './alerts/store';
import { getClient, listClients, type Client } from './clients';
import { getConsole, type ConsoleRecord } from './consoles';
import { buildProxies, proxyInScope, readSnapshot, type BuildOptions, type Proxy, type ProxyWithDesktops } from './nodes';
import type { Addressed, FleetContext } from './route';
import type { FleetRuntime } from './runtime';

// Resolvers of addressed resources for the guard: each returns the resource and its client
// (undefined when unknown; the guard answers 404 alike for unknown and out of scope).

export interface NodesView<P extends Proxy = Proxy> {
  proxies: P[];
  clusterVersion: string | null;
  clientNames: Map<string, string>;
  readAt: string;
}

/**
 * One cluster read per request, shared by the guard and the handler. The desktops themselves only
 * when asked for (`{ desktops: true }`: node detail, CSV); the list counts them (issue 28).
 */
export async function nodesView(rt: FleetRuntime, options: BuildOptions & { desktops: true }): Promise<NodesView<ProxyWithDesktops>>;
export async function nodesView(rt: FleetRuntime, options?: BuildOptions): Promise<NodesView>;
export async function nodesView(rt: FleetRuntime, options: BuildOptions = {}): Promise<NodesView> {
  const [snap, clients] = await Promise.all([readSnapshot(rt.cli), listClients(rt.store)]);
  const now = Date.now();
  const { proxies, clusterVersion } = buildProxies(snap, now, options);
  return { proxies, clusterVersion, clientNames: new Map(clients.map((c) => [c.code, c.name])), readAt: new Date(now).toISOString() };
}

/** `proxy` as the caller may see it (his clients' desktops only), `full` as the cluster has it. */
export type AddressedNode = { proxy: ProxyWithDesktops; full: ProxyWithDesktops; view: NodesView<ProxyWithDesktops> };

/** Every client a proxy serves, null for a desktop without a client code beside labelled ones. */
export const clientsServed = (p: Proxy): Array<string | null> => (p.shared && p.unlabelledDesktops > 0 ? [...p.clientCodes, null] : p.clientCodes);

/** A proxy by id, with its desktops (node detail; lock and unlock read the same view). */
export async function nodeResource(ctx: FleetContext<any, any, { id: string }>): Promise<Addressed<AddressedNode> | undefined> {
  const view = await nodesView(ctx.rt, { desktops: true });
  const full = view.proxies.find((p) => p.id === ctx.params.id);
  if (!full) return undefined;
  const proxy = proxyInScope(full, ctx.access?.visibleCodes()) ?? full; // out of scope: the guard answers 404
  return { clientCode: full.clientCode, ...(full.shared ? { clientCodes: clientsServed(full) } : {}), resource: { proxy, full, view } };
}

export async function clientResource(ctx: FleetContext<any, any, { code: string }>): Promise<Addressed<Client> | undefined> {
  const client = await getClient(ctx.rt.store, ctx.params.code);
  return client ? { clientCode: client.code, resource: client } : undefined;
}

export async function consoleResource(ctx: FleetContext<any, any, { id: string }>): Promise<Addressed<ConsoleRecord> | undefined> {
  const c = await getConsole(ctx.rt.store, ctx.params.id);
  return c ? { clientCode: c.clientCode, resource: c } : undefined;
}

/** An active alert by key: its client (none for the fleet plane's own alerts and shared proxies: administrators only, as in GET /api/alerts). */
export async function alertResource(ctx: FleetContext<any, any, { key: string }>): Promise<Addressed<Alert> | undefined> {
  const a = await getActiveAlert(ctx.rt.store, ctx.params.key);
  return a ? { clientCode: a.clientCode ?? null, resource: a } : undefined;
}

/** A silence in force by id: its client (none for a silence of a rule across clients: administrators only). */
export async function silenceResource(ctx: FleetContext<any, any, { id: string }>): Promise<Addressed<Silence> | undefined> {
  const s = await getSilence(ctx.rt.store, ctx.params.id);
  return s ? { clientCode: s.clientCode ?? null, resource: s } : undefined;
}
