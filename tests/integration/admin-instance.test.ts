import { setAuthenticator, noteSignIn } from '../../lib/auth/operators';
import { loadMasterKey } from '../../lib/crypto/master-key';
import { deleteRecord } from '../../lib/store/records';
import type { HttpResponse } from '../../local/console-client';
import { account, auditMark, auditSince, newClient, seedUser, signedIn, stack, steppedUp, store } from '../support/stack';

// Instance identification (branding), operator records, the protection list and the LAPS
// account shown read-only, through the real routes (Samba directory, DynamoDB Local,
// serverless-offline). Every refusal: status, code, audit row, nothing changed. Whatever a test
// changes it puts back (other test files share the stack).

const group = (name: string) => stack.directory.groups.find((g) => g.name === name)!;

/** A refusal: its status and code, a `denied` audit row of `event` with that reason, and the state unchanged. */
async function expectRefused(call: () => Promise<HttpResponse>, status: number, code: string, event: string | undefined, state: () => Promise<unknown>) {
  const before = await state();
  const mark = await auditMark();
  const r = await call();
  expect({ status: r.status, code: r.body?.code }).toEqual({ status, code });
  // a missing permission is the guard's authz.decision row (reason missing_permission)
  if (event) expect((await auditSince(mark)).find((x) => x.event === event)).toMatchObject({ outcome: 'denied', reason: event === 'authz.decision' ? 'missing_permission' : code });
  expect(await state()).toEqual(before);
  return r;
}

describe('instance identification (branding)', () => {
  const branding = async () => (await (await signedIn('op-super')).get('/api/settings/branding')).body;
  afterAll(() => deleteRecord(store, 'INSTANCE', 'BRANDING'));

  it('is hidden from anonymous visitors until "show on the sign-in page" is on; operators see the title in /api/auth/me', async () => {
    await deleteRecord(store, 'INSTANCE', 'BRANDING');
    const anonymous = newClient();
    expect((await anonymous.get('/api/branding')).body).toEqual({});
    expect(await branding()).toEqual({ branding: { title: null, accentColour: '#1f5fbf', showOnSignIn: false }, version: 0 });

    const admin = await steppedUp('op-super');
    let mark = await auditMark();
    const saved = await admin.put('/api/settings/branding', { title: '  Acme helpdesk  ', accentColour: '#0A7B50', showOnSignIn: false, version: 0 });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ branding: { title: 'Acme helpdesk', accentColour: '#0a7b50', showOnSignIn: false }, version: 1 });
    expect((await auditSince(mark)).find((x) => x.event === 'settings.branding')).toMatchObject({
      outcome: 'success',
      actor: { name: 'op-super' },
      details: { old: { title: null, showOnSignIn: false }, new: { title: 'Acme helpdesk', accentColour: '#0a7b50', showOnSignIn: false } },
    });
    // the flag is off: still nothing for a visitor; an operator sees the title
    expect((await anonymous.get('/api/branding')).body).toEqual({});
    const helpdesk = await signedIn('op-helpdesk');
    expect((await helpdesk.get('/api/auth/me')).body).toMatchObject({ instance: 'Acme helpdesk', accentColour: '#0a7b50' });

    mark = await auditMark();
    expect((await admin.put('/api/settings/branding', { title: 'Acme helpdesk', accentColour: '#0a7b50', showOnSignIn: true, version: 1 })).status).toBe(200);
    expect((await auditSince(mark)).find((x) => x.event === 'settings.branding')).toMatchObject({ outcome: 'success', details: { old: { showOnSignIn: false }, new: { showOnSignIn: true } } });
    expect((await anonymous.get('/api/branding')).body).toEqual({ title: 'Acme helpdesk', accentColour: '#0a7b50' });
  });

  it('refuses a title outside 1 to 60 plain characters, a bad colour and a stale version (400/409, audited, nothing changed)', async () => {
    const admin = await steppedUp('op-super');
    const version = (await branding()).version;
    const base = { accentColour: '#123456', showOnSignIn: true, version };
    for (const title of ['', '   ', 'x'.repeat(61), 'evil\u202Eright-to-left', 'two\nlines', 'zero\u200Bwidth']) {
      const r = await expectRefused(() => admin.put('/api/settings/branding', { ...base, title }), 400, 'validation_failed', 'settings.branding', branding);
      expect(r.body.errors[0].field).toBe('body.title');
      expect(r.text).not.toContain(title.trim() || '\u0000'); // never echoes the value
    }
    // 60 characters are fine, even outside the BMP (counted as characters, not UTF-16 units)
    expect((await admin.put('/api/settings/branding', { ...base, title: '\u{1F680}'.repeat(60) })).status).toBe(200);
    await expectRefused(() => admin.put('/api/settings/branding', { ...base, title: 'Acme', accentColour: 'red' }), 400, 'validation_failed', 'settings.branding', branding);
    await expectRefused(() => admin.put('/api/settings/branding', { ...base, title: 'Stale', version }), 409, 'version_conflict', 'settings.branding', branding);
  });

  it('needs settings.manage (403, audited) and a step-up to change', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    const before = await branding();
    const mark = await auditMark();
    expect((await helpdesk.get('/api/settings/branding')).status).toBe(403);
    const r = await helpdesk.put('/api/settings/branding', { title: 'Mine', accentColour: '#000000', showOnSignIn: true });
    expect(r.body).toEqual({ code: 'forbidden', permission: 'settings.manage' });
    expect((await auditSince(mark)).filter((x) => x.event === 'authz.decision' && x.outcome === 'denied').length).toBeGreaterThanOrEqual(2);
    const fresh = await signedIn('op-super', { fresh: true });
    expect((await fresh.put('/api/settings/branding', { title: 'No step-up', accentColour: '#000000' })).body.code).toBe('reauth_required');
    expect(await branding()).toEqual(before);
  });
});

