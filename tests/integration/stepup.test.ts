import { windowKey } from '../../lib/store/window';
import { ConsoleClient } from '../../local/console-client';
import { account, auditMark, auditSince, nextCode, seedUser, signedIn, stack, store } from '../support/stack';

describe('step-up and the step-up mode', () => {
  it('needs the current mode’s step-up to change the mode, audits each change, and honours the new mode', async () => {
    const c = await signedIn('op-super', { fresh: true });
    const a = account('op-super');

    // no recent step-up yet: refused, naming the proof to ask for
    const refused = await c.put('/api/settings/step-up-mode', { mode: 'password' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ code: 'reauth_required', proof: 'authenticator' });

    // in mode authenticator an enrolled operator proves with a code, not the password
    const byPassword = await c.post('/api/auth/reauth', { password: a.password });
    expect(byPassword.status).toBe(400);
    expect(byPassword.body.code).toBe('authenticator_code_required');

    let mark = await auditMark();
    const wrong = await c.post('/api/auth/reauth', { code: '000000' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe('reauth_failed');
    expect((await auditSince(mark)).find((r) => r.event === 'auth.reauth')).toMatchObject({ outcome: 'failure', reason: 'authenticator' });

    mark = await auditMark();
    const ok = await c.post('/api/auth/reauth', { code: await nextCode('op-super') });
    expect(ok.status).toBe(200);
    expect((await auditSince(mark)).find((r) => r.event === 'auth.reauth')).toMatchObject({ outcome: 'success', reason: 'authenticator' });

    mark = await auditMark();
    const changed = await c.put('/api/settings/step-up-mode', { mode: 'password' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ mode: 'password', previous: 'authenticator', warning: 'signin_password_only' });
    expect((await auditSince(mark)).find((r) => r.event === 'settings.step_up_mode')).toMatchObject({ outcome: 'success', details: { old: 'authenticator', new: 'password' } });

    // mode password: the proof is the directory password; a code is refused
    const code = await c.post('/api/auth/reauth', { code: '123456' });
    expect(code.status).toBe(400);
    expect(code.body.code).toBe('password_required');
    expect((await c.post('/api/auth/reauth', { password: 'not-it' })).status).toBe(403);
    expect((await c.post('/api/auth/reauth', { password: a.password })).status).toBe(200);

    const back = await c.put('/api/settings/step-up-mode', { mode: 'authenticator' });
    expect(back.status).toBe(200);
    expect((await c.get('/api/auth/me')).body).toMatchObject({ stepUpMode: 'authenticator', stepUpWindowSeconds: 300 }); // the web app shows the time left

    // the window opened with the password (mode password) does not satisfy mode authenticator
    mark = await auditMark();
    const stale = await c.put('/api/settings/step-up-mode', { mode: 'authenticator' });
    expect(stale.status).toBe(403);
    expect(stale.body).toEqual({ code: 'reauth_required', proof: 'authenticator' });
    expect((await auditSince(mark)).find((r) => r.event === 'settings.step_up_mode')).toBeUndefined();
    expect((await c.post('/api/auth/reauth', { code: await nextCode('op-super') })).status).toBe(200);
    expect((await c.put('/api/settings/step-up-mode', { mode: 'authenticator' })).status).toBe(200);
  });

  it('failed step-ups (5, then 429 reauth_rate_limited) never lock the operator out of sign-in', async () => {
    const a = account('op-auditor');
    const window = windowKey({ scope: 'stepup-account', subject: `guid:${seedUser('op-auditor').guid.toLowerCase()}` });
    const c = await signedIn('op-auditor');
    try {
      for (let i = 0; i < 5; i++) {
        const r = await c.post('/api/auth/reauth', { code: '000000' });
        expect([r.status, r.body.code]).toEqual([403, 'reauth_failed']);
      }
      const mark = await auditMark();
      const sixth = await c.post('/api/auth/reauth', { code: '000000' });
      expect([sixth.status, sixth.body.code]).toEqual([429, 'reauth_rate_limited']);
      expect((await auditSince(mark)).find((r) => r.event === 'auth.reauth')).toMatchObject({ outcome: 'denied', reason: 'rate_limited:step_up' });
      // a sign-in of the same operator is not refused
      const fresh = await new ConsoleClient(stack.consoleUrl, '127.0.3.30').login(a.username, a.password, await nextCode('op-auditor'));
      expect(fresh.status).toBe(200);
    } finally {
      await store.delete({ Key: window });
    }
  });

  it('refuses the mode change to an operator without settings.manage (403, audited authz.decision), nothing changed', async () => {
    const c = await signedIn('op-helpdesk');
    const mark = await auditMark();
    const r = await c.put('/api/settings/step-up-mode', { mode: 'none' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ code: 'forbidden', permission: 'settings.manage' });
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'settings.manage' } });
    expect(rows.find((x) => x.event === 'settings.step_up_mode')).toBeUndefined();
    expect((await c.get('/api/auth/me')).body.stepUpMode).toBe('authenticator');
  });

  it('validates the mode after the permission and the step-up (400 with field details)', async () => {
    const c = await signedIn('op-super');
    expect((await c.post('/api/auth/reauth', { code: await nextCode('op-super') })).status).toBe(200);
    const r = await c.put('/api/settings/step-up-mode', { mode: 'sometimes' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors[0].field).toBe('body.mode');
  });
});
