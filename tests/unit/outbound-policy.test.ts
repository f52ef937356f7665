import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { httpsRequest, outboundAgents, outboundTrust, requireAdmittedUrl, type OutboundTrust } from '../../lib/outbound/https';
import { compileAllowedTargets, decideTarget, literalAddress, parseAllowedTarget, refusedUrlTarget, type Resolver } from '../../lib/outbound/policy';
import { admitChannelUrl } from '../../lib/channels';
import { logger } from '../../lib/log';
import { AuditChain } from '../../lib/audit';
import { loadConfig } from '../../lib/config';
import { createFleetChannel, fleetChannelPolicy, listFleetChannels, updateFleetChannel } from '../../lib/fleet/alerts/channels';
import { createClient } from '../../lib/fleet/clients';
import { loadFleetConfig } from '../../lib/fleet/config';
import { listConsoles } from '../../lib/fleet/consoles';
import { addConsole, editConsole, type Acting } from '../../lib/fleet/register';
import type { FleetRuntime } from '../../lib/fleet/runtime';
import { listChannels, saveChannel } from '../../lib/notifications';
import type { ConsoleRuntime } from '../../lib/runtime';
import { memoryStore } from '../support/memory-store';
import { makeTestCa } from '../support/test-ca';

// The outbound policy (lib/outbound/policy.ts, docs/decisions.md "Issue 25"): every notation of
// an inside address is refused, public ones pass, the allow-list admits exactly its entries, the
// connection goes to the address that was checked, and whatever fails before a verified session
// answers the same `connect_error`, the cause in the log only.

jest.setTimeout(30_000);

