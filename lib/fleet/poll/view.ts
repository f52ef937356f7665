import type { Store } from '../../store';
import { readPollState } from './state';

// A console's last poll as the dashboard shows it (GET /api/consoles/{id}/status): what the
// fleet last read, never the token. `polled: false` until the first poll.
export async function consolePollView(store: Store, consoleId: string) {
  const s = await readPollState(store, consoleId);
  if (!s) return { consoleId, polled: false };
  return {
    consoleId,
    polled: true,
    polledAt: s.polledAt,
    ok: s.ok,
    ...(s.error ? { error: s.error } : {}),
    ...(s.httpStatus ? { httpStatus: s.httpStatus } : {}),
    ms: s.ms,
    consecutiveFailures: s.consecutiveFailures,
    lastSuccessAt: s.lastSuccessAt ?? null,
    // a console that failed its last poll keeps the version of its last successful one
    version: s.status?.instance.version ?? null,
    health: s.status?.health.status ?? null,
    audit: s.status ? { chain: s.status.audit.chain ?? null, failedLogins24h: s.status.audit.failedLogins24h ?? null, witnessedSeq: s.witness?.seq ?? null, rewriteDetectedAt: s.rewrite?.detectedAt ?? null } : null,
    dcs: s.status?.directory.dcs ?? [],
    certificate: s.cert ? { validTo: s.cert.validTo, subject: s.cert.subject, readAt: s.cert.readAt } : null,
  };
}
