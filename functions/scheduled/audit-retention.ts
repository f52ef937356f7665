import { runtime } from '@lib/runtime';

import { logger } from '@lib/log';

// Daily: delete audit rows older than Audit:RetentionDays (0 keeps all; the purge is itself
// audited), then verify the whole chain (the fleet status poll only verifies what is new).
export async function handler() {
  const rt = runtime();
  const deleted = await rt.audit.purge(rt.config.Audit.RetentionDays, { name: 'retention', provider: 'system' });
  const verified = await rt.audit.verify('full');
  if (!verified.ok) logger.error('audit chain does not verify', { ...verified });
  return { deleted, verified };
}
