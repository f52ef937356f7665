import { isApiError } from '../errors';
import type { FleetAccess } from './access';
import { appendUnderEachClient } from './audit-filing';
import { inventoryCsv } from './inventory';
import { lockNode, lockRefusal, protectedNode, unlockNode, type LockBody } from './locks';
import { listNodes, nodeRow, type NodeListQuery } from './node-list';
import { proxiesInScope, type Proxy } from './nodes';
import type { Acting } from './register';
import { nodesView } from './resources';
import type { FleetRuntime } from './runtime';

// The proxies of the cluster as the routes use them: one cluster read per request, the caller's
// part of it (administrators all, technicians their clients' desktops), and every export, lock
// and unlock written with its audit row filed under each client it concerns.

const visible = <P extends Proxy>(access: FleetAccess, proxies: P[]) => proxiesInScope(proxies, access.visibleCodes());

/** Windows desktop gateways of the clients in scope, by client then host name. */
export async function gatewaysInScope(rt: FleetRuntime, access: FleetAccess) {
  const view = await nodesView(rt);
  const gateways = visible(access, view.proxies)
    .filter((p) => p.kind === 'gateway')
    .map((p) => nodeRow(p, view.clientNames))
    .sort((a, b) => (a.clientCode ?? '\uffff').localeCompare(b.clientCode ?? '\uffff') || a.hostname.localeCompare(b.hostname));
  return { gateways, readAt: view.readAt };
}

/** The proxy list with summary counts, filtered by scope and the query (desktops counted, not read: issue 28). */
export async function proxiesList(rt: FleetRuntime, access: FleetAccess, query: NodeListQuery) {
  const view = await nodesView(rt);
  const out = listNodes(visible(access, view.proxies), query, view.clientNames);
  return { ...out, clusterVersion: view.clusterVersion, readAt: view.readAt };
}

/** The inventory CSV of the listed proxies, audited `nodes.export` under each client it covers. */
export async function exportInventory(rt: FleetRuntime, access: FleetAccess, query: NodeListQuery, by: Acting): Promise<{ csv: string; filename: string }> {
  const view = await nodesView(rt, { desktops: true }); // a line per desktop
  const proxies = visible(access, view.proxies);
  const { nodes } = listNodes(proxies, query, view.clientNames);
  const { csv, coverage } = inventoryCsv(nodes, new Map(proxies.map((p) => [p.id, p])), view.clientNames);
  // filed under each client the export covers, with that client's lines only
  const covered = [...coverage.keys()].map((k) => k || null);
  await appendUnderEachClient(rt, { event: 'nodes.export', outcome: 'success', actor: by.actor, correlationId: by.correlationId, details: { filters: query } }, covered, (c) => coverage.get(c ?? '') ?? { lines: 0, proxies: 0 });
  return { csv, filename: `fleet-inventory-${view.readAt.slice(0, 10)}.csv` };
}

const target = (p: Proxy) => ({ id: p.id, name: p.hostname, kind: p.kind });

/**
 * Lock a proxy as the cluster has it (`full`: a lock cuts every desktop the gateway serves).
 * A protected node is refused (409, audited) before the cluster CLI is asked anything.
 */
export async function lockProxy(rt: FleetRuntime, proxy: Proxy, body: LockBody, by: Acting): Promise<{ locked: true; lockName: string | null; pending?: true }> {
  const audit = (outcome: string, extra: Record<string, unknown> = {}, reason?: string) =>
    appendUnderEachClient(rt, { event: 'node.lock', outcome, reason, actor: by.actor, target: target(proxy), correlationId: by.correlationId, details: { duration: body.duration, ...extra } }, proxy.clientCodes);
  const refusal = lockRefusal(proxy);
  if (refusal) {
    await audit('denied', { reason: refusal }, 'protected_node');
    throw protectedNode(refusal); // never reaches the cluster CLI
  }
  try {
    const r = await lockNode(rt.cli, proxy.id, body);
    await audit('success', { lockName: r.lockName, pending: r.pending, message: body.message });
    return { locked: true, lockName: r.lockName, ...(r.pending ? { pending: true as const } : {}) };
  } catch (e) {
    await audit('error', {}, isApiError(e) ? e.code : 'internal_error');
    throw e;
  }
}

/** Remove every active lock on a proxy; audited under each client it serves, failures too. */
export async function unlockProxy(rt: FleetRuntime, proxy: Proxy, by: Acting): Promise<{ locked: false; removed: string[] }> {
  const base = { event: 'node.unlock', actor: by.actor, target: target(proxy), correlationId: by.correlationId };
  try {
    const { removed } = await unlockNode(rt.cli, proxy.id);
    await appendUnderEachClient(rt, { ...base, outcome: 'success', details: { removed } }, proxy.clientCodes);
    return { locked: false, removed };
  } catch (e) {
    await appendUnderEachClient(rt, { ...base, outcome: 'error', reason: isApiError(e) ? e.code : 'internal_error' }, proxy.clientCodes);
    throw e;
  }
}
