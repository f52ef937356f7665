import { fleetHandler } from '@lib/fleet/http';
import { defineFleetRoute } from '@lib/fleet/route';

const live = defineFleetRoute({
  method: 'GET',
  path: '/health/live',
  summary: 'The process is up (anonymous, no detail)',
  access: 'anonymous',
  async handle() {
    return { body: { status: 'ok' } };
  },
});

export const routes = [live];
export const handler = fleetHandler(routes);
