import { AuditChain } from '../../audit';
import type { Store } from '../../store';

// The password service's own audit chain: written by the service (service-side/audit.ts builds
// its rows), verified and purged by the console's scheduled jobs; both sides name it here.
export const SERVICE_CHAIN = 'password-service';
export const serviceAuditChain = (store: Store) => new AuditChain(store, SERVICE_CHAIN);