describe('operator records', () => {
  const list = async () => (await (await signedIn('op-super')).get('/api/admin/operators')).body.operators as any[];

  it('lists operators with provider, subject, last sign-in, authenticator state and the roles held now', async () => {
    await signedIn('op-branch', { fresh: true }); // a sign-in records provider, subject and time
    const ops = await list();
    const branch = ops.find((o) => o.username === 'op-branch');
    expect(branch).toMatchObject({ id: seedUser('op-branch').guid, provider: 'ad', subject: seedUser('op-branch').guid, authenticator: 'enrolled', directoryAccount: 'enabled', roles: ['Helpdesk'] });
    expect(Date.now() - Date.parse(branch.lastSignInAt)).toBeLessThan(60_000);
    expect(ops.find((o) => o.username === 'op-super')?.roles).toEqual(['Super administrator']);
    // no secret of any kind in the list
    expect(JSON.stringify(ops)).not.toMatch(/sealed|totpSecret|secret/i);
    expect(JSON.stringify(ops)).not.toContain(account('op-branch').totpSecret!);
  });

  it("deletes a record: authenticator and sessions end, audited operators.deleted with name, provider, subject and roles", async () => {
    const target = seedUser('op-branch');
    const branch = await signedIn('op-branch', { fresh: true });
    const admin = await steppedUp('op-super');
    try {
      const mark = await auditMark();
      const r = await admin.delete(`/api/admin/operators/${target.guid}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ deleted: { id: target.guid, name: 'op-branch', provider: 'ad', subject: target.guid, roles: ['Helpdesk'] } });
      expect((await auditSince(mark)).find((x) => x.event === 'operators.deleted')).toMatchObject({
        outcome: 'success',
        actor: { name: 'op-super' },
        target: { id: target.guid, name: 'op-branch' },
        details: { name: 'op-branch', provider: 'ad', subject: target.guid, roles: ['Helpdesk'] },
      });
      expect((await list()).find((o) => o.id === target.guid)).toBeUndefined();
      expect((await branch.get('/api/auth/me')).status).toBe(401);
      await expectRefused(() => admin.delete(`/api/admin/operators/${target.guid}`), 404, 'not_found', 'operators.deleted', list);
      // the rights stay with the delegation: a sign-in enrols again and makes a new record
      expect((await newClient().login('op-branch', account('op-branch').password)).body.code).toBe('totp_enrolment_required');
      expect((await list()).find((o) => o.id === target.guid)).toMatchObject({ authenticator: 'pending', roles: ['Helpdesk'] });
    } finally {
      await setAuthenticator(store, await loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile }), target.guid, 'op-branch', account('op-branch').totpSecret);
      await noteSignIn(store, { guid: target.guid, username: 'op-branch', provider: 'ad', subject: target.guid });
    }
  });

  it('refuses its own record, an unknown or malformed id, a missing permission or step-up (audited, nothing deleted)', async () => {
    const admin = await steppedUp('op-super');
    await expectRefused(() => admin.delete(`/api/admin/operators/${seedUser('op-super').guid}`), 403, 'own_account', 'operators.deleted', list);
    await expectRefused(() => admin.delete('/api/admin/operators/00000000-0000-4000-8000-00000000abcd'), 404, 'not_found', 'operators.deleted', list);
    await expectRefused(() => admin.delete('/api/admin/operators/not-a-guid'), 404, 'not_found', undefined, list);
    const helpdesk = await signedIn('op-helpdesk');
    await expectRefused(() => helpdesk.delete(`/api/admin/operators/${seedUser('op-branch').guid}`), 403, 'forbidden', 'authz.decision', list);
    const fresh = await signedIn('op-super', { fresh: true });
    await expectRefused(() => fresh.delete(`/api/admin/operators/${seedUser('op-branch').guid}`), 403, 'reauth_required', undefined, list);
  });
});

describe('the protection list and the LAPS account', () => {
  const groups = async () => (await (await signedIn('op-super')).get('/api/admin/protected-groups')).body.groups as Array<{ id: string; dn: string }>;
  const sales = group('GG-Sales');
  afterAll(async () => {
    const admin = await steppedUp('op-super');
    if ((await groups()).some((g) => g.id.toLowerCase() === sales.guid.toLowerCase())) await admin.delete(`/api/admin/protected-groups/${sales.guid}`);
  });

  it('lists the protected groups; adding one makes its members VIP at once, removing it ends that (each audited with old and new lists)', async () => {
    expect((await groups()).map((g) => g.dn)).toEqual([group('GG-VIP').dn]);
    const admin = await steppedUp('op-super');
    const helpdesk = await signedIn('op-helpdesk');
    const bob = seedUser('bob');
    expect((await helpdesk.get(`/api/users/${bob.guid}`)).body.protected).toBe(false);

    let mark = await auditMark();
    const added = await admin.post('/api/admin/protected-groups', { group: 'GG-Sales' });
    expect(added.status).toBe(201);
    expect((await auditSince(mark)).find((x) => x.event === 'settings.protected_groups')).toMatchObject({
      outcome: 'success',
      reason: 'added',
      target: { id: sales.guid, name: 'GG-Sales' },
      details: { old: [group('GG-VIP').dn], new: [group('GG-VIP').dn, sales.dn] },
    });
    expect((await helpdesk.get(`/api/users/${bob.guid}`)).body.protected).toBe(true);

    mark = await auditMark();
    expect((await admin.delete(`/api/admin/protected-groups/${sales.guid}`)).status).toBe(200);
    expect((await auditSince(mark)).find((x) => x.event === 'settings.protected_groups')).toMatchObject({ outcome: 'success', reason: 'removed', details: { new: [group('GG-VIP').dn] } });
    expect((await helpdesk.get(`/api/users/${bob.guid}`)).body.protected).toBe(false);
  });

  it('refuses an unknown group, one already listed, removing one not listed, a missing permission (audited, nothing changed)', async () => {
    const admin = await steppedUp('op-super');
    await expectRefused(() => admin.post('/api/admin/protected-groups', { group: 'GG-No-Such-Group' }), 400, 'group_not_found', 'settings.protected_groups', groups);
    await expectRefused(() => admin.post('/api/admin/protected-groups', { group: group('GG-VIP').dn }), 409, 'already_protected', 'settings.protected_groups', groups);
    await expectRefused(() => admin.post('/api/admin/protected-groups', { group: 'bob' }), 400, 'group_not_found', 'settings.protected_groups', groups);
    await expectRefused(() => admin.delete(`/api/admin/protected-groups/${sales.guid}`), 404, 'not_found', 'settings.protected_groups', groups);
    const helpdesk = await signedIn('op-helpdesk');
    await expectRefused(() => helpdesk.post('/api/admin/protected-groups', { group: 'GG-Sales' }), 403, 'forbidden', 'authz.decision', groups);
    await expectRefused(() => helpdesk.delete(`/api/admin/protected-groups/${group('GG-VIP').guid}`), 403, 'forbidden', 'authz.decision', groups);
  });

  it('shows the LAPS account UPN read-only (no route changes it)', async () => {
    const admin = await signedIn('op-super');
    const r = await admin.get('/api/admin/laps-account');
    expect(r.body).toEqual({ upn: stack.directory.technicalAccounts.laps.upn, source: 'Helpdesk:LapsIdentityUpn', helpdeskEnabled: true, readOnly: true });
    expect((await admin.put('/api/admin/laps-account', { upn: 'x@y' })).status).toBe(404);
    expect((await (await signedIn('op-helpdesk')).get('/api/admin/laps-account')).status).toBe(403);
  });
});
