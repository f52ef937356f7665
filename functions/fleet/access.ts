import { readAutoUpdate } from '@lib/fleet/autoupdate';
import { fleetHandler } from '@lib/fleet/http';
import { nodeRow } from '@lib/fleet/node-list';
import { nodesView } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const gateways = defineFleetRoute({
  method: 'GET',
  path: '/api/access/gateways',
  summary: 'Windows desktop gateways of the clients in scope',
  access: 'signed-in',
  async handle({ rt, access }) {
    const view = await nodesView(rt);
    const visible = access!.visibleCodes();
    const rows = view.proxies
      .filter((p) => p.kind === 'gateway' && (!visible || (p.clientCode !== null && visible.has(p.clientCode))))
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
    const visible = access!.visibleCodes();
    // update groups are named client-<code>: a technician sees his clients' groups and shared ones
    const groupVisible = (name: string) => !visible || !name.startsWith('client-') || visible.has(name.slice('client-'.length));
    return { body: await readAutoUpdate(rt.cli, groupVisible) };
  },
});

export const routes = [gateways, autoupdate];
export const handler = fleetHandler(routes);
