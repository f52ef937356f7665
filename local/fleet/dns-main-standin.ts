import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

// A loopback stand-in for the dns_main provider's API (lib/fleet/acme/dns-main.ts), for tests and
// the local lab: it checks the request signature with the keys it was given, allows exactly the
// spec's least-privilege rules (GET/POST /domain/zone/<zone>/*, DELETE /domain/zone/<zone>/record/*)
// on the zones it serves, and publishes TXT records in pebble-challtestsrv (its management API),
// where pebble's validation reads them.

export interface StandinOptions {
  port: number;
  zones: string[];
  keys: { ak: string; as: string; ck: string };
  /** pebble-challtestsrv's management URL, e.g. http://127.0.0.1:8055 */
  challtestsrv: string;
}

export interface StandinRequest {
  method: string;
  path: string;
  status: number;
  /** header names received (values of the key headers are never recorded) */
  headers: string[];
  body: string;
}

export interface Standin {
  url: string;
  requests: StandinRequest[];
  /** TXT records live now: host → values */
  txt: Map<string, string[]>;
  close(): Promise<void>;
}

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

async function challtest(base: string, op: 'set-txt' | 'clear-txt', body: object) {
  const r = await fetch(`${base}/${op}`, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`challtestsrv ${op}: ${r.status}`);
}

export function startDnsMainStandin(opts: StandinOptions): Promise<Standin> {
  const requests: StandinRequest[] = [];
  const records = new Map<number, { zone: string; host: string; value: string }>();
  const txt = new Map<string, string[]>();
  let nextId = 1000;
  const publish = async (host: string) => {
    const fqdn = `${host}.`;
    await challtest(opts.challtestsrv, 'clear-txt', { host: fqdn });
    for (const value of txt.get(host) ?? []) await challtest(opts.challtestsrv, 'set-txt', { host: fqdn, value });
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').replace(/^\/1\.0/, '');
      const answer = (status: number, json: unknown) => {
        requests.push({ method: req.method ?? '', path, status, headers: Object.keys(req.headers).sort(), body });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      try {
        // authentication: the application and consumer keys, and a fresh signature over the request
        const h = (n: string) => String(req.headers[n] ?? '');
        const ts = Number(h('x-dnsmain-timestamp'));
        const url = `http://${req.headers.host}${req.url}`;
        const expected = '$1$' + sha1([opts.keys.as, opts.keys.ck, req.method, url, body, String(ts)].join('+'));
        if (!same(h('x-dnsmain-application'), opts.keys.ak) || !same(h('x-dnsmain-consumer'), opts.keys.ck)) return answer(401, { message: 'Invalid credentials' });
        if (!Number.isFinite(ts) || Math.abs(Date.now() / 1000 - ts) > 300 || !same(h('x-dnsmain-signature'), expected)) return answer(400, { message: 'Invalid signature' });
        // authorisation: the spec's least-privilege rules, on the zones served
        const m = /^\/domain\/zone\/([a-z0-9._-]+)(\/.*)?$/.exec(path.split('?')[0]);
        if (!m) return answer(403, { message: 'This call has not been granted' });
        const [, zone, rest = ''] = m;
        const allowed = req.method === 'GET' || req.method === 'POST' ? true : req.method === 'DELETE' && /^\/record\/\d+$/.test(rest);
        if (!allowed) return answer(403, { message: 'This call has not been granted' });
        if (!opts.zones.includes(zone)) return answer(404, { message: `This service does not exist` });
        if (req.method === 'GET' && rest === '') return answer(200, { name: zone, hasDnssec: false });
        if (req.method === 'POST' && rest === '/refresh') return answer(200, null);
        if (req.method === 'POST' && rest === '/record') {
          const b = JSON.parse(body || '{}');
          if (b.fieldType !== 'TXT' || typeof b.target !== 'string' || typeof b.subDomain !== 'string') return answer(400, { message: 'Invalid record' });
          const host = b.subDomain ? `${b.subDomain}.${zone}` : zone;
          const id = nextId++;
          records.set(id, { zone, host, value: b.target });
          txt.set(host, [...(txt.get(host) ?? []), b.target]);
          await publish(host);
          return answer(200, { id, zone, subDomain: b.subDomain, fieldType: 'TXT', target: b.target, ttl: b.ttl ?? 0 });
        }
        const del = /^\/record\/(\d+)$/.exec(rest);
        if (req.method === 'DELETE' && del) {
          const rec = records.get(Number(del[1]));
          if (!rec || rec.zone !== zone) return answer(404, { message: 'The requested object does not exist' });
          records.delete(Number(del[1]));
          const left = (txt.get(rec.host) ?? []).filter((v) => v !== rec.value);
          if (left.length) txt.set(rec.host, left);
          else txt.delete(rec.host);
          await publish(rec.host);
          return answer(200, null);
        }
        return answer(404, { message: 'Got an invalid (or empty) URL' });
      } catch (e) {
        return answer(500, { message: (e as Error).message });
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${opts.port}/1.0`,
        requests,
        txt,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    );
  });
}
