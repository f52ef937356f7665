import { windowKey } from '../../lib/store/window';
import type { ConsoleClient } from '../../local/console-client';
import { SoftAuthenticator } from '../support/passkey-authenticator';
import { auditMark, auditSince, nextCode, seedUser, signedIn, stack, store } from '../support/stack';

// Passkeys (issue 32) through the real console: registration (step-up first, UV required), a
// passkey step-up audited `stepup:passkey`, the strict LAPS step-up accepting an assertion made
// for that request only, once, and the refusals of a crafted assertion (replayed, another origin,
// UV missing, a counter going backwards, a removed passkey), each with its code and audit row.
// The software authenticator makes real ES256 credentials and assertions (tests/support).

const ORIGIN = stack.consoleWebUrl; // Hosting:PublicOrigin of the test stack
const computer = (name: string) => stack.directory.computers.find((x) => x.name === name)!;
const guidOf = (u: string) => seedUser(u).guid.toLowerCase();
const windows = (u: string) => ['stepup-account', 'signin-account'].map((scope) => windowKey({ scope, subject: `guid:${guidOf(u)}` }));

async function register(c: ConsoleClient, auth: SoftAuthenticator, name = 'laptop') {
  const options = await c.post('/api/auth/passkeys/registration-options');
  expect(options.status).toBe(200);
  expect(options.body.authenticatorSelection).toMatchObject({ userVerification: 'required' });
  return c.post('/api/auth/passkeys', { response: auth.create(options.body), name });
}
async function assertionFor(c: ConsoleClient, auth: SoftAuthenticator, purpose: { action: string; target?: string }, bend = {}) {
  const options = await c.post('/api/auth/passkeys/step-up-options', purpose);
  expect(options.status).toBe(200);
  return auth.get(options.body, bend);
}
const REVEAL = 'POST /api/computers/{id}/laps';

