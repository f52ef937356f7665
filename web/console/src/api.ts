// The one way the app talks to the API: same origin, the session cookie (__Host-hdc) sent by the
// browser, the CSRF token of the session on every POST/PUT/DELETE. No cache of any answer: each
// screen asks again, and a secret (LAPS or reset password) only lives in the component showing it.

import { ApiFailure } from '../../shared/api-failure';
import type { components } from './api/schema';

export { ApiFailure, qs } from '../../shared/api-failure';

let csrf: string | undefined;
let expiredListener: (() => void) | undefined;

export const setCsrfToken = (t: string | undefined) => {
  csrf = t;
};
/** Called when a signed-in call answers that the session is gone (expired, revoked, signed out elsewhere). */
export const onSessionExpired = (l: () => void) => {
  expiredListener = l;
};

async function csrfToken(): Promise<string> {
  if (!csrf) {
    const r = await fetch('/api/auth/antiforgery', { credentials: 'same-origin', cache: 'no-store' });
    csrf = ((await r.json()) as { token: string }).token;
  }
  return csrf;
}

export async function api<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  if (method !== 'GET') {
    h['x-csrf-token'] = await csrfToken();
    if (body !== undefined) h['content-type'] = 'application/json';
  }
  let r: Response;
  try {
    r = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, 'network_error', {});
  }
  const text = await r.text();
  let data: any;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!r.ok) {
    const code: string = data?.code ?? `http_${r.status}`;
    if (code === 'csrf_token_invalid' || code === 'csrf_token_missing') csrf = undefined;
    if (r.status === 401 && (code === 'unauthenticated' || code === 'session_revoked')) expiredListener?.();
    throw new ApiFailure(r.status, code, data ?? {});
  }
  return data as T;
}

/**
 * A file answered to a POST (a bulk reset's passwords, downloadable once): fetched with the
 * session and its CSRF token, handed to the browser as a download from memory (a blob URL revoked
 * at once), never kept by the app. Answers the saved file's name.
 */
export async function downloadPost(path: string, fallbackName = 'download.csv'): Promise<string> {
  let r: Response;
  try {
    r = await fetch(path, { method: 'POST', headers: { accept: 'text/csv', 'x-csrf-token': await csrfToken() }, credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, 'network_error', {});
  }
  if (!r.ok) {
    const data = await r.json().catch(() => ({}));
    const code: string = data?.code ?? `http_${r.status}`;
    if (code === 'csrf_token_invalid' || code === 'csrf_token_missing') csrf = undefined;
    if (r.status === 401 && (code === 'unauthenticated' || code === 'session_revoked')) expiredListener?.();
    throw new ApiFailure(r.status, code, data ?? {});
  }
  const name = /filename="([^"]+)"/.exec(r.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
  return name;
}

export const get = <T = any>(path: string) => api<T>('GET', path);
export const post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => api<T>('POST', path, body ?? {}, headers);
export const put = <T = any>(path: string, body?: unknown) => api<T>('PUT', path, body ?? {});
export const del = <T = any>(path: string) => api<T>('DELETE', path);

type MeAnswer = components['schemas']['Me'];
/**
 * The signed-in operator (GET /api/auth/me), as the console's OpenAPI document declares it
 * (./api/schema.ts, generated): a field the API drops or renames fails `npm run typecheck`. A
 * screen may ask about any permission by name.
 */
export type Me = Omit<MeAnswer, 'permissions'> & { permissions: Array<MeAnswer['permissions'][number] | (string & {})> };

/** Paint the instance's accent colour (#rrggbb), with black or white text on it, whichever reads better. */
export function applyAccent(colour: string | undefined) {
  const root = document.documentElement.style;
  if (!colour || !/^#[0-9a-f]{6}$/i.test(colour)) {
    root.removeProperty('--accent');
    root.removeProperty('--on-accent');
    return;
  }
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(colour.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  root.setProperty('--accent', colour);
  // WCAG contrast against white (1.05 / (l + 0.05)) and against black ((l + 0.05) / 0.05)
  root.setProperty('--on-accent', 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? '#fff' : '#000');
}
