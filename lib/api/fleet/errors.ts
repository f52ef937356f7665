import type { ErrorCodes } from '../../http/answers';

// Error codes several fleet routes answer through a shared outside system (the pipeline's own are
// in lib/fleet/openapi.ts).

/** The cluster CLI failed (lib/fleet/cluster-cli.ts, ClusterCliError): the spec's codes, 502. */
export const CLUSTER: ErrorCodes = { 502: ['access_access_denied', 'access_credentials_expired', 'access_unavailable'] };
/** A join token's revocation failed: the answer names the manual command (lib/fleet/join-tokens.ts). */
export const TOKEN_REVOKE: ErrorCodes = { 502: ['access_access_denied', 'access_credentials_expired', 'access_unavailable', 'token_revoke_failed'] };
/** A deployment's next step before the one it needs, or after it is done (lib/fleet/deployments.ts requireState). */
export const DEPLOYMENT_STATE: ErrorCodes = { 409: ['deployment_completed', 'deployment_finished', 'deployment_gone', 'deployment_not_finished', 'deployment_not_validated'] };
