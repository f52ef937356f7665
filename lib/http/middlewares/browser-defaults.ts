import { securityHeaders, type BrowserPolicy } from '../browser';

type HttpResult = { statusCode?: number; headers?: Record<string, string | number | boolean> } | string | undefined | void;

/**
 * A middy middleware adding the security headers to whatever the handler answered (the pipelines
 * turn every error into a response, so `after` sees them all). The policy is read per response;
 * when it cannot be (an invalid configuration), the headers without HSTS are still sent.
 */
export function browserDefaults(policy: () => BrowserPolicy) {
  const add = (request: { response: HttpResult }) => {
    const r = request.response;
    if (!r || typeof r !== 'object') return;
    let p: BrowserPolicy;
    try {
      p = policy();
    } catch {
      p = { hstsMaxAge: 0 };
    }
    r.headers = { ...securityHeaders(p), ...r.headers };
  };
  return { after: async (request: { response: HttpResult }) => add(request), onError: async (request: { response: HttpResult }) => add(request) };
}
