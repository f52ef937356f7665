import { windowKey } from '../../lib/store/window';
import { ConsoleClient } from '../../local/console-client';
import { SoftAuthenticator } from '../support/passkey-authenticator';
import { account, auditMark, auditSince, newClient, nextCode, seedUser, signedIn, stack, steppedUp, store } from '../support/stack';

// Sign-in with a passkey (issue 32): the password plus a passkey as the second factor, a
// discoverable passkey alone once an administrator allows it (the directory account read by
// GUID), and the administrator's removal of an operator's passkeys (step-up, audited), after
// which the passkey signs in no more.

const ORIGIN = stack.consoleWebUrl;
const WHO = 'op-approver2';
const guid = seedUser(WHO).guid.toLowerCase();

async function passwordThenPasskey(auth: SoftAuthenticator) {
  const c = newClient();
  const first = await c.login(WHO, account(WHO).password);
  return { c, first, second: first.body?.passkeyOptions ? await c.post('/api/auth/login', { username: WHO, password: account(WHO).password, passkey: auth.get(first.body.passkeyOptions) }) : undefined };
}
async function passkeyAlone(auth: SoftAuthenticator, c: ConsoleClient = newClient()) {
  await c.antiforgery();
  const options = await c.post('/api/auth/passkeys/sign-in-options');
  if (options.status !== 200) return { c, options, login: undefined };
  return { c, options, login: await c.post('/api/auth/passkey-login', { passkey: auth.get(options.body) }) };
}

describe('passkeys at sign-in', () => {
  const auth = new SoftAuthenticator(ORIGIN);
  afterAll(async () => {
    const admin = await steppedUp('op-super');
    await admin.put('/api/settings/passkey-sign-in', { allowed: false });
    await admin.post(`/api/admin/operators/${guid}/passkeys/reset`, { reason: 'test cleanup' });
    await store.delete({ Key: windowKey({ scope: 'signin-account', subject: `guid:${guid}` }) });
  });

  it('the password plus a passkey signs in (audited password+passkey); the passkey is offered beside the code', async () => {
    const c = await signedIn(WHO, { fresh: true });
    expect((await c.post('/api/auth/reauth', { code: await nextCode(WHO) })).status).toBe(200);
    const options = await c.post('/api/auth/passkeys/registration-options');
    expect((await c.post('/api/auth/passkeys', { response: auth.create(options.body), name: 'key' })).status).toBe(201);

    const mark = await auditMark();
    const { first, second } = await passwordThenPasskey(auth);
    expect([first.status, first.body.code]).toEqual([401, 'totp_required']);
    expect(first.body.passkeyOptions).toMatchObject({ userVerification: 'required', allowCredentials: [{ id: auth.credentials[0].id.toString('base64url') }] });
    expect(second!.status).toBe(200);
    expect((await auditSince(mark)).filter((r) => r.event === 'auth.login').at(-1)).toMatchObject({ outcome: 'success', reason: 'password+passkey' });
  });

  it('a passkey alone signs in only once an administrator allows it; the account is read by GUID; a replay is refused', async () => {
    expect((await newClient().get('/api/auth/passkey-sign-in')).body).toEqual({ allowed: false });
    let mark = await auditMark();
    const off = await passkeyAlone(auth);
    expect([off.options.status, off.options.body.code]).toEqual([403, 'passkey_signin_disabled']);

    const admin = await steppedUp('op-super');
    const on = await admin.put('/api/settings/passkey-sign-in', { allowed: true });
    expect(on.body).toEqual({ allowed: true, previous: false });
    expect((await auditSince(mark)).find((r) => r.event === 'settings.passkey_sign_in')).toMatchObject({ outcome: 'success', details: { old: false, new: true } });
    expect((await newClient().get('/api/auth/passkey-sign-in')).body).toEqual({ allowed: true });

    mark = await auditMark();
    const { c, options, login } = await passkeyAlone(auth);
    expect(options.body.allowCredentials ?? []).toEqual([]);
    expect(login!.status).toBe(200);
    c.csrf = login!.body.csrfToken;
    expect((await c.get('/api/auth/me')).body).toMatchObject({ username: WHO });
    expect((await auditSince(mark)).find((r) => r.event === 'auth.login')).toMatchObject({ outcome: 'success', reason: 'passkey', actor: { id: guid } });

    // the same answer again, from another pre-session: refused and audited
    const other = newClient();
    await other.antiforgery();
    mark = await auditMark();
    const replay = await other.post('/api/auth/passkey-login', { passkey: auth.get(options.body) });
    expect([replay.status, replay.body.code]).toEqual([401, 'passkey_challenge_invalid']);
    expect((await auditSince(mark)).find((r) => r.event === 'auth.login')).toMatchObject({ outcome: 'failure', reason: 'passkey_challenge_invalid' });
  });

  it('an administrator removes the operator’s passkeys (step-up, audited operators.passkeys_reset); the passkey then signs in no more', async () => {
    const admin = await steppedUp('op-super');
    const mark = await auditMark();
    const reset = await admin.post(`/api/admin/operators/${guid}/passkeys/reset`, { reason: 'lost laptop' });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ operator: { id: guid }, removed: 1 });
    expect((await auditSince(mark)).find((r) => r.event === 'operators.passkeys_reset')).toMatchObject({ outcome: 'success', reason: 'lost laptop', target: { id: guid } });
    const after = await passkeyAlone(auth);
    expect([after.login!.status, after.login!.body.code]).toEqual([401, 'passkey_not_registered']);
    const again = await admin.post(`/api/admin/operators/${guid}/passkeys/reset`, { reason: 'again' });
    expect([again.status, again.body.code]).toEqual([409, 'no_passkey']);
  });
});
