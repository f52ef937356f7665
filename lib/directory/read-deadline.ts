import { ApiError, overloaded } from '../errors';
import type { RequestDeadline } from '../request-scope';

// A read's deadline in the directory pool (issue 28, Concurrency:ReadBudget; the pipeline puts it
// in the request scope for a GET or HEAD).

/** A read's deadline as its tries see it: once `expired`, no new try, no further wait for a slot. */
export interface Cut extends RequestDeadline {
  expired: boolean;
}

/**
 * 503 `overloaded` (reason `deadline`), or `directory_unavailable` when every DC is known down:
 * that is what the operator needs to hear, not "try again". (A try that reaches a step after the
 * deadline answered throws it too, unheard.)
 */
export const deadlineRefusal = (d: RequestDeadline, allDown: boolean) => (allDown ? new ApiError(503, 'directory_unavailable') : overloaded('deadline', d.retryAfterSeconds));

/**
 * `read` answered by its deadline at the latest; without one, as it goes. Past it already: refused
 * before anything is sent. The read's tries already sent run on, unheard.
 */
export async function withinDeadline<T>(deadline: RequestDeadline | undefined, allDown: () => boolean, read: (cut?: Cut) => Promise<T>): Promise<T> {
  if (!deadline) return read(undefined);
  if (Date.now() >= deadline.at) throw deadlineRefusal(deadline, allDown());
  const cut: Cut = { ...deadline, expired: false };
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      cut.expired = true;
      reject(deadlineRefusal(cut, allDown()));
    }, Math.max(0, cut.at - Date.now()));
  });
  const work = read(cut);
  work.catch(() => undefined); // after the deadline answered, the read's own end is not heard
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