const answers = (...addrs: string[]): Resolver => async () => addrs.map((address) => ({ address, family: net.isIP(address) }));
const noDns: Resolver = async () => {
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

describe('every notation of an inside address is refused', () => {
  it.each([
    // loopback in every spelling
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['127.0.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0x7F.0.0.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['00000177.0.0.01', 'loopback'],
    ['2130706433', 'loopback'],
    ['127.0.0.1.', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    // link-local, the cloud metadata address among them
    ['169.254.169.254', 'link_local'],
    ['0xa9fea9fe', 'link_local'],
    ['2852039166', 'link_local'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    // private, shared (CGNAT), unique-local, NAT64 carrying a private address
    ['10.0.0.1', 'private'],
    ['012.0.0.1', 'private'],
    ['0xa000001', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['3232235777', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:a01:203', 'private'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    // unspecified, broadcast, multicast
    ['0.0.0.0', 'unspecified'],
    ['0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['0xffffffff', 'broadcast'],
    ['4294967295', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    // reserved and documentation
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['::127.0.0.1', 'reserved'], // IPv4-compatible
    ['::7f00:1', 'reserved'],
    ['::10.0.0.1', 'reserved'],
    ['::93.184.216.34', 'reserved'], // deprecated form, never routed as IPv4
    ['2001::1', 'reserved'], // Teredo
    ['2002:7f00:1::1', 'reserved'], // 6to4 of 127.0.0.1
    ['fec0::1', 'reserved'], // site-local
    ['100::1', 'reserved'], // discard-only
    ['64:ff9b:1::1', 'reserved'], // local-use NAT64
    // names that are loopback by definition (RFC 6761), never resolved
    ['localhost', 'local_name'],
    ['LOCALHOST', 'local_name'],
    ['localhost.', 'local_name'],
    ['localhost..', 'local_name'],
    ['api.localhost', 'local_name'],
    ['x.y.LocalHost.', 'local_name'],
  ])('%s: %s', async (host, reason) => {
    const resolve = jest.fn(answers('93.184.216.34'));
    expect(await decideTarget(host, 443, { resolve })).toEqual({ admitted: false, reason });
    expect(resolve).not.toHaveBeenCalled();
  });

  it.each([
    ['93.184.216.34', '93.184.216.34'],
    ['8.8.8.8', '8.8.8.8'],
    ['0x5db8d822', '93.184.216.34'],
    ['1572395042', '93.184.216.34'],
    ['100.63.255.255', '100.63.255.255'], // just below the shared range
    ['172.32.0.1', '172.32.0.1'], // just past 172.16/12
    ['::ffff:93.184.216.34', '93.184.216.34'],
    ['64:ff9b::93.184.216.34', '64:ff9b:0:0:0:0:5db8:d822'], // NAT64 of a public address
    ['2606:2800::1', '2606:2800:0:0:0:0:0:1'],
    ['[2606:2800:220:1:248:1893:25c8:1946]', '2606:2800:220:1:248:1893:25c8:1946'],
    ['2a00:1450:4007:80e::200e', '2a00:1450:4007:80e:0:0:0:200e'],
  ])('admits the public address %s (connects to %s)', async (host, address) => {
    expect(await decideTarget(host, 443)).toMatchObject({ admitted: true, address: { address } });
  });

  // what WHATWG URL makes of each notation before the policy sees it: the policy refuses both spellings
  it.each([
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://2130706433/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['https://[::ffff:7f00:1]/', '[::ffff:7f00:1]'],
    ['https://[::127.0.0.1]/', '[::7f00:1]'],
    ['https://[64:ff9b::10.0.0.1]/', '[64:ff9b::a00:1]'],
    ['https://LOCALHOST./', 'localhost.'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
  ])('%s (URL host %s) is refused at registration', async (u, hostname) => {
    const url = new URL(u);
    expect(url.hostname).toBe(hostname);
    expect(await refusedUrlTarget(url, { resolve: answers('93.184.216.34') })).toBeDefined();
  });
});

describe('names are resolved, and every answer must be admitted', () => {
  it('refuses a name resolving to a private, loopback or metadata address', async () => {
    expect(await decideTarget('intranet.example.com', 443, { resolve: answers('10.1.2.3') })).toEqual({ admitted: false, reason: 'private' });
    expect(await decideTarget('rebind.example.com', 443, { resolve: answers('127.0.0.1') })).toEqual({ admitted: false, reason: 'loopback' });
    expect(await decideTarget('meta.example.com', 443, { resolve: answers('169.254.169.254') })).toEqual({ admitted: false, reason: 'link_local' });
    expect(await decideTarget('v6.example.com', 443, { resolve: answers('::ffff:127.0.0.1') })).toEqual({ admitted: false, reason: 'loopback' });
  });
  it('refuses a name whose answers mix a public and a private address', async () => {
    expect(await decideTarget('mixed.example.com', 443, { resolve: answers('93.184.216.34', '192.168.0.10') })).toEqual({ admitted: false, reason: 'private' });
  });
  it('admits a name resolving to public addresses only, and connects to the first', async () => {
    expect(await decideTarget('www.example.com', 443, { resolve: answers('2606:2800::1', '93.184.216.34') })).toEqual({ admitted: true, address: { family: 6, address: '2606:2800:0:0:0:0:0:1' } });
  });
  it('refuses a name that does not resolve when connecting, accepts it at registration', async () => {
    expect(await decideTarget('nowhere.example.com', 443, { resolve: noDns })).toEqual({ admitted: false, reason: 'unresolved' });
    expect(await refusedUrlTarget(new URL('https://nowhere.example.com/'), { resolve: noDns })).toBeUndefined();
    expect(await refusedUrlTarget(new URL('https://inside.example.com/'), { resolve: answers('10.0.0.1') })).toBe('private');
  });
});

describe('the allow-list admits exactly its entries', () => {
  const allow = compileAllowedTargets('127.0.0.1/32, 10.20.0.0/16:8443 [fd00::5]:9443 192.168.7.7');
  const decide = (host: string, port: number) => decideTarget(host, port, { allow });
  it.each([
    ['127.0.0.1', 443, true],
    ['127.0.0.1', 65000, true],
    ['0x7f000001', 443, true], // the same address, another notation
    ['::ffff:127.0.0.1', 443, true],
    ['127.0.0.2', 443, false],
    ['::1', 443, false],
    ['10.20.3.4', 8443, true],
    ['10.20.3.4', 443, false], // the entry names its port
    ['10.21.0.1', 8443, false],
    ['fd00::5', 9443, true],
    ['fd00::5', 443, false],
    ['fd00::6', 9443, false],
    ['192.168.7.7', 1, true],
    ['192.168.7.8', 1, false],
    ['169.254.169.254', 80, false],
  ])('%s:%d admitted: %s', async (host, port, admitted) => {
    expect((await decide(host, port)).admitted).toBe(admitted);
  });
  it('never admits unspecified, broadcast or multicast, even listed', async () => {
    const all = compileAllowedTargets('0.0.0.0/0, ::/0');
    for (const host of ['0.0.0.0', '255.255.255.255', '224.0.0.1', '::', 'ff02::1']) expect((await decideTarget(host, 443, { allow: all })).admitted).toBe(false);
    expect((await decideTarget('10.0.0.1', 443, { allow: all })).admitted).toBe(true);
  });
  it('reads addresses, CIDR blocks and ports, and refuses anything else', () => {
    expect(parseAllowedTarget('10.0.0.0/8:443')).toEqual({ address: { family: 4, address: '10.0.0.0' }, prefix: 8, port: 443 });
    expect(parseAllowedTarget('[fd00::/8]:443')).toMatchObject({ address: { family: 6 }, prefix: 8, port: 443 });
    expect(parseAllowedTarget('::ffff:10.0.0.0/104')).toEqual({ address: { family: 4, address: '10.0.0.0' }, prefix: 8 });
    for (const bad of ['localhost', 'console.lab:443', '10.0.0.0/33', '10.0.0.1:0', '10.0.0.1:70000', '0x7f000001', '10.0.0.0/8/1', '[::1', 'fd00::/129', '*']) expect(() => parseAllowedTarget(bad)).toThrow(/not an address/);
  });
  it('is empty by default: nothing inside is admitted', async () => {
    expect((await decideTarget('127.0.0.1', 443)).admitted).toBe(false);
    expect((await decideTarget('127.0.0.1', 443, { allow: compileAllowedTargets('') })).admitted).toBe(false);
  });
});

describe('registration: the reported findings (issue 25, 2)', () => {
  // channels and console registrations accepted these, and each was connected to
  it.each(['https://127.0.0.1/hook', 'https://[::1]/hook', 'https://0x7f000001/hook', 'https://localhost/hook', 'https://169.254.169.254/latest/meta-data/', 'https://localhost.:8443/', 'https://[::ffff:7f00:1]/'])('%s: 400 target_refused naming url', async (url) => {
    const e = await requireAdmittedUrl(url, outboundTrust([])).catch((x) => x);
    expect(e).toMatchObject({ status: 400, code: 'target_refused', details: { fields: { url: expect.any(String) } } });
    const c = await admitChannelUrl({ url }, { targets: outboundTrust([]) }).catch((x) => x);
    expect(c).toMatchObject({ status: 400, code: 'target_refused' });
    // one answer whatever the reason (loopback, link-local, a local name): the reason is in the log only
    const privateOne = await requireAdmittedUrl('https://10.0.0.1/', outboundTrust([])).catch((x) => x);
    expect([e.details, c.details]).toEqual([privateOne.details, privateOne.details]);
  });
  it('accepts what the allow-list admits, and an empty URL (an edit that keeps the stored one)', async () => {
    await expect(requireAdmittedUrl('https://127.0.0.1:9443/x', outboundTrust(['127.0.0.1/32']))).resolves.toBeUndefined();
    await expect(admitChannelUrl({ url: '' }, { targets: outboundTrust([]) })).resolves.toBeUndefined();
  });
});

// ---- connections: real HTTPS servers on loopback (127.0.0.1 and 127.0.0.2 are both local on Linux)

const ca = makeTestCa('outbound');
const otherCa = makeTestCa('outbound-other');
const listening: net.Server[] = [];
const connections = new Map<net.Server, number>();
const sockets = new Set<net.Socket>();
async function listen(server: net.Server, host: string, port = 0): Promise<number> {
  connections.set(server, 0);
  server.on('connection', (s: net.Socket) => {
    connections.set(server, connections.get(server)! + 1);
    sockets.add(s);
  });
  await new Promise<void>((r) => server.listen(port, host, r));
  listening.push(server);
  return (server.address() as AddressInfo).port;
}
const httpsServer = (cert: { key: string; cert: string }, hits: string[], label: string) =>
  https.createServer(cert, (req, res) => {
    hits.push(label);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(listening.map((s) => new Promise((r) => s.close(r))));
});

describe('the connection goes to the address that was checked', () => {
  it('a resolver that changes its answer between the check and the connection cannot move it', async () => {
    const hits: string[] = [];
    const cert = ca.issue('pinned', { san: 'DNS:pinned.example.com' });
    const a = httpsServer(cert, hits, 'checked');
    const port = await listen(a, '127.0.0.1');
    const b = httpsServer(cert, hits, 'second-answer');
    await listen(b, '127.0.0.2', port);
    let calls = 0;
    // first answer: the admitted 127.0.0.1; any later one: 127.0.0.2, which the allow-list does not admit
    const resolve: Resolver = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const trust: OutboundTrust = { extraCaPem: ca.caPem, allow: compileAllowedTargets('127.0.0.1/32'), resolve };
    const r = await httpsRequest({ url: `https://pinned.example.com:${port}/status` }, trust);
    expect(r).toMatchObject({ ok: true, status: 200 });
    expect(r.cert!.subject).toContain('CN=pinned'); // SNI and identity: the name, not the address
    expect(calls).toBe(1); // resolved once: nothing resolved again at connect time
    expect(hits).toEqual(['checked']);
    // the next request resolves again, is given 127.0.0.2, and is refused before any connection
    const again = await httpsRequest({ url: `https://pinned.example.com:${port}/status` }, trust);
    expect(again).toEqual({ ok: false, error: 'connect_error', ms: expect.any(Number) });
    expect(connections.get(b)).toBe(0);
    expect(hits).toEqual(['checked']);
  });

  it('the agents for ACME and the DNS provider connect where the policy looked, literal addresses decided too', async () => {
    const hits: string[] = [];
    const cert = ca.issue('agent', { san: 'DNS:acme.example.com' });
    const a = httpsServer(cert, hits, 'checked');
    const port = await listen(a, '127.0.0.1');
    const b = httpsServer(cert, hits, 'second-answer');
    await listen(b, '127.0.0.2', port);
    let calls = 0;
    const resolve: Resolver = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const agents = outboundAgents({ allow: compileAllowedTargets('127.0.0.1/32'), resolve });
    const get = (url: string) =>
      new Promise<number | string>((done) => {
        https
          .get(url, { agent: agents.https, ca: ca.caPem }, (res) => {
            res.resume();
            res.on('end', () => done(res.statusCode ?? 0));
          })
          .on('error', (e) => done((e as NodeJS.ErrnoException).code ?? e.name));
      });
    expect(await get(`https://acme.example.com:${port}/dir`)).toBe(200);
    expect(await get(`https://acme.example.com:${port}/dir`)).toBe('EOUTBOUNDREFUSED');
    expect(await get(`https://127.0.0.2:${port}/dir`)).toBe('EOUTBOUNDREFUSED');
    expect(await get(`https://[::ffff:127.0.0.2]:${port}/dir`)).toBe('EOUTBOUNDREFUSED');
    expect(hits).toEqual(['checked']);
    expect(connections.get(b)).toBe(0);
  });
});

describe('refused, closed and unreachable answer alike; the cause is in the log', () => {
  const allow = compileAllowedTargets('127.0.0.1/32, 192.0.2.1/32');
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('every failure before a verified session is connect_error, with nothing else to tell them apart', async () => {
    const hits: string[] = [];
    // listening on 127.0.0.2, which the policy refuses
    const refusedPort = await listen(httpsServer(ca.issue('refused'), hits, 'refused'), '127.0.0.2');
    // a closed port
    const probe = net.createServer();
    const closedPort = await listen(probe, '127.0.0.1');
    await new Promise((r) => probe.close(r));
    listening.splice(listening.indexOf(probe), 1);
    // open, but not TLS: accepts and says nothing (a filtered port looks the same from here)
    const silentPort = await listen(net.createServer(() => undefined), '127.0.0.1');
    // open, TLS, an untrusted certificate
    const untrustedPort = await listen(httpsServer(otherCa.issue('untrusted'), hits, 'untrusted'), '127.0.0.1');
    // open, speaking plain HTTP
    const plainPort = await listen(net.createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n')), '127.0.0.1');

    const trust: OutboundTrust = { extraCaPem: ca.caPem, allow, resolve: noDns };
    const targets: Record<string, string> = {
      refused: `https://127.0.0.2:${refusedPort}/`,
      refusedNotation: `https://0x7f000002:${refusedPort}/`,
      metadata: 'https://169.254.169.254/latest/meta-data/',
      localhost: `https://localhost:${refusedPort}/`,
      unresolved: 'https://nowhere.example.com/',
      closed: `https://127.0.0.1:${closedPort}/`,
      silent: `https://127.0.0.1:${silentPort}/`,
      untrusted: `https://127.0.0.1:${untrustedPort}/`,
      plain: `https://127.0.0.1:${plainPort}/`,
      unreachable: 'https://192.0.2.1:443/', // admitted by the list, routed nowhere
    };
    const results: Record<string, unknown> = {};
    for (const [k, url] of Object.entries(targets)) {
      const r = await httpsRequest({ url, timeoutMs: 1_500, logContext: { channel: k } }, trust);
      const { ms, ...rest } = r;
      expect(ms).toBeLessThan(3_000);
      results[k] = rest;
    }
    for (const k of Object.keys(targets)) expect([k, results[k]]).toEqual([k, { ok: false, error: 'connect_error' }]);
    expect(hits).toEqual([]);
    // the log says why, by the caller's context, never the URL
    const logged = warn.mock.calls.filter((c) => c[0] === 'outbound_failed').map((c) => c[1] as Record<string, string>);
    const reasonOf = (k: string) => logged.find((l) => l.channel === k);
    expect(reasonOf('refused')).toMatchObject({ phase: 'policy', reason: 'loopback' });
    expect(reasonOf('metadata')).toMatchObject({ phase: 'policy', reason: 'link_local' });
    expect(reasonOf('localhost')).toMatchObject({ phase: 'policy', reason: 'local_name' });
    expect(reasonOf('unresolved')).toMatchObject({ phase: 'policy', reason: 'unresolved' });
    expect(reasonOf('closed')).toMatchObject({ phase: 'tcp', reason: 'ECONNREFUSED' });
    expect(reasonOf('silent')).toMatchObject({ phase: 'tls', reason: 'timeout' });
    expect(reasonOf('untrusted')).toMatchObject({ phase: 'tls', reason: expect.stringMatching(/UNABLE_TO_VERIFY|SELF_SIGNED|UNABLE_TO_GET_ISSUER/) });
    expect(JSON.stringify(logged)).not.toMatch(/https:|127\.0\.0\.2|169\.254/);
  });

  it('a peer certificate only from a session that verified, or that verified apart from its dates', async () => {
    const hits: string[] = [];
    const good = await listen(httpsServer(ca.issue('good'), hits, 'good'), '127.0.0.1');
    const untrusted = await listen(httpsServer(otherCa.issue('stranger'), hits, 'stranger'), '127.0.0.1');
    const expired = await listen(httpsServer(ca.issue('expired', { startdate: '20200101000000Z', enddate: '20200201000000Z' }), hits, 'expired'), '127.0.0.1');
    const wrongName = await listen(httpsServer(ca.issue('wrongname', { san: 'DNS:elsewhere.example.com' }), hits, 'wrongname'), '127.0.0.1');
    const expiredWrongCa = await listen(httpsServer(otherCa.issue('old-stranger', { startdate: '20200101000000Z', enddate: '20200201000000Z' }), hits, 'x'), '127.0.0.1');
    const trust: OutboundTrust = { extraCaPem: ca.caPem, allow };
    const get = (port: number) => httpsRequest({ url: `https://127.0.0.1:${port}/` }, trust);
    expect(await get(good)).toMatchObject({ ok: true, cert: { subject: expect.stringContaining('CN=good') } });
    const u = await get(untrusted);
    expect([u.error, u.cert]).toEqual(['connect_error', undefined]);
    const w = await get(wrongName);
    expect([w.error, w.cert]).toEqual(['connect_error', undefined]);
    const ew = await get(expiredWrongCa);
    expect([ew.error, ew.cert]).toEqual(['connect_error', undefined]);
    // trusted CA, right name, out of date: the certificate rule reads it; nothing is sent on it
    const e = await get(expired);
    expect(e).toMatchObject({ ok: false, error: 'connect_error', cert: { validTo: '2020-02-01T00:00:00.000Z', subject: expect.stringContaining('CN=expired') } });
    expect(hits).toEqual(['good']);
  });
});

// ---- the findings through the product's own functions: nothing stored, nothing audited, nothing called

describe('the reported URLs, through the functions that register them', () => {
  const reported = ['https://127.0.0.1/hook', 'https://[::1]/hook', 'https://0x7f000001/hook', 'https://localhost/hook', 'https://169.254.169.254/latest/meta-data/'];
  const key = Buffer.alloc(32, 7);

  it.each(reported)('fleet: alert channel %s is refused on create and on edit', async (url) => {
    const store = memoryStore();
    const policy = fleetChannelPolicy(loadFleetConfig({ SECRETS_ENCRYPTION_KEY: key.toString('base64') }));
    await expect(createFleetChannel(store, policy, { name: 'ops', type: 'chat', url })).rejects.toMatchObject({ status: 400, code: 'target_refused', details: { fields: { url: expect.any(String) } } });
    expect(await listFleetChannels(store)).toEqual([]);
    const ok = await createFleetChannel(store, policy, { name: 'ops', type: 'chat', url: 'https://chat.example.com/hook' });
    await expect(updateFleetChannel(store, policy, ok.id, { url })).rejects.toMatchObject({ code: 'target_refused' });
    expect((await listFleetChannels(store))[0].urlOrigin).toBe('https://chat.example.com');
  });

  it.each(reported)('fleet: console registration %s is refused, and so is a URL change to it', async (url) => {
    const store = memoryStore();
    const rt = { config: loadFleetConfig({}), store, audit: new AuditChain(store, 'fleet'), masterKey: async () => key } as unknown as FleetRuntime;
    const by = { actor: { name: 'admin', kind: 'local' }, correlationId: 'c1' } as unknown as Acting;
    await createClient(store, { code: 'acme', name: 'Acme' } as never);
    const before = store.items.size;
    await expect(addConsole(rt, { clientCode: 'acme', url, token: 'a-console-token-0123456789' }, by)).rejects.toMatchObject({ status: 400, code: 'target_refused', details: { fields: { url: expect.any(String) } } });
    expect(store.items.size).toBe(before); // no console, no audit row
    const c = await addConsole(rt, { clientCode: 'acme', url: 'https://console.example.com', token: 'a-console-token-0123456789' }, by);
    const current = (await listConsoles(store)).find((x) => x.id === c.id)!;
    await expect(editConsole(rt, current, { url }, by)).rejects.toMatchObject({ code: 'target_refused' });
    expect((await listConsoles(store)).find((x) => x.id === c.id)!.url).toBe('https://console.example.com');
  });

  it.each(reported)("console: the approval webhook %s is refused", async (url) => {
    const store = memoryStore();
    const rt = { config: loadConfig({}).config, store, masterKey: async () => key } as unknown as ConsoleRuntime;
    await expect(saveChannel(rt, 'approvers', { url, secret: 's'.repeat(32), events: ['approval_requested'], enabled: true })).rejects.toMatchObject({ status: 400, code: 'target_refused' });
    expect(await listChannels(rt)).toEqual([]);
  });

  it('the lab allow-list admits its loopback receiver, and only it', async () => {
    const store = memoryStore();
    const rt = { config: loadConfig({ Outbound__AllowedTargets: '127.0.0.1/32' }).config, store, masterKey: async () => key } as unknown as ConsoleRuntime;
    expect((await saveChannel(rt, 'lab', { url: 'https://127.0.0.1:8443/hook', secret: 's'.repeat(32), events: ['approval_requested'], enabled: true })).created).toBe(true);
    await expect(saveChannel(rt, 'lab2', { url: 'https://[::1]:8443/hook', secret: 's'.repeat(32), events: ['approval_requested'], enabled: true })).rejects.toMatchObject({ code: 'target_refused' });
    expect(() => loadConfig({ Outbound__AllowedTargets: 'localhost' })).toThrow(/Outbound:AllowedTargets/);
    expect(() => loadFleetConfig({ FLEET_OUTBOUND_ALLOWED_TARGETS: '10.0.0.0/8, lab.local' })).toThrow(/FLEET_OUTBOUND_ALLOWED_TARGETS/);
    expect(loadFleetConfig({ FLEET_OUTBOUND_ALLOWED_TARGETS: '10.0.0.0/8 [fd00::1]:443' }).FLEET_OUTBOUND_ALLOWED_TARGETS).toEqual(['10.0.0.0/8', '[fd00::1]:443']);
  });
});
