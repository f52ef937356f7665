import { loadFleetConfig, type FleetConfig } from '@lib/config';
import { healthHandler, type HealthRoute } from '@lib/http/health';

// The fleet plane's probe, on the lean health chain (no token, no table, no cluster CLI).
const live: HealthRoute<FleetConfig> = {
  method: 'GET',
  path: '/health/live',
  summary: 'The process is up (anonymous, no detail)',
  access: 'anonymous',
  async handle() {
    return { body: { status: 'ok' } };
  },
};

let config: FleetConfig | undefined;

export const routes: HealthRoute<any>[] = [live];
export const handler = healthHandler(routes, () => (config ??= loadFleetConfig()), (c) => ({ publicOrigin: c.FLEET_PUBLIC_ORIGIN, hstsMaxAge: c.FLEET_HSTS_MAX_AGE }));
