import type { Store } from '../../store';
import { readPollState } from './state';
import { pollSummary } from './summary';

// A console's last poll as the dashboard shows it (GET /api/consoles/{id}/status): what the
// fleet last read, never the token. `polled: false` until the first poll. The list of consoles
// carries the summary part (./summary.ts).
export async function consolePollView(store: Store, consoleId: string) {
  const s = await readPollState(store, consoleId);
  if (!s) return { consoleId, polled: false as const };
  return {
    consoleId,
    ...pollSummary(s),
    ms: s.ms,
    audit: s.status ? { chain: s.status.audit.chain ?? null, failedLogins24h: s.status.audit.failedLogins24h ?? null, witnessedSeq: s.witness?.seq ?? null, rewriteDetectedAt: s.rewrite?.detectedAt ?? null } : null,
    dcs: s.status?.directory.dcs ?? [],
    certificate: s.cert ? { validTo: s.cert.validTo, subject: s.cert.subject, readAt: s.cert.readAt } : null,
  };
}
