import dns from 'node:dns';
import net from 'node:net';

// The outbound target policy (docs/decisions.md, "Issue 25: one outbound policy"): which addresses
// the product may connect to when it calls a URL someone typed (a console, a notification
// channel, the approval webhook, ACME, the DNS provider). A name is resolved first and every
// address it resolves to must be admitted; the connection then goes to the address that was
// checked (lib/outbound/https.ts), never to a second answer of the resolver.
//
// Admitted: global unicast addresses. Refused: loopback, link-local (169.254.169.254 included),
// private (RFC 1918), shared (100.64/10), unique-local, multicast, unspecified, broadcast,
// reserved and documentation ranges, in every notation: IPv4 written in hex, octal, as one
// integer or in short form, mapped into IPv6 (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), and
// NAT64 (64:ff9b::/96) carrying one of those. `localhost` and `*.localhost` names are refused by
// name (RFC 6761). An explicit allow-list (Outbound:AllowedTargets on the console,
// FLEET_OUTBOUND_ALLOWED_TARGETS on the fleet plane) admits exactly its entries: addresses or
// CIDR blocks, each optionally limited to one port. It never admits unspecified, multicast or
// broadcast addresses: nothing legitimate answers there.

export type RefusalReason =
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unique_local'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'local_name'
  | 'unresolved';

/** Reasons the allow-list cannot lift. */
const NEVER: ReadonlySet<RefusalReason> = new Set(['unspecified', 'multicast', 'broadcast']);

// ---- addresses in any notation

/**
 * An IPv4 address as inet_aton reads it (what a resolver library or a browser would connect to):
 * one to four parts, each decimal, 0x hex or 0-led octal; the last part fills the remaining bytes
 * (127.1, 0x7f.1, 2130706433). One trailing dot is allowed (a fully qualified spelling).
 */
export function parseIPv4(text: string): string | undefined {
  const s = text.endsWith('.') ? text.slice(0, -1) : text;
  const parts = s.split('.');
  if (parts.length < 1 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return undefined;
    if (!Number.isSafeInteger(n)) return undefined;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255)) return undefined;
  if (last >= 2 ** (8 * (4 - nums.length))) return undefined;
  let value = last;
  nums.forEach((n, i) => (value += n * 2 ** (8 * (3 - i))));
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** An IPv6 address (brackets and a zone id allowed) as eight 16-bit groups, or undefined. */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  s = s.replace(/%.*$/, '');
  if (!net.isIPv6(s)) return undefined;
  // a dotted IPv4 tail (::ffff:127.0.0.1) as the two groups it is
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    s = `${s.slice(0, dotted.index)}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`;
  }
  const [head, rest] = s.includes('::') ? s.split('::') : [s, undefined];
  const groups = (x: string) => (x ? x.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const fill = 8 - h.length - r.length;
  if (rest === undefined ? fill !== 0 : fill < 1) return undefined;
  return [...h, ...Array(rest === undefined ? 0 : fill).fill(0), ...r];
}

const hex = (g: number[]) => g.map((x) => x.toString(16)).join(':');
const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

export interface Address {
  family: 4 | 6;
  /** the canonical form the connection uses (an IPv4-mapped IPv6 address becomes IPv4) */
  address: string;
}

/**
 * The address a host names when it is written as one (any notation above), else undefined (a
 * name). IPv4-mapped IPv6 becomes the IPv4 address it is: a dual-stack socket connects there.
 */
export function literalAddress(host: string): Address | undefined {
  const v4 = parseIPv4(host);
  if (v4) return { family: 4, address: v4 };
  const g = parseIPv6(host);
  if (!g) return undefined;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return { family: 4, address: v4Of(g[6], g[7]) };
  return { family: 6, address: hex(g) };
}

// ---- ranges

const blocks = (entries: Array<[string, number]>, family: 'ipv4' | 'ipv6') => {
  const list = new net.BlockList();
  for (const [a, p] of entries) list.addSubnet(a, p, family);
  return list;
};

