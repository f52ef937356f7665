import { AuditChain } from '../../audit';
import type { Store } from '../../store';

// The password service's own audit chain: written by the service (service-side/audit.ts builds
// its rows); both sides name it here. Who purges it depends on where it lives:
//   - DynamoDB (AWS): the console and the service share one table, and the console's daily
//     retention job purges both chains (the service's role may not delete);
//   - SQLite (self-hosted, npm start): each owns its file, the console cannot see the service's
//     rows, and the service purges its own chain (purgeServiceAudit, run by its container's scheduler).
export const SERVICE_CHAIN = 'password-service';
export const serviceAuditChain = (store: Store) => new AuditChain(store, SERVICE_CHAIN);

/** Does this (console's) store also hold the password service's items? Only the shared DynamoDB table does. */
export const holdsServiceItems = (consoleStore: Store) => consoleStore.kind === 'dynamodb';

/**
 * The partition keys of the items the service writes (serverless.password-service.yml's
 * ownPartitions: its pin, the link's nonces, its LAPS rate windows, its audit chain, its DC
 * findings). A copy of the shared table is split on them when an instance moves to one file per service.
 */
export const SERVICE_PARTITIONS = ['PWDSVC', 'LINKNONCE', 'WINDOW#pwdsvc-laps#*', 'WINDOW#pwdsvc-bitlocker#*', `AUDIT#${SERVICE_CHAIN}`, `AUDITMETA#${SERVICE_CHAIN}`, `DCHEALTH#${SERVICE_CHAIN}`] as const;

export const isServiceItem = (pk: unknown): boolean =>
  typeof pk === 'string' && SERVICE_PARTITIONS.some((p) => (p.endsWith('*') ? pk.startsWith(p.slice(0, -1)) : pk === p));

/** The service's daily retention on its own store: rows older than Audit:RetentionDays (0 keeps all), the purge audited in its chain. */
export const purgeServiceAudit = (store: Store, retentionDays: number) => serviceAuditChain(store).purge(retentionDays, { name: 'retention', provider: 'system' });
