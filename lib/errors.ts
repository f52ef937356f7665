// The one error type of the product: a stable `code`, an HTTP status, optional safe details.
// Never put exception text, secrets or directory passwords in `details`.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(code);
    this.name = 'ApiError';
  }
  body(): Record<string, unknown> {
    return { code: this.code, ...this.details };
  }
}

export const badRequest = (code: string, details?: Record<string, unknown>) => new ApiError(400, code, details);
export const unauthorized = (code = 'unauthenticated') => new ApiError(401, code);
export const forbidden = (code: string, details?: Record<string, unknown>) => new ApiError(403, code, details);
export const notFound = () => new ApiError(404, 'not_found');
export const conflict = (code: string, details?: Record<string, unknown>) => new ApiError(409, code, details);
export const tooMany = (code: string, details?: Record<string, unknown>) => new ApiError(429, code, details);
export const unavailable = (code: string, details?: Record<string, unknown>) => new ApiError(503, code, details);

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;

/**
 * 503 `overloaded` with Retry-After (issue 28): a bound (the start budget, the directory's
 * connections, a function's in-flight cap) refused the request before its work began. `reason`
 * names the bound for the audit row (written once a minute per reason) and the log, not the body.
 */
export const overloaded = (reason: string, retryAfterSeconds = 1): ApiError & { overloadReason: string } =>
  Object.assign(new ApiError(503, 'overloaded', { retryAfterSeconds }), { overloadReason: reason });

/** Retry-After of an overload refusal (whole seconds): one start budget. */
export const retryAfterFor = (budgetMs: number) => Math.max(1, Math.ceil(budgetMs / 1000));

/** The bound that refused an `overloaded` error; undefined for any other error. */
export const overloadReason = (e: unknown): string | undefined =>
  isApiError(e) && e.code === 'overloaded' ? String((e as { overloadReason?: string }).overloadReason ?? 'unknown') : undefined;
