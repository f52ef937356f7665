import { randomBytes } from 'node:crypto';
import { POLL_NOW_PER_MINUTE } from '../../../lib/fleet/poll/now';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver';
import { stack as testStack } from '../../support/stack';
import { adminAuth, auditRowOf, auditRows, call, personaHeaders } from './support';

// "Poll now" (POST /api/consoles/{id}/poll) against a real HTTPS console on loopback (the test CA
// the fleet trusts): an operator of the console's client polls it and reads the result, audited
// console.poll; a viewer is refused (403 insufficient_level, audited, the console never asked);
// an out-of-scope technician gets the unknown-id 404; past 6 a minute the console is not asked.

let hook: HttpsReceiver;
let consoleId = '';
const token = `poll-now-${randomBytes(16).toString('hex')}`;
const hits = () => hook.received.filter((r) => r.url.startsWith('/console/acme-now/api/fleet/v1/status'));

beforeAll(async () => {
  hook = await startHttpsReceiver(testStack.directory.caFile);
  hook.answer = () => ({ status: 200, json: { instance: { version: '9.9.9' }, health: { status: 'healthy' }, audit: { chain: 'ok', failedLogins24h: 0 }, directory: { dcs: [{ name: 'dc1.corp.test', state: 'up' }] } } });
  const r = await call('POST', '/api/consoles', { ...(await adminAuth()), body: { clientCode: 'acme', url: `${hook.url}/console/acme-now`, token } });
  expect(r.status).toBe(201);
  consoleId = r.body.id;
});
afterAll(async () => {
  if (consoleId) await call('DELETE', `/api/consoles/${consoleId}`, await adminAuth());
  await hook?.close();
});

it('refuses a viewer of the client: 403 insufficient_level, audited, no poll happened', async () => {
  const r = await call('POST', `/api/consoles/${consoleId}/poll`, await personaHeaders('viewer'));
  expect([r.status, r.body.code]).toEqual([403, 'insufficient_level']);
  expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', outcome: 'denied', reason: 'insufficient_level', actor: { name: 'tech-bob' }, details: { route: 'POST /api/consoles/{id}/poll', requiredLevel: 'operator', client: 'acme' } });
  expect(hits()).toHaveLength(0);
  expect((await call('GET', `/api/consoles/${consoleId}/status`, await adminAuth())).body).toEqual({ consoleId, polled: false });
});

it('answers an out-of-scope technician as an unknown id (404), asking nothing', async () => {
  const r = await call('POST', `/api/consoles/${consoleId}/poll`, await personaHeaders('outsider'));
  const unknown = await call('POST', '/api/consoles/00000000-0000-4000-8000-0000000000ee/poll', await personaHeaders('outsider'));
  expect([r.status, r.body]).toEqual([404, unknown.body]);
  expect(hits()).toHaveLength(0);
});

it('polls for an operator of the client: the result answered and kept as the last poll, audited console.poll', async () => {
  const r = await call('POST', `/api/consoles/${consoleId}/poll`, await personaHeaders('operator'));
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ consoleId, polled: true, ok: true, version: '9.9.9', health: 'healthy', consecutiveFailures: 0 });
  expect(hits()).toHaveLength(1);
  expect(hits()[0].headers.authorization).toBe(`Bearer ${token}`);
  expect((await call('GET', `/api/consoles/${consoleId}/status`, await personaHeaders('viewer'))).body).toMatchObject({ polled: true, ok: true, version: '9.9.9', polledAt: r.body.polledAt });
  expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'console.poll', outcome: 'success', actor: { name: 'tech-alice' }, client: 'acme', target: { id: consoleId, kind: 'console' } });

  // a console that answers 503: the poll happened, its failure is the answer (200), audited error
  hook.answer = () => 503;
  const failed = await call('POST', `/api/consoles/${consoleId}/poll`, await adminAuth());
  expect(failed.status).toBe(200);
  expect(failed.body).toMatchObject({ ok: false, error: 'http_error', httpStatus: 503, consecutiveFailures: 1, version: '9.9.9' });
  expect(await auditRowOf(failed.correlationId)).toMatchObject({ event: 'console.poll', outcome: 'error', reason: 'http_error', details: { httpStatus: 503 } });
  expect(JSON.stringify(await auditRows(100))).not.toContain(token);
});

it(`asks the console at most ${POLL_NOW_PER_MINUTE} times a minute: then 429 too_many_requests, audited, no request`, async () => {
  const op = await personaHeaders('operator');
  const codes: number[] = [];
  for (let i = hits().length; i < POLL_NOW_PER_MINUTE; i++) codes.push((await call('POST', `/api/consoles/${consoleId}/poll`, op)).status);
  expect(codes.every((c) => c === 200)).toBe(true);
  const before = hits().length;
  expect(before).toBe(POLL_NOW_PER_MINUTE);
  const r = await call('POST', `/api/consoles/${consoleId}/poll`, op);
  expect(r.status).toBe(429);
  expect(r.body).toMatchObject({ code: 'too_many_requests', reason: 'poll_now' });
  expect(r.body.retryAfterSeconds).toBeGreaterThan(0);
  expect(r.body.retryAfterSeconds).toBeLessThanOrEqual(60);
  expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'console.poll', outcome: 'denied', reason: 'too_many_requests', client: 'acme' });
  expect(hits()).toHaveLength(before);
});
