import { z } from 'zod';
import { fleetHandler } from '@lib/fleet/http';
import { lockBodySchema, type LockBody } from '@lib/fleet/locks';
import { nodeDetail, nodeListQuerySchema, type NodeListQuery } from '@lib/fleet/node-list';
import { exportInventory, lockProxy, proxiesList, unlockProxy } from '@lib/fleet/proxies';
import { nodeResource, type AddressedNode } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const idParams = z.object({ id: z.string().min(1).max(256).regex(/^[A-Za-z0-9._:-]+$/) });
type Id = { id: string };

const list = defineFleetRoute<undefined, NodeListQuery>({
  method: 'GET',
  path: '/api/nodes',
  summary: 'Proxies with summary counts (client proxies unless ?all=1), filtered by scope',
  access: 'signed-in',
  query: nodeListQuerySchema,
  async handle({ rt, access, query }) {
    return { body: await proxiesList(rt, access!, query) };
  },
});

const inventory = defineFleetRoute<undefined, NodeListQuery>({
  method: 'GET',
  path: '/api/nodes/inventory',
  summary: 'CSV: one line per Windows desktop of the listed proxies (audited nodes.export)',
  access: 'signed-in',
  query: nodeListQuerySchema,
  async handle(ctx) {
    const { csv, filename } = await exportInventory(ctx.rt, ctx.access!, ctx.query, ctx);
    return { text: csv, contentType: 'text/csv; charset=utf-8', headers: { 'content-disposition': `attachment; filename="${filename}"` } };
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

const lock = defineFleetRoute<LockBody, undefined, Id, AddressedNode>({
  method: 'POST',
  path: '/api/nodes/{id}/lock',
  summary: 'Lock a proxy: { duration: 1|4|12|24|72|168|"none", message ≤ 200 } (operator of its client; of each client of a shared gateway)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  body: lockBodySchema,
  async handle(ctx) {
    // the proxy as the cluster has it: a lock cuts every desktop the gateway serves
    return { body: await lockProxy(ctx.rt, ctx.addressed!.resource.full, ctx.body, ctx) };
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
  async handle(ctx) {
    return { body: await unlockProxy(ctx.rt, ctx.addressed!.resource.full, ctx) };
  },
});

export const routes = [list, inventory, get, lock, unlock];
export const handler = fleetHandler(routes);
