import type { ConsolePollState } from './state';

// A console's last poll in a few fields (issue 29): what a list of consoles shows for each one,
// carried by GET /api/consoles so that the dashboard draws the list from one answer. The full
// last poll (audit, DCs, certificate) stays GET /api/consoles/{id}/status.

export interface PollSummary {
  polled: boolean;
  polledAt?: string;
  ok?: boolean;
  error?: string;
  httpStatus?: number;
  consecutiveFailures?: number;
  lastSuccessAt?: string | null;
  version?: string | null;
  health?: string | null;
}

export function pollSummary(s: ConsolePollState | undefined): PollSummary {
  if (!s) return { polled: false };
  return {
    polled: true,
    polledAt: s.polledAt,
    ok: s.ok,
    ...(s.error ? { error: s.error } : {}),
    ...(s.httpStatus ? { httpStatus: s.httpStatus } : {}),
    consecutiveFailures: s.consecutiveFailures,
    lastSuccessAt: s.lastSuccessAt ?? null,
    // a console that failed its last poll keeps the version of its last successful one
    version: s.status?.instance.version ?? null,
    health: s.status?.health.status ?? null,
  };
}
