import { z } from 'zod';
import { fleetHandler } from '@lib/fleet/http';
import { lockBodySchema } from '@lib/fleet/locks';
import { nodeDetail, nodeListQuerySchema } from '@lib/fleet/node-list';
import { exportInventory, lockProxy, proxiesList, unlockProxy } from '@lib/fleet/proxies';
import { nodeResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { CLUSTER } from '@lib/api/fleet/errors';
import { errorCodes, file, HEADERS } from '@lib/http/answers';

const idParams = z.object({ id: z.string().min(1).max(256).regex(/^[A-Za-z0-9._:-]+$/) });

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/nodes',
  summary: 'Proxies with summary counts (client proxies unless ?all=1), filtered by scope',
  access: 'signed-in',
  query: nodeListQuerySchema,
  responses: { 200: A.nodes },
  errors: CLUSTER,
  async handle({ rt, access, query }) {
    return { body: await proxiesList(rt, access!, query) };
  },
});

const inventory = defineFleetRoute({
  method: 'GET',
  path: '/api/nodes/inventory',
  summary: 'CSV: one line per Windows desktop of the listed proxies (audited nodes.export)',
  access: 'signed-in',
  query: nodeListQuerySchema,
  responses: { 200: file('text/csv', 'One line per Windows desktop of the listed proxies (UTF-8, a header line)', HEADERS.attachment) },
  errors: CLUSTER,
  async handle(ctx) {
    const { csv, filename } = await exportInventory(ctx.rt, ctx.access!, ctx.query, ctx);
    return { text: csv, contentType: 'text/csv; charset=utf-8', headers: { 'content-disposition': `attachment; filename="${filename}"` } };
  },
});

const get = defineFleetRoute({
  method: 'GET',
  path: '/api/nodes/{id}',
  summary: 'One proxy with its desktops and active locks (viewer of its client; 404 out of scope)',
  access: 'client',
  level: 'viewer',
  params: idParams,
  resource: nodeResource,
  responses: { 200: A.nodeDetail },
  errors: CLUSTER,
  async handle({ rt, addressed }) {
    const { proxy, view } = addressed!.resource;
    return { body: nodeDetail(proxy, view.clientNames, { proxyAddr: rt.config.DEFAULT_PROXY_ADDR, cluster: rt.config.ACCESS_CLUSTER_NAME }) };
  },
});

const lock = defineFleetRoute({
  method: 'POST',
  path: '/api/nodes/{id}/lock',
  summary: 'Lock a proxy: { duration: 1|4|12|24|72|168|"none", message ≤ 200 } (operator of its client; of each client of a shared gateway)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  body: lockBodySchema,
  responses: { 200: A.locked },
  errors: errorCodes(CLUSTER, { 409: ['protected_node'], 502: ['lock_failed'] }),
  async handle(ctx) {
    // the proxy as the cluster has it: a lock cuts every desktop the gateway serves
    return { body: await lockProxy(ctx.rt, ctx.addressed!.resource.full, ctx.body, ctx) };
  },
});

const unlock = defineFleetRoute({
  method: 'POST',
  path: '/api/nodes/{id}/unlock',
  summary: 'Unlock a proxy: removes every active lock on it (operator of its client; of each client of a shared gateway)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: nodeResource,
  responses: { 200: A.unlocked },
  errors: CLUSTER,
  async handle(ctx) {
    return { body: await unlockProxy(ctx.rt, ctx.addressed!.resource.full, ctx) };
  },
});

export const routes = [list, inventory, get, lock, unlock];
export const handler = fleetHandler(routes);
