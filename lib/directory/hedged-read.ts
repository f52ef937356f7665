import { ApiError, overloadReason } from '../errors';
import { logger } from '../log';
import type { DcRoster } from './dc-roster';
import type { DcEndpoint } from './endpoints';
import { isConnectionError } from './failures';
import type { HedgeDelay } from './hedge-delay';
import type { Cut } from './read-deadline';

/**
 * A hedged read (DirectoryPool, issue 28): the first DC in `order` now; the next ready DC as well
 * when no answer came within the hedge delay, or at once when a try fails. The first answer wins
 * (an answer is also the directory refusing: DirectoryError, DirectoryInvalidCredentials); the
 * others run on unheard, and a DC still silent when another answered is suspected (tried after the
 * others for a while). After a read's deadline (`cut`) no new try starts.
 */
export function hedgedRead<T>(order: DcEndpoint[], hedge: HedgeDelay, roster: DcRoster, tryOn: (dc: DcEndpoint) => Promise<T>, cut?: Cut): Promise<T> {
  const delay = hedge.delay();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let running = 0;
    let hedgeTimer: NodeJS.Timeout | undefined;
    let lastError: unknown;
    const started = new Set<string>();
    const running_ = new Set<DcEndpoint>();
    const settle = () => {
      settled = true;
      clearTimeout(hedgeTimer);
      // a DC claimed for its one retry but never tried gives the claim back
      roster.unclaim(order.filter((dc) => !started.has(dc.name)));
    };
    const launch = (onlyReady: boolean): boolean => {
      if (cut?.expired) return false; // the request has been answered: no new try
      const dc = order.find((d) => !started.has(d.name) && (!onlyReady || roster.ready(d)));
      if (!dc) return false;
      started.add(dc.name);
      running++;
      running_.add(dc);
      const t0 = performance.now();
      tryOn(dc).then(
        (value) => {
          running--;
          running_.delete(dc);
          hedge.note(performance.now() - t0);
          if (settled) return;
          settle();
          // a hedge won: the DCs still silent on this read go after the others for a while
          for (const slow of running_) roster.suspect(slow, delay);
          resolve(value);
        },
        (e: unknown) => {
          running--;
          running_.delete(dc);
          if (settled) return;
          if (overloadReason(e) !== undefined) {
            // no connection slot for this try: another try may still answer
            lastError = e;
            if (running === 0) {
              settle();
              reject(e);
            }
            return;
          }
          if (!isConnectionError(e)) {
            settle();
            reject(e);
            return;
          }
          lastError = e;
          // failed: the next DC at once (a cooling one too, as a last resort)
          if (launch(false)) return armHedge();
          if (running === 0) {
            settle();
            logger.error('no domain controller reachable', { error: (lastError as Error)?.message });
            reject(new ApiError(503, 'directory_unavailable'));
          }
        },
      );
      return true;
    };
    const armHedge = () => {
      clearTimeout(hedgeTimer);
      hedgeTimer = setTimeout(() => {
        if (!settled && launch(true)) armHedge();
      }, delay);
    };
    if (!launch(false)) {
      reject(new ApiError(503, 'directory_unavailable'));
      return;
    }
    armHedge();
  });
}
