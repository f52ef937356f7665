import { autoUpdateGroupVisible, readAutoUpdate } from '@lib/fleet/autoupdate';
import { fleetHandler } from '@lib/fleet/http';
import { nodeRow } from '@lib/fleet/node-list';
import { proxiesInScope } from '@lib/fleet/nodes';
import { nodesView } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const gateways = defineFleetRoute({
  method: 'GET',
  path: '/api/access/gateways',
  summary: 'Windows desktop gateways of the clients in scope',
  access: 'signed-in',
  async handle({ rt, access }) {
    const view = await nodesView(rt);
    const rows = proxiesInScope(view.proxies, access!.visibleCodes())
      .filter((p) => p.kind === 'gateway')
      .map((p) => nodeRow(p, view.clientNames))
      .sort((a, b) => (a.clientCode ?? '\uffff').localeCompare(b.clientCode ?? '\uffff') || a.hostname.localeCompare(b.hostname));
    return { body: { gateways: rows, readAt: view.readAt } };
  },
});

const autoupdate = defineFleetRoute({
  method: 'GET',
  path: '/api/access/autoupdate',
  summary: 'Agent auto-update: mode, target version, strategy, rollout and group states (read-only)',
  access: 'signed-in',
  async handle({ rt, access }) {
    return { body: await readAutoUpdate(rt.cli, autoUpdateGroupVisible(access!.visibleCodes())) };
  },
});

export const routes = [gateways, autoupdate];
export const handler = fleetHandler(routes);
