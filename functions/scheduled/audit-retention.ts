import { runtime } from '@lib/runtime';
import { serviceAuditChain } from '@lib/password-service/link/service-chain';

// Daily: delete audit rows older than Audit:RetentionDays (0 keeps all; the purge is itself
// audited; the signed anchor moves first), in the console's chain and the password service's
// own. The full verification is the hourly audit-verify job.
export async function handler() {
  const rt = runtime();
  const actor = { name: 'retention', provider: 'system' };
  const deleted = await rt.audit.purge(rt.config.Audit.RetentionDays, actor);
  const serviceDeleted = await serviceAuditChain(rt.store).purge(rt.config.Audit.RetentionDays, actor);
  return { deleted, serviceDeleted };
}
