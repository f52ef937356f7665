import { runtime } from '@lib/runtime';
import { serviceAuditChain } from '@lib/password-service/audit';
import { logger } from '@lib/log';

// Daily: delete audit rows older than Audit:RetentionDays (0 keeps all; the purge is itself
// audited), in the console's chain and the password service's own, then verify the console's
// whole chain (the fleet status poll only verifies what is new).
export async function handler() {
  const rt = runtime();
  const actor = { name: 'retention', provider: 'system' };
  const deleted = await rt.audit.purge(rt.config.Audit.RetentionDays, actor);
  const serviceDeleted = await serviceAuditChain(rt.store).purge(rt.config.Audit.RetentionDays, actor);
  const verified = await rt.audit.verify('full');
  if (!verified.ok) logger.error('audit chain does not verify', { ...verified });
  return { deleted, serviceDeleted, verified };
}