describe('passkeys', () => {
  let c: ConsoleClient;
  const auth = new SoftAuthenticator(ORIGIN);
  beforeAll(async () => {
    c = await signedIn('op-helpdesk', { fresh: true });
  });
  afterAll(async () => {
    // the operator's passkeys and failure windows go: other files sign in as op-helpdesk
    const list = await c.get('/api/auth/passkeys');
    if (list.body?.items?.length) {
      await c.post('/api/auth/reauth', { code: await nextCode('op-helpdesk') });
      for (const p of list.body.items) await c.delete(`/api/auth/passkeys/${p.ref}`);
    }
    for (const Key of windows('op-helpdesk')) await store.delete({ Key });
  });

  it('registers a passkey only after a step-up, with user verification; audited; only its reference and name are listed', async () => {
    const early = await c.post('/api/auth/passkeys/registration-options');
    expect([early.status, early.body.code]).toEqual([403, 'reauth_required']);
    expect((await c.post('/api/auth/reauth', { code: await nextCode('op-helpdesk') })).status).toBe(200);

    let mark = await auditMark();
    const noUv = await c.post('/api/auth/passkeys', { response: auth.create((await c.post('/api/auth/passkeys/registration-options')).body, { uv: false }), name: 'no-uv' });
    expect([noUv.status, noUv.body.code]).toEqual([403, 'passkey_user_verification_required']);
    expect((await auditSince(mark)).find((r) => r.event === 'auth.passkey_registered')).toMatchObject({ outcome: 'failure', reason: 'passkey_user_verification_required' });

    mark = await auditMark();
    const created = await register(c, auth);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ ref: expect.any(String), name: 'laptop', createdAt: expect.any(String) });
    expect((await auditSince(mark)).find((r) => r.event === 'auth.passkey_registered')).toMatchObject({ outcome: 'success', details: { credential: created.body.ref, name: 'laptop' } });
    const list = await c.get('/api/auth/passkeys');
    expect(list.body).toEqual({ items: [created.body], max: 10 });
    // nothing of the credential in clear in the store
    const credentialId = auth.credentials[0].id.toString('base64url');
    const items = await store.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `OPERATOR#${guidOf('op-helpdesk')}` } });
    expect(JSON.stringify(items)).not.toContain(credentialId);
  });

  it('steps up with a passkey (stepup:passkey); the strict LAPS step-up takes an assertion made for that computer only, once', async () => {
    const std2 = computer('WS-STD-02').guid;
    const std3 = computer('WS-STD-03').guid;
    let mark = await auditMark();
    const done = await c.post('/api/auth/reauth', { passkey: await assertionFor(c, auth, { action: REVEAL, target: std2 }) });
    expect(done.status).toBe(200);
    expect(done.body.proof).toBe('passkey');
    expect((await auditSince(mark)).find((r) => r.event === 'auth.reauth')).toMatchObject({ outcome: 'success', reason: 'stepup:passkey', details: { action: REVEAL, target: std2 } });

    // made for WS-STD-02: refused for WS-STD-03, naming what to make the next one for
    const other = await c.post(`/api/computers/${std3}/laps`, { confirm: true, ticket: 'INC-32' });
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ code: 'strict_reauth_required', proof: 'authenticator', passkey: { action: REVEAL, target: std3 } });

    expect((await c.post('/api/auth/reauth', { passkey: await assertionFor(c, auth, other.body.passkey) })).status).toBe(200);
    mark = await auditMark();
    const passed = await c.post(`/api/computers/${std3}/laps`, { confirm: true, ticket: 'INC-32' });
    // the step-up passed: the chain goes on to the directory (WS-STD-03 holds only an encrypted password)
    expect([passed.status, passed.body.code]).toEqual([409, 'laps_encrypted_unsupported']);
    expect((await auditSince(mark)).some((r) => r.reason === 'strict_reauth_required')).toBe(false);
    // used once
    const again = await c.post(`/api/computers/${std3}/laps`, { confirm: true, ticket: 'INC-32' });
    expect([again.status, again.body.code]).toEqual([403, 'strict_reauth_required']);
  });

  it('refuses a replayed assertion, another origin, UV missing, a counter going backwards and a removed passkey, each audited with its code', async () => {
    const purpose = { action: 'PUT /api/settings/step-up-mode' };
    const refused = async (assertion: unknown, code: string) => {
      const mark = await auditMark();
      const r = await c.post('/api/auth/reauth', { passkey: assertion });
      expect([r.status, r.body.code]).toEqual([403, code]);
      expect((await auditSince(mark)).find((x) => x.event === 'auth.reauth')).toMatchObject({ outcome: 'failure', reason: 'stepup:passkey', details: { code } });
    };
    try {
      const ok = await assertionFor(c, auth, purpose);
      expect((await c.post('/api/auth/reauth', { passkey: ok })).status).toBe(200);
      await refused(ok, 'passkey_challenge_invalid');
      await refused(await assertionFor(c, auth, purpose, { origin: 'https://console.example.evil' }), 'passkey_origin_mismatch');
      await refused(await assertionFor(c, auth, purpose, { uv: false }), 'passkey_user_verification_required');
      await refused(await assertionFor(c, auth, purpose, { counter: 1 }), 'passkey_counter_regressed');

      const beforeRemoval = await c.post('/api/auth/passkeys/step-up-options', purpose);
      const [p] = (await c.get('/api/auth/passkeys')).body.items;
      const mark = await auditMark();
      expect((await c.delete(`/api/auth/passkeys/${p.ref}`)).status).toBe(204);
      expect((await auditSince(mark)).find((r) => r.event === 'auth.passkey_removed')).toMatchObject({ outcome: 'success', details: { credential: p.ref } });
      await refused(auth.get(beforeRemoval.body), 'passkey_not_registered');
      expect((await c.get('/api/auth/passkeys')).body.items).toEqual([]);
      const none = await c.post('/api/auth/passkeys/step-up-options', purpose);
      expect([none.status, none.body.code]).toEqual([403, 'no_passkey']);
    } finally {
      for (const Key of windows('op-helpdesk')) await store.delete({ Key });
    }
  });
});
