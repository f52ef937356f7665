import { consoleEnvironment, runAdminCommand } from '../../functions/admin/cli';
import { setAuthenticator } from '../../lib/auth/operators';
import { changeAuthz, putDelegation, putRole } from '../../lib/authz/rights';
import { loadMasterKey } from '../../lib/crypto/master-key';
import { seedDirectory } from '../../local/seed-app';
import { account, auditMark, auditSince, newClient, seedUser, signedIn, stack, steppedUp, store } from '../support/stack';

// An administrator's reset of another operator's authenticator (console spec, Authentication 5)
// and the admin CLI's reset-totp: the authenticator is cleared and the operator's sessions end.
// Every reset here is undone by putting the seeded authenticator back.

const env = { ...process.env, ...consoleEnvironment(stack) };
const restore = async (username: string) =>
  setAuthenticator(store, await loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile }), seedUser(username).guid, username, account(username).totpSecret);
const resetPath = (guid: string) => `/api/admin/operators/${guid}/totp/reset`;

describe('POST /api/admin/operators/{id}/totp/reset', () => {
  it("a Super administrator resets op-branch's authenticator: audited with the reason, op-branch's session ends, op-branch enrols again", async () => {
    const target = seedUser('op-branch');
    const branch = await signedIn('op-branch', { fresh: true });
    expect((await branch.get('/api/auth/me')).status).toBe(200);
    const admin = await steppedUp('op-super');
    try {
      const mark = await auditMark();
      const r = await admin.post(resetPath(target.guid), { reason: 'lost phone, INC-7001' });
      expect(r.status).toBe(200);
      expect(r.body.sessionsEnded).toBeGreaterThanOrEqual(1);
      expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({
        outcome: 'success',
        reason: 'lost phone, INC-7001',
        actor: { name: 'op-super' },
        target: { id: target.guid, name: 'op-branch' },
      });
      const me = await branch.get('/api/auth/me');
      expect(me.status).toBe(401);

      // nothing left to reset: 409, audited
      const m2 = await auditMark();
      const again = await admin.post(resetPath(target.guid), { reason: 'twice' });
      expect([again.status, again.body.code]).toEqual([409, 'no_authenticator']);
      expect((await auditSince(m2)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'denied', reason: 'no_authenticator', target: { id: target.guid } });

      expect((await newClient().login('op-branch', account('op-branch').password)).body.code).toBe('totp_enrolment_required');
    } finally {
      await restore('op-branch');
    }
  });

  it('refuses its own authenticator, an unknown or malformed id (each audited), nothing reset', async () => {
    const admin = await steppedUp('op-super');
    const cases: Array<[string, number, string]> = [
      [seedUser('op-super').guid, 403, 'own_account'],
      ['00000000-0000-4000-8000-00000000abcd', 404, 'not_found'],
      ['not-a-guid', 404, 'not_found'],
    ];
    for (const [id, status, code] of cases) {
      const mark = await auditMark();
      const r = await admin.post(resetPath(id), { reason: 'test' });
      expect([id, r.status, r.body.code]).toEqual([id, status, code]);
      expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'denied', reason: code, target: { id } });
    }
    // op-super still signs in with the authenticator
    expect((await admin.get('/api/auth/me')).status).toBe(200);
  });

  it('needs settings.manage (403, audited authz.decision) and a reason (400)', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    const mark = await auditMark();
    const r = await helpdesk.post(resetPath(seedUser('op-branch').guid), { reason: 'x' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ code: 'forbidden', permission: 'settings.manage' });
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied' });
    expect(rows.find((x) => x.event === 'operators.totp_reset')).toBeUndefined();
    const admin = await steppedUp('op-super');
    expect((await admin.post(resetPath(seedUser('op-branch').guid), { reason: '  ' })).status).toBe(400);
  });

  describe('by an administrator who is not a Super administrator (op-approver2 given settings.manage and every right of the helpdesk role on OU=Branch)', () => {
    beforeAll(async () => {
      const dir = seedDirectory(stack.directory);
      const branchOu = stack.directory.managedOus.find((d) => d.toLowerCase().startsWith('ou=branch,'))!;
      const a2 = seedUser('op-approver2');
      const facts = (await dir.principalFacts(a2.dn))!;
      await putRole(store, {
        id: 'test-totp-admin',
        name: 'Test authenticator administrator',
        permissions: ['settings.manage', 'computers.read', 'computers.laps.read', 'computers.laps.expire', 'computers.bitlocker.read', 'users.read', 'groups.read', 'users.unlock', 'users.password.reset'],
      });
      await putDelegation(store, { id: 'test-totp-admin-branch', roleId: 'test-totp-admin', scope: [await dir.resolveOu(branchOu)], assignees: [{ kind: 'user', guid: facts.guid, sid: facts.sid, name: 'op-approver2' }] });
    });
    afterAll(async () => {
      await changeAuthz(store, () => ({ writes: [{ delete: 'delegation', id: 'test-totp-admin-branch' }, { delete: 'role', id: 'test-totp-admin' }], result: undefined }));
    });

    it("refuses an operator whose rights it does not all hold (op-helpdesk on OU=Managed), and a Super administrator's, audited, nothing reset", async () => {
      const admin = await steppedUp('op-approver2');
      for (const [who, code] of [
        ['op-helpdesk', 'operator_rights_not_held'],
        ['op-super', 'super_administrator_required'],
      ] as const) {
        const mark = await auditMark();
        const r = await admin.post(resetPath(seedUser(who).guid), { reason: 'test' });
        expect([who, r.status, r.body.code]).toEqual([who, 403, code]);
        expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'denied', reason: code, actor: { name: 'op-approver2' }, target: { id: seedUser(who).guid } });
      }
      expect((await newClient().login('op-helpdesk', account('op-helpdesk').password)).body.code).toBe('totp_required');
    });

    it("resets the authenticator of an operator whose rights it all holds (op-branch: helpdesk on OU=Branch)", async () => {
      const admin = await steppedUp('op-approver2');
      try {
        const r = await admin.post(resetPath(seedUser('op-branch').guid), { reason: 'new phone' });
        expect(r.status).toBe(200);
        expect((await newClient().login('op-branch', account('op-branch').password)).body.code).toBe('totp_enrolment_required');
      } finally {
        await restore('op-branch');
      }
    });
  });
});

describe('admin CLI reset-totp', () => {
  it("ends the operator's sessions with the authenticator (audited, reason recovery)", async () => {
    const branch = await signedIn('op-branch', { fresh: true });
    try {
      const mark = await auditMark();
      const r = await runAdminCommand(['reset-totp', 'op-branch'], env);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/session\(s\) ended/);
      expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'success', reason: 'recovery', target: { name: 'op-branch' } });
      expect((await branch.get('/api/auth/me')).status).toBe(401);
    } finally {
      await restore('op-branch');
    }
  });
});
