import { createSocket } from 'node:dgram';
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
    records = await resolver.resolveSrv(query).catch((e: { code?: string }) => {
      // Samba's DNS answers an SRV query that carries EDNS (as Node 22's c-ares sends it) with a
      // response c-ares refuses (EBADRESP); asked plainly, it answers well
      if (e.code !== 'EBADRESP' || !dnsServers.length) throw e;
      return plainSrvQuery(query, dnsServers[0], opts.timeoutMs ?? 2000);
    });
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

/** Read a (possibly compressed) name at `at`; its end in the message. */
function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let end = -1;
  for (let i = at, jumps = 0; ; ) {
    if (i >= msg.length) throw Object.assign(new Error('truncated name'), { code: 'EBADRESP' });
    const len = msg[i];
    if (len === 0) {
      if (end < 0) end = i + 1;
      break;
    }
    if ((len & 0xc0) === 0xc0) {
      if (++jumps > 20) throw Object.assign(new Error('name loop'), { code: 'EBADRESP' });
      if (end < 0) end = i + 2;
      i = ((len & 0x3f) << 8) | msg[i + 1];
      continue;
    }
    labels.push(msg.toString('latin1', i + 1, i + 1 + len));
    i += 1 + len;
  }
  return { name: labels.join('.'), end };
}

/** One SRV question over UDP without EDNS (the fallback above); the answer's SRV records. */
export async function plainSrvQuery(name: string, server: string, timeoutMs: number): Promise<Array<{ name: string; port: number; priority: number; weight: number }>> {
  const [host, port] = server.includes(']') ? [server.slice(1, server.indexOf(']')), Number(server.split(']:')[1] ?? 53)] : server.split(':').length === 2 ? [server.split(':')[0], Number(server.split(':')[1])] : [server, 53];
  const id = Math.floor(Math.random() * 0xffff);
  const question = Buffer.concat([
    Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])),
    Buffer.from([0, 0, 33, 0, 1]),
  ]);
  const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
  const msg = await new Promise<Buffer>((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), timeoutMs);
    socket.on('message', (m) => {
      if (m.length >= 12 && m.readUInt16BE(0) === id) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(Object.assign(e, { code: (e as { code?: string }).code === 'ECONNREFUSED' ? 'ECONNREFUSED' : 'EBADRESP' }));
    });
    socket.send(question, port, host);
  }).finally(() => socket.close());
  const rcode = msg[3] & 0x0f;
  if (rcode === 3) throw Object.assign(new Error('no such name'), { code: 'ENOTFOUND' });
  if (rcode !== 0) throw Object.assign(new Error(`rcode ${rcode}`), { code: 'EBADRESP' });
  const qd = msg.readUInt16BE(4);
  const an = msg.readUInt16BE(6);
  let at = 12;
  for (let i = 0; i < qd; i++) at = readName(msg, at).end + 4;
  const out: Array<{ name: string; port: number; priority: number; weight: number }> = [];
  for (let i = 0; i < an; i++) {
    at = readName(msg, at).end;
    const type = msg.readUInt16BE(at);
    const rdlength = msg.readUInt16BE(at + 8);
    const rdata = at + 10;
    if (type === 33) out.push({ priority: msg.readUInt16BE(rdata), weight: msg.readUInt16BE(rdata + 2), port: msg.readUInt16BE(rdata + 4), name: readName(msg, rdata + 6).name });
    at = rdata + rdlength;
  }
  if (!out.length) throw Object.assign(new Error('no SRV record'), { code: 'ENODATA' });
  return out;
}
