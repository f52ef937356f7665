import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { header } from './event';

// What both applications (console and fleet plane) promise a browser, on every response: the
// security headers, and a refusal of state-changing requests sent from another site. Kept
// framework-free: the pipelines' middlewares use it (middlewares/browser-defaults.ts,
// middlewares/cross-site.ts), and so does the local gateway shim (local/offline-gateway.cjs) for
// the answers serverless-offline makes itself.

export interface BrowserPolicy {
  /** The application's own origin (scheme://host[:port]); undefined: the request's own Host. */
  publicOrigin?: string;
  /** Strict-Transport-Security max-age in seconds; sent only when the public origin is https; 0 = never. */
  hstsMaxAge: number;
}

// The SPAs load everything from their own origin (Vite builds: module scripts, no inline code).
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every response carries, error responses and 404s included. */
export function securityHeaders(policy: BrowserPolicy): Record<string, string> {
  const h: Record<string, string> = {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  };
  if (policy.hstsMaxAge > 0 && policy.publicOrigin?.startsWith('https://')) {
    h['strict-transport-security'] = `max-age=${policy.hstsMaxAge}; includeSubDomains`;
  }
  return h;
}

/** `https://Host:443/` → `https://host`; undefined when it is not an http(s) origin. */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const u = new URL(value);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

export interface CrossSiteVerdict {
  origin?: string;
  fetchSite?: string;
}

/**
 * A state-changing request sent by a page of another site: its `Origin` is not the application's
 * own (an opaque `null` origin included), or, without `Origin`, the browser marks it
 * `Sec-Fetch-Site: cross-site` / `same-site`. Requests without either header (command-line
 * clients) pass; they still need the session's CSRF token (console) or a bearer token (fleet).
 * Returns what was seen when refused, undefined when the request may go on.
 */
export function crossSiteRequest(event: APIGatewayProxyEventV2, policy: BrowserPolicy): CrossSiteVerdict | undefined {
  const origin = header(event, 'origin');
  const fetchSite = header(event, 'sec-fetch-site')?.toLowerCase();
  const seen = { ...(origin !== undefined ? { origin: origin.slice(0, 200) } : {}), ...(fetchSite ? { fetchSite: fetchSite.slice(0, 20) } : {}) };
  if (origin !== undefined) {
    const own = policy.publicOrigin ? normalizeOrigin(policy.publicOrigin) : undefined;
    const got = normalizeOrigin(origin);
    if (!got) return seen; // `null` (sandboxed frames, cross-site redirects) or garbage
    if (own) return got === own ? undefined : seen;
    // no configured origin: the request's own host, whatever the scheme in front of the gateway
    const host = header(event, 'host')?.toLowerCase();
    return host && new URL(got).host === host ? undefined : seen;
  }
  return fetchSite === 'cross-site' || fetchSite === 'same-site' ? seen : undefined;
}
