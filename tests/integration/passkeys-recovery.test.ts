import { consoleEnvironment, runAdminCommand } from '../../functions/admin/cli';
import { setAuthenticator } from '../../lib/auth/operators';
import { deleteAllPasskeys } from '../../lib/auth/passkey-records';
import { readSettings, writeSettings } from '../../lib/setup/settings';
import { loadMasterKey } from '../../lib/crypto/master-key';
import { windowKey } from '../../lib/store/window';
import { SoftAuthenticator } from '../support/passkey-authenticator';
import { account, auditMark, auditSince, newClient, nextCode, seedUser, signedIn, stack, store } from '../support/stack';

// Recovery and the passkey-only mode (issue 32), through the real console: the admin command line's
// reset-authenticators removes an operator's passkeys and app secret and ends their sessions
// (audited, in the real chain), and in mode passkey a code is refused to an operator who holds a
// passkey while the passkey passes.

const env = { ...process.env, ...consoleEnvironment(stack) };
const WHO = 'op-branch';
const restore = async () => setAuthenticator(store, await loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile }), seedUser(WHO).guid, WHO, account(WHO).totpSecret);

async function withPasskey(auth: SoftAuthenticator) {
  const c = await signedIn(WHO, { fresh: true });
  expect((await c.post('/api/auth/reauth', { code: await nextCode(WHO) })).status).toBe(200);
  const options = await c.post('/api/auth/passkeys/registration-options');
  expect((await c.post('/api/auth/passkeys', { response: auth.create(options.body), name: 'recovery test' })).status).toBe(201);
  return c;
}

describe('passkeys: recovery and mode passkey', () => {
  afterAll(async () => {
    await restore();
    await store.delete({ Key: windowKey({ scope: 'stepup-account', subject: `guid:${seedUser(WHO).guid.toLowerCase()}` }) });
  });

  it('mode passkey: a code is refused (400 passkey_required) to an operator holding a passkey; the passkey steps up; the mode goes back by passkey', async () => {
    const auth = new SoftAuthenticator(stack.consoleWebUrl);
    const admin = await signedIn('op-super', { fresh: true });
    const superAuth = new SoftAuthenticator(stack.consoleWebUrl);
    expect((await admin.post('/api/auth/reauth', { code: await nextCode('op-super') })).status).toBe(200);
    const o = await admin.post('/api/auth/passkeys/registration-options');
    expect((await admin.post('/api/auth/passkeys', { response: superAuth.create(o.body), name: 'super key' })).status).toBe(201);
    const c = await withPasskey(auth);
    try {
      expect((await admin.put('/api/settings/step-up-mode', { mode: 'passkey' })).body).toMatchObject({ mode: 'passkey', previous: 'authenticator' });
      const byCode = await c.post('/api/auth/reauth', { code: await nextCode(WHO) });
      expect([byCode.status, byCode.body.code]).toEqual([400, 'passkey_required']);
      const options = await c.post('/api/auth/passkeys/step-up-options', { action: 'step-up' });
      const done = await c.post('/api/auth/reauth', { passkey: auth.get(options.body) });
      expect([done.status, done.body.proof]).toEqual([200, 'passkey']);
      // the admin's code window does not serve mode passkey: the change back asks the passkey
      const refused = await admin.put('/api/settings/step-up-mode', { mode: 'authenticator' });
      expect(refused.body).toEqual({ code: 'reauth_required', proof: 'passkey' });
      const so = await admin.post('/api/auth/passkeys/step-up-options', { action: 'PUT /api/settings/step-up-mode' });
      expect((await admin.post('/api/auth/reauth', { passkey: superAuth.get(so.body) })).status).toBe(200);
      expect((await admin.put('/api/settings/step-up-mode', { mode: 'authenticator' })).status).toBe(200);
    } finally {
      // whatever happened, the other files find mode authenticator and no passkey
      const now = (await readSettings(store))!;
      if (now.settings.stepUpMode !== 'authenticator') await writeSettings(store, { ...now.settings, stepUpMode: 'authenticator' }, now.version);
      await deleteAllPasskeys(store, seedUser('op-super').guid);
      await deleteAllPasskeys(store, seedUser(WHO).guid);
    }
    expect((await c.get('/api/auth/me')).status).toBe(200);
  });

  it("reset-authenticators removes the operator's passkeys and app secret, ends their sessions; audited in the chain, reason recovery", async () => {
    const auth = new SoftAuthenticator(stack.consoleWebUrl);
    const c = await withPasskey(auth);
    try {
      const mark = await auditMark();
      const r = await runAdminCommand(['reset-authenticators', WHO], env);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/1 passkey\(s\) removed and the authenticator cleared/);
      expect((await auditSince(mark)).find((x) => x.event === 'operators.authenticators_reset')).toMatchObject({
        outcome: 'success',
        reason: 'recovery',
        target: { name: WHO },
        details: { credentialsRemoved: 1, authenticatorCleared: true },
      });
      expect((await c.get('/api/auth/me')).status).toBe(401);
      // nothing left to reset: exit 1, nothing changed
      expect((await runAdminCommand(['reset-authenticators', WHO], env)).code).toBe(1);
      // they enrol again at the next sign-in (a code or a passkey)
      const next = await newClient().login(WHO, account(WHO).password);
      expect([next.status, next.body.code]).toEqual([401, 'totp_enrolment_required']);
      expect(next.body.passkeyRegistrationOptions).toBeDefined();
    } finally {
      await restore();
    }
  });
});
