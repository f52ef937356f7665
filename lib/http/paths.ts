// Routes by method and API Gateway path template, shared by every pipeline (console, fleet,
// health); no schema library here, so that the health bundle stays small.
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export const STATE_CHANGING = new Set<Method>(['POST', 'PUT', 'DELETE']);

/** Match an API Gateway path template against a concrete path; returns the path parameters. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const t = template.split('/');
  const p = path.split('/');
  if (t.length !== p.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < t.length; i++) {
    const m = /^\{(\w+)\}$/.exec(t[i]);
    if (m) {
      if (!p[i]) return undefined;
      try {
        params[m[1]] = decodeURIComponent(p[i]);
      } catch {
        return undefined;
      }
    } else if (t[i] !== p[i]) return undefined;
  }
  return params;
}

/** The first route whose method and path template match, with its path parameters. */
export function findRoute<R extends { method: Method; path: string }>(routes: R[], method: string, path: string): { route?: R; params: Record<string, string> } {
  for (const r of routes) {
    const m = r.method === method ? matchPath(r.path, path) : undefined;
    if (m) return { route: r, params: m };
  }
  return { params: {} };
}
