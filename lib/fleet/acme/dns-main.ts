import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { outboundAgents, type OutboundTrust } from '../../outbound/https';
import type { DnsMainCredentials } from './credentials';
import type { DnsMainEndPoint } from './options';

// The `dns_main` provider adapter: writes and removes the TXT record `_acme-challenge.<name>` in
// the public zone through the provider's API, using only what the spec's least-privilege keys
// allow: GET and POST /domain/zone/<zone>/*, DELETE /domain/zone/<zone>/record/*.
// Requests are signed with the application secret and consumer key (never sent themselves):
//   X-Dnsmain-Signature: "$1$" + sha1hex(AS + "+" + CK + "+" + METHOD + "+" + URL + "+" + BODY + "+" + TIMESTAMP)

/** API base of each DNSMAIN_END_POINT (one table; docs/fleet.md). */
export const END_POINT_URLS: Record<DnsMainEndPoint, string> = {
  'main-eu': 'https://eu.api.dnsmain.net/1.0',
  'main-us': 'https://api.us.dnsmain.com/1.0',
  'main-ca': 'https://ca.api.dnsmain.net/1.0',
  'budget-eu': 'https://eu.api.budget.dnsmain.net/1.0',
  'budget-ca': 'https://ca.api.budget.dnsmain.net/1.0',
  'value-eu': 'https://eu.api.value.dnsmain.net/1.0',
  'value-ca': 'https://ca.api.value.dnsmain.net/1.0',
};

export class DnsProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DnsProviderError';
  }
}

export function signature(c: Pick<DnsMainCredentials, 'DNSMAIN_AS' | 'DNSMAIN_CK'>, method: string, url: string, body: string, timestamp: number): string {
  return '$1$' + createHash('sha1').update([c.DNSMAIN_AS, c.DNSMAIN_CK, method, url, body, String(timestamp)].join('+')).digest('hex');
}

export interface TxtRecord {
  zone: string;
  id: number;
  host: string;
}

/** One request with the policy's agents: 10 s, no redirect followed, the answer read up to 256 KiB. */
function send(url: string, method: string, headers: Record<string, string>, body: string, agents: { https: https.Agent; http: http.Agent }): Promise<{ status: number; raw: string }> {
  const u = new URL(url);
  const lib = u.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const req = lib.request(u, { method, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }, agent: u.protocol === 'http:' ? agents.http : agents.https, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 256 * 1024) req.destroy(new Error('response too large'));
        else chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, raw: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
    req.on('error', reject);
    req.end(body || undefined);
  });
}

export class DnsMainClient {
  private readonly base: string;
  private readonly agents: { https: https.Agent; http: http.Agent };
  constructor(
    private readonly credentials: DnsMainCredentials,
    opts: { apiUrl?: string; trust?: OutboundTrust } = {},
  ) {
    this.base = opts.apiUrl ?? END_POINT_URLS[credentials.DNSMAIN_END_POINT];
    // the outbound policy on every connection (lib/outbound/https.ts)
    this.agents = outboundAgents(opts.trust ?? {});
  }

  private async request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const url = `${this.base}${path}`;
    const text = body === undefined ? '' : JSON.stringify(body);
    const ts = Math.floor(Date.now() / 1000);
    let res: { status: number; raw: string };
    try {
      res = await send(
        url,
        method,
        {
          'content-type': 'application/json',
          'X-Dnsmain-Application': this.credentials.DNSMAIN_AK,
          'X-Dnsmain-Consumer': this.credentials.DNSMAIN_CK,
          'X-Dnsmain-Timestamp': String(ts),
          'X-Dnsmain-Signature': signature(this.credentials, method, url, text, ts),
        },
        text,
        this.agents,
      );
    } catch (e) {
      // refused, closed and unreachable read alike (the reason is the error's name only)
      throw new DnsProviderError(`DNS provider API unreachable (${method} ${path}): ${(e as Error).name}`);
    }
    if (res.status >= 300 && res.status < 400) throw new DnsProviderError(`DNS provider API answered a redirect (${method} ${path}): not followed`, res.status);
    const raw = res.raw;
    let json: any = null;
    try {
      json = raw ? JSON.parse(raw) : null;
    } catch {
      json = null;
    }
    return { status: res.status, json };
  }

  private fail(what: string, r: { status: number; json: any }): never {
    const hint = r.status === 403 ? ' (the keys lack this right: see the least-privilege rules in docs/fleet.md)' : r.status === 401 ? ' (keys refused: delete acme-dns.env and run the installer again with new ones)' : '';
    throw new DnsProviderError(`${what}: HTTP ${r.status}${hint}`, r.status);
  }

  /** The zone holding `name`: the longest parent the account manages (GET /domain/zone/<zone>). */
  async findZone(name: string): Promise<string> {
    const labels = name.split('.');
    // `_acme-challenge` and other service labels are never a zone's apex
    for (let i = labels.findIndex((l) => !l.startsWith('_')); i >= 0 && i < labels.length - 1; i++) {
      const zone = labels.slice(i).join('.');
      const r = await this.request('GET', `/domain/zone/${zone}`);
      if (r.status === 200) return zone;
      if (r.status !== 404 && r.status !== 403) this.fail(`zone lookup for ${zone}`, r);
    }
    throw new DnsProviderError(`no zone of this account holds ${name}`);
  }

  async addTxt(name: string, value: string, ttl = 60): Promise<TxtRecord> {
    const zone = await this.findZone(name);
    const subDomain = name === zone ? '' : name.slice(0, -(zone.length + 1));
    const r = await this.request('POST', `/domain/zone/${zone}/record`, { fieldType: 'TXT', subDomain, target: value, ttl });
    if (r.status !== 200 || typeof r.json?.id !== 'number') this.fail(`TXT record ${name}`, r);
    await this.refresh(zone);
    return { zone, id: r.json.id, host: name };
  }

  async removeTxt(rec: TxtRecord): Promise<void> {
    const r = await this.request('DELETE', `/domain/zone/${rec.zone}/record/${rec.id}`);
    if (r.status !== 200 && r.status !== 404) this.fail(`removing TXT record ${rec.host}`, r);
    await this.refresh(rec.zone);
  }

  private async refresh(zone: string): Promise<void> {
    const r = await this.request('POST', `/domain/zone/${zone}/refresh`);
    if (r.status !== 200) this.fail(`zone refresh of ${zone}`, r);
  }
}
