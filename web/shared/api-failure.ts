// A refused or failed API call, as both web apps see it: the HTTP status, the stable `code` of the
// API's error body, and the body itself (details such as retryAfterSeconds, fields, correlationId).
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly body: Record<string, any>,
  ) {
    super(code);
  }
}

/** Query string of the non-empty parameters ('' when there is none). */
export const qs = (params: Record<string, string | undefined>) => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
};
