import { loadConfig, type Config } from '@lib/config';
import { ApiError } from '@lib/errors';
import { healthHandler, type HealthRoute } from '@lib/http/health';
import { logger } from '@lib/log';

// The console's probes, on the lean health chain (no session, no directory).
interface HealthRuntime {
  config: Config;
  ready(): Promise<void>;
}

const live: HealthRoute<HealthRuntime> = {
  method: 'GET',
  path: '/health/live',
  summary: 'The process is up (anonymous, no detail)',
  access: 'anonymous',
  async handle() {
    return { body: { status: 'ok' } };
  },
};

const ready: HealthRoute<HealthRuntime> = {
  method: 'GET',
  path: '/health/ready',
  summary: 'The process is up and the database answers (anonymous, no detail)',
  access: 'anonymous',
  errors: { 503: ['not_ready'] },
  async handle({ rt }) {
    try {
      await rt.ready();
    } catch {
      throw new ApiError(503, 'not_ready');
    }
    return { body: { status: 'ok' } };
  },
};

let singleton: HealthRuntime | undefined;
/** Configuration validated at cold start, like every console function's (an invalid one answers 500). */
function healthRuntime(): HealthRuntime {
  if (singleton) return singleton;
  const { config, warnings } = loadConfig();
  for (const w of warnings) logger.warn(w);
  // the store is opened on the first readiness probe: the DynamoDB SDK takes longer to load than
  // the rest of this function, and the liveness probe never needs it
  let client: Promise<{ ping(): Promise<void> }> | undefined;
  const ready = async () => {
    // a store that could not be opened (its volume not there yet) is opened again at the next probe
    client ??= import('@lib/store')
      .then((m) => m.createStore())
      .catch((e) => {
        client = undefined;
        throw e;
      });
    await (await client).ping();
  };
  return (singleton = { config, ready });
}

// typed loosely: the route table of the console (all-routes.ts) lists the probes beside its routes
export const routes: HealthRoute<any>[] = [live, ready];
export const handler = healthHandler(routes, healthRuntime, (rt) => ({ publicOrigin: rt.config.Hosting.PublicOrigin, hstsMaxAge: rt.config.Hosting.HstsMaxAge }));
