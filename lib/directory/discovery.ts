import { lookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

// DC discovery (console spec, High availability 4): the domain's DC locator record
// `_ldap._tcp.dc._msdcs.<domain>`, asked of the directory's own DNS, each target's addresses
// from the same servers. A proposal only: nothing is added until an administrator saves.

export interface DiscoveredDc {
  /** the target's first label (dc1 of dc1.corp.example.com) */
  name: string;
  /** the target's FQDN, as the SRV record names it */
  host: string;
  /** the port the SRV record names (usually 389): never used, LDAPS is 636 only */
  srvPort: number;
  priority: number;
  weight: number;
  /** A/AAAA records of the target on the same DNS servers */
  addresses: string[];
  /** ldaps://<host>:636: the certificate's SAN must hold this name (High availability 5) */
  url: string;
}

export interface DiscoveryResult {
  query: string;
  dnsServers: string[];
  dcs: DiscoveredDc[];
}

export const dcLocatorName = (domain: string) => `_ldap._tcp.dc._msdcs.${domain.toLowerCase()}`;

/** Thrown when no DNS server answered the SRV query (a name that does not exist is an empty answer). */
export class DiscoveryFailed extends Error {
  constructor(readonly reason: 'dns_unreachable' | 'dns_error') {
    super(`DC discovery failed: ${reason}`);
    this.name = 'DiscoveryFailed';
  }
}

/**
 * Ask `dnsServers` (addresses, optionally `:port`) for the domain's DCs, ordered by SRV priority
 * then weight (highest first) then name.
 */
export async function discoverDcs(domain: string, dnsServers: string[], opts: { timeoutMs?: number } = {}): Promise<DiscoveryResult> {
  const query = dcLocatorName(domain);
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 2000, tries: 1 });
  if (dnsServers.length) resolver.setServers(dnsServers);
  let records: Array<{ name: string; port: number; priority: number; weight: number }>;
  try {
    records = await resolver.resolveSrv(query);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') records = [];
    else throw new DiscoveryFailed(code === 'ECONNREFUSED' || code === 'ETIMEOUT' ? 'dns_unreachable' : 'dns_error');
  }
  const addressesOf = async (host: string) => {
    const [v4, v6] = await Promise.all([resolver.resolve4(host).catch(() => [] as string[]), resolver.resolve6(host).catch(() => [] as string[])]);
    return [...v4, ...v6];
  };
  const seen = new Set<string>();
  const dcs: DiscoveredDc[] = [];
  for (const r of records) {
    const host = r.name.toLowerCase().replace(/\.$/, '');
    if (seen.has(host)) continue;
    seen.add(host);
    dcs.push({ name: host.split('.')[0], host, srvPort: r.port, priority: r.priority, weight: r.weight, addresses: await addressesOf(host), url: `ldaps://${host}:636` });
  }
  dcs.sort((a, b) => a.priority - b.priority || b.weight - a.weight || a.host.localeCompare(b.host));
  return { query, dnsServers, dcs };
}

/**
 * The directory's own DNS: `Directory:DiscoveryDnsServer` when set (comma-separated), otherwise
 * the configured DCs' addresses (an AD DC is a DNS server of its domain), then the host's resolver.
 */
export async function discoveryDnsServers(configured: string | undefined, dcUrls: string[]): Promise<string[]> {
  if (configured && configured.trim()) return configured.split(',').map((s) => s.trim()).filter(Boolean);
  const hosts = dcUrls.map((u) => new URL(u).hostname.replace(/^\[|\]$/g, ''));
  const addresses = await Promise.all(hosts.map(async (h) => (isIP(h) ? [h] : (await lookup(h, { all: true }).catch(() => [])).map((a) => a.address))));
  return [...new Set(addresses.flat())];
}
