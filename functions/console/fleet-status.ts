import { checkFleetToken, fleetStatus } from '@lib/fleet-status';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import pkg from '../../package.json';

const status = defineRoute({
  method: 'GET',
  path: '/api/fleet/v1/status',
  summary: 'Read-only status for the fleet plane (bearer token only)',
  access: 'bearer',
  async handle({ rt, header }) {
    await checkFleetToken(rt, header('authorization'));
    return { body: await fleetStatus(rt, pkg.version) };
  },
});

export const routes = [status];
export const handler = consoleHandler(routes);
