import { isApiError } from '../../errors';
import { logger } from '../../log';
import { exchangeOf, type HttpRequest } from './exchange';
import { httpResponse } from './response';

/**
 * Error mapping: an ApiError answers `{ code, ... }` with its status (a refusal the route declared
 * is first written as its audit row); anything else answers only `{ code: internal_error,
 * correlationId }` (DESIGN, security invariant 7), the detail going to the log.
 */
export function errorResponse() {
  return {
    name: 'errorResponse',
    onError: async (request: HttpRequest) => {
      const e = request.error;
      const ex = exchangeOf(request);
      const correlationId = ex?.correlationId ?? 'unknown';
      if (isApiError(e)) {
        if (ex?.refused && e.status < 500) await ex.refused(e);
        // a refusal that knows when it lifts says so in the standard header too (RFC 9110 Retry-After):
        // a rate window (429) and an overload (503 `overloaded`, issue 28)
        const retry = (e.status === 429 || e.status === 503) && typeof e.details.retryAfterSeconds === 'number' ? { 'retry-after': String(e.details.retryAfterSeconds) } : undefined;
        request.response = httpResponse({ status: e.status, body: e.body(), ...(retry ? { headers: retry } : {}) }, correlationId);
        return;
      }
      logger.error('unhandled error', { correlationId, method: ex?.method, path: ex?.path, error: e as Error });
      request.response = httpResponse({ status: 500, body: { code: 'internal_error', correlationId } }, correlationId);
    },
  };
}
