import { STATE_CHANGING } from '../../lib/http/route';
import { serverlessHttpEvents } from '../support/serverless-events';
import { auditMark, auditSince, signedIn } from '../support/stack';

// Every state-changing route declared in serverless.yml refuses a call without the session's
// CSRF token (400) before doing anything: no audit row, no change.
const routes = serverlessHttpEvents().filter((e) => STATE_CHANGING.has(e.method as any));

describe('CSRF on every state-changing route', () => {
  let client: Awaited<ReturnType<typeof signedIn>>;
  beforeAll(async () => {
    client = await signedIn('op-super');
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r]))('%s', async (_name, r) => {
    const path = r.path.replace(/\{(\w+)\}/g, '00000000-0000-0000-0000-000000000000');
    const mark = await auditMark();
    // no body on DELETE: serverless-offline leaves an unread DELETE body on the keep-alive socket
    const body = r.method === 'DELETE' ? undefined : {};
    const missing = await client.request(r.method, path, body, { 'x-csrf-token': '' });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('csrf_token_missing');
    const wrong = await client.request(r.method, path, body, { 'x-csrf-token': 'forged' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('csrf_token_invalid');
    expect(await auditSince(mark)).toEqual([]);
    // the session is still there and usable
    expect((await client.get('/api/auth/me')).status).toBe(200);
  });
});
