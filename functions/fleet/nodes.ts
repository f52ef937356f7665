import { z } from 'zod';
import { isApiError } from '@lib/errors';
import { fleetHandler } from '@lib/fleet/http';
import { inventoryCsv } from '@lib/fleet/inventory';
import { lockBodySchema, lockNode, lockRefusal, protectedNode, unlockNode, type LockBody } from '@lib/fleet/locks';
import { listNodes, nodeDetail, nodeListQuerySchema, type NodeListQuery } from '@lib/fleet/node-list';
import { nodeResource, nodesView, type AddressedNode } from '@lib/fleet/resources';
import { defineFleetRoute, type FleetContext } from '@lib/fleet/route';
import type { Proxy } from '@lib/fleet/nodes';

const idParams = z.object({ id: z.string().min(1).max(256).regex(/^[A-Za-z0-9._:-]+$/) });
type Id = { id: string };

/** The caller's scope as a row filter: administrators see every node, technicians their clients'. */
const scopeFilter = (ctx: FleetContext) => {
  const visible = ctx.access!.visibleCodes();
  return (p: Proxy) => !visible || (p.clientCode !== null && visible.has(p.clientCode));
};

const list = defineFleetRoute<undefined, NodeListQuery>({
  method: 'GET',
  path: '/api/nodes',
  summary: 'Proxies with summary counts (client proxies unless ?all=1), filtered by scope',
  access: 'signed-in',
  query: nodeListQuerySchema,
  async handle(ctx) {
    const view = await nodesView(ctx.rt);
    const out = listNodes(view.proxies, ctx.query, scopeFilter(ctx), view.clientNames);
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
    const { nodes } = listNodes(view.proxies, ctx.query, scopeFilter(ctx), view.clientNames);
    const { csv, lines } = inventoryCsv(nodes, view.byId);
    const clients = [...new Set(nodes.map((n) => n.clientCode).filter((c): c is string => !!c))].sort();
    await ctx.rt.audit.append({
      event: 'nodes.export',
      outcome: 'success',
      actor: ctx.actor,
      ...(clients.length === 1 ? { client: clients[0] } : {}),
      correlationId: ctx.correlationId,
      details: { lines, proxies: nodes.length, clients, filters: ctx.query },
    });
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
  summary: 'Lock a proxy: { duration: 1|4|12|24|72|168|"none", message ≤ 200 } (operator of its client)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  body: lockBodySchema,
  async handle({ rt, body, addressed, actor, correlationId }) {
    const { proxy } = addressed!.resource;
    const audit = (outcome: string, extra: Record<string, unknown> = {}, reason?: string) =>
      rt.audit.append({ event: 'node.lock', outcome, reason, actor, ...(proxy.clientCode ? { client: proxy.clientCode } : {}), target: target(proxy), correlationId, details: { duration: body.duration, ...extra } });
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
  summary: 'Unlock a proxy: removes every active lock on it (operator of its client)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  async handle({ rt, addressed, actor, correlationId }) {
    const { proxy } = addressed!.resource;
    const base = { event: 'node.unlock', actor, ...(proxy.clientCode ? { client: proxy.clientCode } : {}), target: target(proxy), correlationId };
    try {
      const { removed } = await unlockNode(rt.cli, proxy.id);
      await rt.audit.append({ ...base, outcome: 'success', details: { removed } });
      return { body: { locked: false, removed } };
    } catch (e) {
      await rt.audit.append({ ...base, outcome: 'error', reason: isApiError(e) ? e.code : 'internal_error' });
      throw e;
    }
  },
});

export const routes = [list, inventory, get, lock, unlock];
export const handler = fleetHandler(routes);
