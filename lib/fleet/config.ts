// The fleet plane's configuration: its fields are declared with the console's in
// lib/config/fields.ts and loaded by lib/config (environment variables only, validated once at
// cold start; an invalid value fails the start).
export { FleetConfigError, LEVELS, loadFleetConfig, type FleetConfig, type Level } from '../config';
export { fleetEnvSchema } from '../config/fields';
