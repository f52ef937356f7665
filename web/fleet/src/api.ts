import { ApiFailure } from '../../shared/api-failure';
import type { components } from './api/schema';

export { ApiFailure, qs } from '../../shared/api-failure';

// The one way the dashboard talks to the fleet API (same origin). Two ways in (spec: Authentication):
// - the access platform in front of the dashboard adds its JWT (Teleport-Jwt-Assertion) to every
//   request it forwards: the app sends nothing itself, GET /api/auth/me simply answers;
// - the local administrator signs in with POST /api/auth/login and sends `Authorization: Bearer`.
//   That token is kept in sessionStorage (this tab only, gone when it closes) so that a deep link
//   opened in the tab or a reload keeps the sign-in; it expires with FLEET_LOCAL_TOKEN_TTL.
// No cookie, so no CSRF token: every state-changing call is JSON, which a cross-site form cannot send.

const TOKEN_KEY = 'hdc-fleet-token';
let expiredListener: (() => void) | undefined;

export const localToken = () => sessionStorage.getItem(TOKEN_KEY) ?? undefined;
export const setLocalToken = (t: string | undefined) => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY));
/** Called when a signed-in call answers 401 (the local token expired, or the platform's JWT did). */
export const onSignedOut = (l: () => void) => {
  expiredListener = l;
};

async function request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, accept = 'application/json'): Promise<Response> {
  const h: Record<string, string> = { accept };
  const token = localToken();
  if (token) h.authorization = `Bearer ${token}`;
  // JSON on every state-changing call (the API asks it of a body and of every POST; a DELETE needs none)
  if (body !== undefined || method !== 'GET') h['content-type'] = 'application/json';
  let r: Response;
  try {
    r = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, 'network_error', {});
  }
  if (!r.ok) {
    const text = await r.text();
    let data: any;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    const code: string = data?.code ?? `http_${r.status}`;
    if (r.status === 401 && path !== '/api/auth/login' && path !== '/api/auth/me') expiredListener?.();
    throw new ApiFailure(r.status, code, data ?? {});
  }
  return r;
}

export async function api<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const text = await (await request(method, path, body)).text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T = any>(path: string) => api<T>('GET', path);
export const post = <T = any>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const put = <T = any>(path: string, body?: unknown) => api<T>('PUT', path, body ?? {});
/** A 204 answers `true`: useAction's run() tells a done delete (defined) from a failed one (undefined). */
export const del = async <T = any>(path: string): Promise<T | true> => (await api<T>('DELETE', path)) ?? true;

/**
 * A file answer (the inventory CSV, an upgrade pack's zip): fetched with the caller's credentials,
 * then saved by the browser under the name of its content-disposition.
 */
export async function download(path: string, opts: { method?: 'GET' | 'POST'; body?: unknown; accept?: string; fallbackName?: string } = {}): Promise<string> {
  const r = await request(opts.method ?? 'GET', path, opts.body, opts.accept ?? 'text/csv');
  const name = /filename="([^"]+)"/.exec(r.headers.get('content-disposition') ?? '')?.[1] ?? opts.fallbackName ?? 'download.csv';
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

export type Level = 'viewer' | 'operator';
/** The caller (GET /api/auth/me), as the fleet plane's OpenAPI document declares it (./api/schema.ts, generated). */
export type Me = components['schemas']['FleetCaller'];

/** The caller's level on a client: administrators operate everything. */
export function levelOf(me: Me, code: string | null | undefined): Level | undefined {
  if (me.admin || me.scope.all) return 'operator';
  if (!code) return undefined;
  return me.scope.clients.find((c) => c.code === code)?.level;
}
/** Operator of every client in the list (a shared gateway needs each), and at least one. */
export const operatesAll = (me: Me, codes: string[]) => me.admin || (codes.length > 0 && codes.every((c) => levelOf(me, c) === 'operator'));
