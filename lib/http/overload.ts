import type { AuditChain } from '../audit';
import { logger } from '../log';
import type { Store } from '../store';
import { takeFromWindows } from '../store/window';

// Overload refusals (issue 28): a request refused 503 `overloaded` is logged each time, and audited
// at most once a minute per reason (`service.overloaded`), whichever instance refuses: a store
// window of one event per minute and reason decides which refusal writes the row. Each instance
// also remembers the minute locally, so a burst of refusals asks the store once, not once each.

const MINUTE_MS = 60_000;
const SYSTEM_ACTOR = { name: 'console', provider: 'system' };

/** reason -> until when this instance need not ask the store again (epoch ms) */
const quiet = new Map<string, number>();
/** refusals this instance made per reason since it last wrote or skipped a row (the row says how many it saw) */
const seen = new Map<string, number>();

export interface OverloadRefusal {
  /** the bound that refused: `start_budget`, `directory_connections`, `in_flight:<function>` */
  reason: string;
  retryAfterSeconds: number;
  correlationId?: string;
  /** the function (and route) refused */
  function?: string;
  route?: string;
  /** a gateway's in-flight counts at the refusal (running, waiting, limit, ...): logged, not audited */
  inFlight?: Record<string, number>;
}

/** The one log line of a refusal (every refusal has one; the audit has one row a minute per reason). */
export function logOverload(refusal: OverloadRefusal): void {
  const { inFlight, ...fields } = refusal;
  logger.warn('request refused: overloaded', { ...fields, ...inFlight });
}

/** Log one refusal; audit it when no row for its reason was written in the last minute. Never throws. */
export async function recordOverload(rt: { store: Store; audit: AuditChain }, refusal: OverloadRefusal, now: () => number = Date.now): Promise<void> {
  const { reason } = refusal;
  logOverload(refusal);
  seen.set(reason, (seen.get(reason) ?? 0) + 1);
  const t = now();
  if ((quiet.get(reason) ?? 0) > t) return;
  quiet.set(reason, t + MINUTE_MS); // also while the store answers: one ask per burst
  try {
    // read first (a read never waits for the writer's lock): of the instances that refuse in the
    // same minute only the first writes; the others see its entry and stay quiet without a write
    const taken = await takeFromWindows(rt.store, [{ scope: 'overload-audit', subject: reason, limit: 1, windowMs: MINUTE_MS }], { maxTries: 3, now });
    if (!taken.admitted) {
      // another instance wrote this minute's row: quiet until its minute ends
      quiet.set(reason, t + Math.max(1000, taken.retryAfterMs));
      return;
    }
    const refusedHere = seen.get(reason) ?? 1;
    seen.set(reason, 0);
    await rt.audit.append({
      event: 'service.overloaded',
      outcome: 'denied',
      reason,
      actor: SYSTEM_ACTOR,
      correlationId: refusal.correlationId,
      details: {
        retryAfterSeconds: refusal.retryAfterSeconds,
        ...(refusal.function ? { function: refusal.function } : {}),
        ...(refusal.route ? { route: refusal.route } : {}),
        // refusals of this reason this instance made since its last row (the log has each one)
        refusedByThisInstance: refusedHere,
        nextRowAfterSeconds: MINUTE_MS / 1000,
      },
    });
  } catch (e) {
    quiet.delete(reason);
    logger.error('overload refusal not audited', { reason, error: (e as Error)?.name });
  }
}

/** Tests: forget what this process remembered. */
export function forgetOverloadsForTests() {
  quiet.clear();
  seen.clear();
}
