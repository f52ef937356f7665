import { autoUpdateInScope } from '@lib/fleet/autoupdate';
import { fleetHandler } from '@lib/fleet/http';
import { gatewaysInScope } from '@lib/fleet/proxies';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { CLUSTER } from '@lib/api/fleet/errors';

const gateways = defineFleetRoute({
  method: 'GET',
  path: '/api/access/gateways',
  summary: 'Windows desktop gateways of the clients in scope',
  access: 'signed-in',
  responses: { 200: A.gateways },
  errors: CLUSTER,
  async handle({ rt, access }) {
    return { body: await gatewaysInScope(rt, access!) };
  },
});

const autoupdate = defineFleetRoute({
  method: 'GET',
  path: '/api/access/autoupdate',
  summary: "Agent auto-update: mode, target version, strategy, rollout and group states (read-only); each client's group the rollout does not hold as not scheduled",
  access: 'signed-in',
  responses: { 200: A.autoUpdate },
  errors: CLUSTER,
  async handle({ rt, access }) {
    return { body: await autoUpdateInScope(rt, access!) };
  },
});

export const routes = [gateways, autoupdate];
export const handler = fleetHandler(routes);
