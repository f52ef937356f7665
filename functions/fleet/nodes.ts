import { z } from 'zod';
import { isApiError } from '@lib/errors';
import { appendUnderEachClient } from '@lib/fleet/audit-filing';
import { fleetHandler } from '@lib/fleet/http';
import { inventoryCsv } from '@lib/fleet/inventory';
import { lockBodySchema, lockNode, lockRefusal, protectedNode, unlockNode, type LockBody } from '@lib/fleet/locks';
import { listNodes, nodeDetail, nodeListQuerySchema, type NodeListQuery } from '@lib/fleet/node-list';
import { proxiesInScope, type Proxy } from '@lib/fleet/nodes';
import { nodeResource, nodesView, type AddressedNode } from '@lib/fleet/resources';
import { defineFleetRoute, type FleetContext } from '@lib/fleet/route';

const idParams = z.object({ id: z.string().min(1).max(256).regex(/^[A-Za-z0-9._:-]+$/) });
type Id = { id: string };

/** The proxies as the caller may see them: administrators all, technicians their clients' part. */
const inScope = (ctx: FleetContext, proxies: Proxy[]) => proxiesInScope(proxies, ctx.access!.visibleCodes());

const list = defineFleetRoute<undefined, NodeListQuery>({
  method: 'GET',
  path: '/api/nodes',
  summary: 'Proxies with summary counts (client proxies unless ?all=1), filtered by scope',
  access: 'signed-in',
  query: nodeListQuerySchema,
  async handle(ctx) {
    const view = await nodesView(ctx.rt);
    const out = listNodes(inScope(ctx, view.proxies), ctx.query, view.clientNames);
    return { body: { ...out, clusterVersion: view.clusterVersion, readAt: view.readAt } };
  },
});

const inventory = defineFleetRoute<undefined, NodeListQuery>({
  method: 'GET',
  path: '/api/nodes/inventory',
  summary: 'CSV: one line per Windows desktop of the listed proxies (audited nodes.export)',
  access: 'signed-in',
  query: nodeListQuerySchema,
  async handle(ctx) {
    const view = await nodesView(ctx.rt);
    const proxies = inScope(ctx, view.proxies);
    const { nodes } = listNodes(proxies, ctx.query, view.clientNames);
    const { csv, coverage } = inventoryCsv(nodes, new Map(proxies.map((p) => [p.id, p])), view.clientNames);
    // filed under each client the export covers, with that client's lines only
    const covered = [...coverage.keys()].map((k) => k || null);
    await appendUnderEachClient(ctx.rt, { event: 'nodes.export', outcome: 'success', actor: ctx.actor, correlationId: ctx.correlationId, details: { filters: ctx.query } }, covered, (c) => coverage.get(c ?? '') ?? { lines: 0, proxies: 0 });
    const stamp = view.readAt.slice(0, 10);
    return { text: csv, contentType: 'text/csv; charset=utf-8', headers: { 'content-disposition': `attachment; filename="fleet-inventory-${stamp}.csv"` } };
  },
});

const get = defineFleetRoute<undefined, undefined, Id, AddressedNode>({
  method: 'GET',
  path: '/api/nodes/{id}',
  summary: 'One proxy with its desktops and active locks (viewer of its client; 404 out of scope)',
  access: 'client',
  level: 'viewer',
  params: idParams,
  resource: nodeResource,
  async handle({ rt, addressed }) {
    const { proxy, view } = addressed!.resource;
    return { body: nodeDetail(proxy, view.clientNames, { proxyAddr: rt.config.DEFAULT_PROXY_ADDR, cluster: rt.config.ACCESS_CLUSTER_NAME }) };
  },
});

const target = (p: Proxy) => ({ id: p.id, name: p.hostname, kind: p.kind });

const lock = defineFleetRoute<LockBody, undefined, Id, AddressedNode>({
  method: 'POST',
  path: '/api/nodes/{id}/lock',
  summary: 'Lock a proxy: { duration: 1|4|12|24|72|168|"none", message ≤ 200 } (operator of its client; of each client of a shared gateway)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  body: lockBodySchema,
  async handle({ rt, body, addressed, actor, correlationId }) {
    const proxy = addressed!.resource.full; // a lock cuts every desktop the gateway serves
    const audit = (outcome: string, extra: Record<string, unknown> = {}, reason?: string) =>
      appendUnderEachClient(rt, { event: 'node.lock', outcome, reason, actor, target: target(proxy), correlationId, details: { duration: body.duration, ...extra } }, proxy.clientCodes);
    const refusal = lockRefusal(proxy);
    if (refusal) {
      await audit('denied', { reason: refusal }, 'protected_node');
      throw protectedNode(refusal); // never reaches the cluster CLI
    }
    try {
      const r = await lockNode(rt.cli, proxy.id, body);
      await audit('success', { lockName: r.lockName, pending: r.pending, message: body.message });
      return { body: { locked: true, lockName: r.lockName, ...(r.pending ? { pending: true } : {}) } };
    } catch (e) {
      await audit('error', {}, isApiError(e) ? e.code : 'internal_error');
      throw e;
    }
  },
});

const unlock = defineFleetRoute<undefined, undefined, Id, AddressedNode>({
  method: 'POST',
  path: '/api/nodes/{id}/unlock',
  summary: 'Unlock a proxy: removes every active lock on it (operator of its client; of each client of a shared gateway)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  async handle({ rt, addressed, actor, correlationId }) {
    const proxy = addressed!.resource.full;
    const base = { event: 'node.unlock', actor, target: target(proxy), correlationId };
    try {
      const { removed } = await unlockNode(rt.cli, proxy.id);
      await appendUnderEachClient(rt, { ...base, outcome: 'success', details: { removed } }, proxy.clientCodes);
      return { body: { locked: false, removed } };
    } catch (e) {
      await appendUnderEachClient(rt, { ...base, outcome: 'error', reason: isApiError(e) ? e.code : 'internal_error' }, proxy.clientCodes);
      throw e;
    }
  },
});

export const routes = [list, inventory, get, lock, unlock];
export const handler = fleetHandler(routes);
