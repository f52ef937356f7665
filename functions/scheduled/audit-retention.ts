import { runtime } from '@lib/runtime';

// Daily: delete audit rows older than Audit:RetentionDays (0 keeps all; the purge is itself
// audited; the signed anchor moves first). The full verification is the hourly audit-verify job.
export async function handler() {
  const rt = runtime();
  const deleted = await rt.audit.purge(rt.config.Audit.RetentionDays, { name: 'retention', provider: 'system' });
  return { deleted };
}
