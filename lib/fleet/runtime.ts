import { AuditChain } from '../audit';
import { loadMasterKey } from '../crypto/master-key';
import { logger } from '../log';
import type { Store } from '../store';
import { createFleetStore } from './store';
import { Tctl, type ClusterCli } from './cluster-cli';
import { loadFleetConfig, type FleetConfig } from './config';
import { createJwks, type JwksResolver } from './jwt';
import { processEnvironment, type Environment } from '../config/environment';

// The composition root of the fleet plane: built once per instance, handed to lib/fleet.
export interface FleetRuntime {
  config: FleetConfig;
  store: Store;
  audit: AuditChain;
  cli: ClusterCli;
  jwks?: JwksResolver;
  masterKey(): Promise<Buffer>;
}

export function createFleetRuntime(opts: { env?: Environment; store?: Store; cli?: ClusterCli } = {}): FleetRuntime {
  const env = opts.env ?? processEnvironment();
  const config = loadFleetConfig(env);
  if (!config.ACCESS_JWT_JWKS_URL) logger.warn('ACCESS_JWT_JWKS_URL is not set: access-platform sign-in is off, only the local administrator can sign in');
  const store = opts.store ?? createFleetStore({ endpoint: config.DYNAMODB_ENDPOINT, tableName: config.FLEET_TABLE });
  return {
    config,
    store,
    audit: new AuditChain(store, 'fleet'),
    cli: opts.cli ?? new Tctl(config),
    jwks: config.ACCESS_JWT_JWKS_URL ? createJwks(config.ACCESS_JWT_JWKS_URL) : undefined,
    masterKey: () => loadMasterKey(env),
  };
}

let singleton: FleetRuntime | undefined;
/** The per-instance runtime of a fleet Lambda (configuration validated at cold start). */
export const fleetRuntime = (): FleetRuntime => (singleton ??= createFleetRuntime());
