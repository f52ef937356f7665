// Bundles only (esbuild.config.cjs aliases `whatwg-url` here): ldapts needs nothing of the
// whatwg-url package but `parseURL` of an ldap(s) URL (scheme, host, port), and whatwg-url
// with its tr46 tables is 280 KB of every directory function. The platform URL parses the same.
// Non-special schemes (ldap, ldaps) keep their host as written (no IDNA), like whatwg-url's
// opaque host; an IPv6 literal is given without its brackets.

export interface UrlRecord {
  scheme: string;
  username: string;
  password: string;
  host: string | null;
  port: number | null;
}

export function parseURL(input: string): UrlRecord | null {
  let u: URL;
  try {
    u = new URL(String(input));
  } catch {
    return null; // whatwg-url's failure value
  }
  const host = u.hostname.startsWith('[') && u.hostname.endsWith(']') ? u.hostname.slice(1, -1) : u.hostname;
  return {
    scheme: u.protocol.replace(/:$/, ''),
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    host: host === '' ? null : host,
    port: u.port === '' ? null : Number(u.port),
  };
}