/** IPv4 special-purpose ranges (IANA registry), most specific first. */
const V4: Array<[RefusalReason, net.BlockList]> = [
  ['broadcast', blocks([['255.255.255.255', 32]], 'ipv4')],
  ['unspecified', blocks([['0.0.0.0', 8]], 'ipv4')],
  ['loopback', blocks([['127.0.0.0', 8]], 'ipv4')],
  ['private', blocks([['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]], 'ipv4')],
  ['shared', blocks([['100.64.0.0', 10]], 'ipv4')],
  ['link_local', blocks([['169.254.0.0', 16]], 'ipv4')],
  ['documentation', blocks([['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24]], 'ipv4')],
  ['multicast', blocks([['224.0.0.0', 4]], 'ipv4')],
  // IETF protocol assignments, the deprecated 6to4 relay, benchmarking, class E
  ['reserved', blocks([['192.0.0.0', 24], ['192.88.99.0', 24], ['198.18.0.0', 15], ['240.0.0.0', 4]], 'ipv4')],
];

/** IPv6: only global unicast (2000::/3) is admitted, minus these; other ranges are named for the log. */
const V6: Array<[RefusalReason, net.BlockList]> = [
  ['unspecified', blocks([['::', 128]], 'ipv6')],
  ['loopback', blocks([['::1', 128]], 'ipv6')],
  ['link_local', blocks([['fe80::', 10]], 'ipv6')],
  ['unique_local', blocks([['fc00::', 7]], 'ipv6')],
  ['multicast', blocks([['ff00::', 8]], 'ipv6')],
  ['documentation', blocks([['2001:db8::', 32], ['3fff::', 20]], 'ipv6')],
  // IETF protocol assignments (Teredo, ORCHID, benchmarking...) and 6to4, which carry IPv4 inside
  ['reserved', blocks([['2001::', 23], ['2002::', 16]], 'ipv6')],
];
const GLOBAL_UNICAST = blocks([['2000::', 3]], 'ipv6');

/** Why an address is refused, or undefined when it is a public one. */
export function refusalOf(a: Address): RefusalReason | undefined {
  if (a.family === 4) return V4.find(([, list]) => list.check(a.address, 'ipv4'))?.[0];
  const g = parseIPv6(a.address)!;
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it carries
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return refusalOf({ family: 4, address: v4Of(g[6], g[7]) });
  const named = V6.find(([, list]) => list.check(a.address, 'ipv6'))?.[0];
  if (named) return named;
  // everything outside 2000::/3: IPv4-compatible (::a.b.c.d), discard-only, site-local, unassigned
  return GLOBAL_UNICAST.check(a.address, 'ipv6') ? undefined : 'reserved';
}

// ---- the allow-list

export interface AllowedTarget {
  address: Address;
  prefix: number;
  port?: number;
}

/** A compiled allow-list (see compileAllowedTargets). */
export interface AllowedTargets {
  readonly entries: readonly AllowedTarget[];
  admits(a: Address, port: number): boolean;
}

/**
 * One allow-list entry: `10.1.2.3`, `10.1.0.0/16`, `10.1.2.3:8443`, `10.1.0.0/16:8443`,
 * `2001:db8::1`, `[2001:db8::1]:8443`, `[fd00::/8]:443`. Addresses only: a name would admit
 * whatever it resolves to at the time. Throws an Error naming the entry.
 */
export function parseAllowedTarget(entry: string): AllowedTarget {
  const fail = () => new Error(`not an address or CIDR block with an optional :port: ${entry}`);
  let body = entry.trim();
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(body);
  if (bracketed) {
    body = bracketed[1];
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (!body.includes(':') || body.split(':').length === 2) {
    const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(body);
    if (!m) throw fail();
    body = m[1];
    if (m[2] !== undefined) port = Number(m[2]);
  }
  if (port !== undefined && (port < 1 || port > 65535)) throw fail();
  const [addr, prefixText, extra] = body.split('/');
  if (extra !== undefined) throw fail();
  // only the plain forms here: an allow-list says exactly what it admits
  const family = net.isIP(addr);
  if (!family) throw fail();
  const address = literalAddress(addr)!;
  const max = address.family === 4 ? 32 : 128;
  const mappedShift = family === 6 && address.family === 4 ? 96 : 0;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) - mappedShift : NaN;
  if (!(prefix >= 0 && prefix <= max)) throw fail();
  return { address, prefix, ...(port !== undefined ? { port } : {}) };
}

/** Split a setting (comma or whitespace separated) into entries; throws on the first bad one. */
export function parseAllowedTargets(text: string | readonly string[] | undefined): AllowedTarget[] {
  const items = typeof text === 'string' ? text.split(/[\s,]+/) : (text ?? []);
  return items.filter((s) => s.trim()).map(parseAllowedTarget);
}

const compiled = new Map<string, AllowedTargets>();

/** The allow-list of a setting, compiled once per distinct value. */
export function compileAllowedTargets(setting: string | readonly string[] | undefined): AllowedTargets {
  const key = typeof setting === 'string' ? setting : (setting ?? []).join(',');
  let out = compiled.get(key);
  if (out) return out;
  const entries = parseAllowedTargets(setting);
  const lists = entries.map((e) => {
    const list = new net.BlockList();
    list.addSubnet(e.address.address, e.prefix, e.address.family === 4 ? 'ipv4' : 'ipv6');
    return { list, port: e.port };
  });
  out = {
    entries,
    admits: (a, port) => lists.some((l) => (l.port === undefined || l.port === port) && l.list.check(a.address, a.family === 4 ? 'ipv4' : 'ipv6')),
  };
  if (compiled.size > 64) compiled.clear();
  compiled.set(key, out);
  return out;
}

export const NOTHING_ALLOWED = compileAllowedTargets([]);

// ---- decisions

export type TargetDecision = { admitted: true; address: Address } | { admitted: false; reason: RefusalReason };

/** One address at one port. */
export function decideAddress(a: Address, port: number, allow: AllowedTargets = NOTHING_ALLOWED): TargetDecision {
  const reason = refusalOf(a);
  if (!reason) return { admitted: true, address: a };
  if (!NEVER.has(reason) && allow.admits(a, port)) return { admitted: true, address: a };
  return { admitted: false, reason };
}

/** `localhost`, `*.localhost`, with or without trailing dots, any case (RFC 6761: always loopback). */
export const isLocalhostName = (host: string) => /(^|\.)localhost\.*$/i.test(host);

export type Resolver = (name: string) => Promise<Array<{ address: string; family: number }>>;

/** The system resolver, as a connection would use it (getaddrinfo: hosts file, then DNS). */
export const systemResolver: Resolver = (name) => dns.promises.lookup(name, { all: true, verbatim: true });

export interface TargetPolicy {
  allow?: AllowedTargets;
  /** tests: a resolver of their own; default the system's */
  resolve?: Resolver;
}

/**
 * Decide a host (as a URL gives it: brackets allowed) at a port: a literal address is decided as
 * it is; a name is resolved once, every answer must be admitted, and the first one is the address
 * to connect to. A name that does not resolve is refused as `unresolved`.
 */
export async function decideTarget(host: string, port: number, policy: TargetPolicy = {}): Promise<TargetDecision> {
  const allow = policy.allow ?? NOTHING_ALLOWED;
  const literal = literalAddress(host);
  if (literal) return decideAddress(literal, port, allow);
  if (isLocalhostName(host)) return { admitted: false, reason: 'local_name' };
  let answers: Array<{ address: string; family: number }>;
  try {
    answers = await (policy.resolve ?? systemResolver)(host.replace(/\.$/, ''));
  } catch {
    return { admitted: false, reason: 'unresolved' };
  }
  let first: Address | undefined;
  for (const ans of answers) {
    const a = literalAddress(ans.address);
    if (!a) return { admitted: false, reason: 'reserved' };
    const d = decideAddress(a, port, allow);
    if (!d.admitted) return d;
    first ??= d.address;
  }
  return first ? { admitted: true, address: first } : { admitted: false, reason: 'unresolved' };
}

/**
 * What registration (a console URL, a channel URL) checks: the URL's target is refused when the
 * policy refuses its address, its name, or any address the name resolves to now. A name that
 * does not resolve yet is accepted here (each connection decides again).
 */
export async function refusedUrlTarget(url: URL, policy: TargetPolicy = {}): Promise<RefusalReason | undefined> {
  const port = Number(url.port || (url.protocol === 'http:' ? 80 : 443));
  const d = await decideTarget(url.hostname, port, policy);
  if (d.admitted || d.reason === 'unresolved') return undefined;
  return d.reason;
}
