import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver';
import { stack as testStack } from '../../support/stack';
import { makeTestCa } from '../../support/test-ca';
import { adminAuth, auditRowOf, call } from './support';

// The outbound policy through the fleet plane's HTTP API (issue 25, finding 2): channels and
// consoles naming an inside address are refused at registration (400 target_refused naming url,
// nothing stored); the lab's allow-list (FLEET_OUTBOUND_ALLOWED_TARGETS=127.0.0.1/32 in the test
// stack) admits its loopback receivers and nothing else; a closed port, a port that does not
// speak TLS and a server whose certificate does not verify answer alike, and the poll answer
// shows no certificate of a server that did not verify.

// what the review registered and reached; 127.0.0.1 itself is the lab's own (admitted here, refused without the list: unit tests)
const INSIDE = ['https://[::1]/hook', 'https://localhost/hook', 'https://169.254.169.254/latest/meta-data/', 'https://0x7f000002/hook', 'https://127.0.0.2:8443/x', 'https://[::ffff:7f00:2]/', 'https://10.0.0.1/', 'https://localhost.:443/'];

let auth: { assertion: string };
const api = (method: string, path: string, body?: unknown) => call(method, path, { ...auth, body });
const cleanup: Array<() => Promise<unknown>> = [];
const sockets = new Set<net.Socket>();
async function listen(server: net.Server): Promise<number> {
  server.on('connection', (s: net.Socket) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise((r) => server.close(r)));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  auth = await adminAuth();
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

describe('registration refuses an inside target (400 target_refused naming url, nothing stored)', () => {
  it.each(INSIDE)('alert channel %s', async (url) => {
    const before = (await api('GET', '/api/alerts/channels')).body.channels.length;
    const r = await api('POST', '/api/alerts/channels', { name: 'inside', type: 'chat', url });
    expect([r.status, r.body.code, Object.keys(r.body.fields ?? {})]).toEqual([400, 'target_refused', ['url']]);
    expect((await api('GET', '/api/alerts/channels')).body.channels.length).toBe(before);
  });

  it.each(INSIDE)('console %s, and a URL change to it', async (url) => {
    const ids = async () => JSON.stringify((await api('GET', '/api/consoles')).body).match(/"id":"[^"]+"/g);
    const before = await ids();
    const r = await api('POST', '/api/consoles', { clientCode: 'acme', url, token: 'outbound-policy-token-0123' });
    expect([r.status, r.body.code, Object.keys(r.body.fields ?? {})]).toEqual([400, 'target_refused', ['url']]);
    expect(await ids()).toEqual(before);
  });

  it('a console URL change to an inside target is refused and the console keeps its URL', async () => {
    const c = await api('POST', '/api/consoles', { clientCode: 'acme', url: 'https://console-outbound.example.test', token: 'outbound-policy-token-0123' });
    expect(c.status).toBe(201);
    cleanup.push(() => api('DELETE', `/api/consoles/${c.body.id}`));
    const r = await api('PUT', `/api/consoles/${c.body.id}`, { url: 'https://169.254.169.254' });
    expect([r.status, r.body.code]).toEqual([400, 'target_refused']);
    expect((await api('GET', `/api/consoles/${c.body.id}`)).body.url).toBe('https://console-outbound.example.test');
  });
});

describe('the lab allow-list: loopback receivers answer alike whatever is (not) listening', () => {
  let receiver: HttpsReceiver;
  beforeAll(async () => {
    receiver = await startHttpsReceiver(testStack.directory.caFile);
    cleanup.push(() => receiver.close());
  });

  it('a verified receiver on 127.0.0.1 is delivered to; closed, silent, plain-HTTP and untrusted ones all answer connect_error', async () => {
    const closed = await listen(net.createServer());
    await new Promise((r) => cleanup.pop()!().then(r)); // closed again: nothing listens there
    const silent = await listen(net.createServer(() => undefined));
    const plain = await listen(net.createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
    const stranger = makeTestCa('outbound-stranger').issue('stranger');
    const untrusted = await listen(https.createServer(stranger, (_q, s) => s.end('{}')));
    const targets: Record<string, string> = {
      verified: `${receiver.url}/hook`,
      closed: `https://127.0.0.1:${closed}/hook`,
      silent: `https://127.0.0.1:${silent}/hook`,
      plain: `https://127.0.0.1:${plain}/hook`,
      untrusted: `https://127.0.0.1:${untrusted}/hook`,
    };
    const answers: Record<string, unknown> = {};
    for (const [name, url] of Object.entries(targets)) {
      const c = await api('POST', '/api/alerts/channels', { name: `lab ${name}`, type: 'chat', url });
      expect(c.status).toBe(201);
      cleanup.push(() => api('DELETE', `/api/alerts/channels/${c.body.id}`));
      const t = await api('POST', `/api/alerts/channels/${c.body.id}/test`);
      answers[name] = t.body;
      expect(await auditRowOf(t.correlationId)).toMatchObject({ event: 'alerts.channel.test', ...(name === 'verified' ? { outcome: 'success' } : { outcome: 'error', reason: 'connect_error' }) });
    }
    expect(answers).toEqual({
      verified: { ok: true, status: 204 },
      closed: { ok: false, error: 'connect_error' },
      silent: { ok: false, error: 'connect_error' },
      plain: { ok: false, error: 'connect_error' },
      untrusted: { ok: false, error: 'connect_error' },
    });
    expect(receiver.received.filter((r) => r.url === '/hook')).toHaveLength(1);
  });

  it('poll now: a console whose certificate does not verify answers connect_error with no certificate and no detail', async () => {
    const stranger = makeTestCa('outbound-console').issue('impostor');
    let asked = 0;
    const port = await listen(https.createServer(stranger, (_q, s) => void (asked++, s.end('{}'))));
    const c = await api('POST', '/api/consoles', { clientCode: 'acme', url: `https://127.0.0.1:${port}`, token: 'outbound-policy-token-0123' });
    expect(c.status).toBe(201);
    cleanup.push(() => api('DELETE', `/api/consoles/${c.body.id}`));
    const r = await api('POST', `/api/consoles/${c.body.id}/poll`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ polled: true, ok: false, error: 'connect_error', certificate: null });
    expect(r.body).not.toHaveProperty('detail');
    expect(r.text).not.toMatch(/impostor|SELF_SIGNED|UNABLE_TO_VERIFY|ECONNREFUSED/);
    expect(asked).toBe(0); // no request, so no bearer token, on a connection that did not verify
  });
});
