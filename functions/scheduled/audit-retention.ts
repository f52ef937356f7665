import { runtime } from '@lib/runtime';
import { holdsServiceItems, purgeServiceAudit } from '@lib/password-service/link/service-chain';

// Daily: delete audit rows older than Audit:RetentionDays (0 keeps all; the purge is itself
// audited; the signed anchor moves first) in the console's chain, and in the password service's
// when the console's store holds it (the table they share on DynamoDB). On SQLite the service's
// chain is in its own file, out of the console's reach: the service purges it itself. The full
// verification is the hourly audit-verify job.
export async function handler() {
  const rt = runtime();
  const actor = { name: 'retention', provider: 'system' };
  const deleted = await rt.audit.purge(rt.config.Audit.RetentionDays, actor);
  const serviceDeleted = holdsServiceItems(rt.store) ? await purgeServiceAudit(rt.store, rt.config.Audit.RetentionDays) : undefined;
  return { deleted, ...(serviceDeleted === undefined ? {} : { serviceDeleted }) };
}
