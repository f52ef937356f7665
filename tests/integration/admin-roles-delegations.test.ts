import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAdminCommand } from '../../functions/admin/cli';
import type { ConsoleClient } from '../../local/console-client';
import { stepUpByCode, auditMark, auditSince, seedUser, signedIn, stack } from '../support/stack';

// Roles, delegations and Super administrators through the real routes (Samba directory,
// DynamoDB Local, serverless-offline). Every refusal: status, code, audit row, nothing changed.
// Everything created here is removed again (other test files share the stack).

const BASE = stack.directory.baseDn;
const ou = (name: string) => `OU=${name},${BASE}`;
const group = (name: string) => stack.directory.groups.find((g) => g.name === name)!;
const env = { ...process.env, ...stack.stores.console, HDC_MASTER_KEY_FILE: stack.masterKeyFile };

// one code step-up per operator, renewed before the 300 s window closes (tests/support/stack)
const stepUp = stepUpByCode;

let superC: ConsoleClient;
const roles = async () => (await superC.get('/api/admin/roles')).body.roles as Array<{ id: string; name: string; permissions: string[]; version?: number }>;
const delegations = async () => (await superC.get('/api/admin/delegations')).body.delegations as Array<{ id: string; roleId: string; scope: any[]; assignees: any[]; version: number }>;

/** A refusal: its status and code, a `denied` audit row of `event` with that reason, and the state unchanged. */
async function expectRefused(call: () => Promise<{ status: number; body: any }>, status: number, code: string, event: string | undefined, state: () => Promise<unknown>) {
  const before = await state();
  const mark = await auditMark();
  const r = await call();
  expect({ status: r.status, code: r.body?.code }).toEqual({ status, code });
  if (event) expect((await auditSince(mark)).find((x) => x.event === event)).toMatchObject({ outcome: 'denied', reason: code });
  expect(await state()).toEqual(before);
  return r;
}

beforeAll(async () => {
  // a fresh session: no step-up yet
  superC = await signedIn('op-super', { fresh: true });
});

afterAll(async () => {
  // whatever a failed test left behind
  await stepUp(superC, 'op-super');
  for (const d of await delegations()) if (d.id.startsWith('test-')) await superC.delete(`/api/admin/delegations/${d.id}`);
  for (const r of await roles()) if (r.id.startsWith('test-')) await superC.delete(`/api/admin/roles/${r.id}`);
});

describe('roles', () => {
  it('needs settings.manage to read and a step-up to change (nothing changed, audited)', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    let mark = await auditMark();
    const r = await helpdesk.get('/api/admin/roles');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ code: 'forbidden', permission: 'settings.manage' });
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { route: 'GET /api/admin/roles' } });
    mark = await auditMark();
    expect((await helpdesk.put('/api/admin/roles/test-x', { name: 'X', permissions: [] })).status).toBe(403);
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'settings.manage' } });

    const noStepUp = await superC.put('/api/admin/roles/test-x', { name: 'X', permissions: [] });
    expect(noStepUp.status).toBe(403);
    expect(noStepUp.body).toEqual({ code: 'reauth_required', proof: 'authenticator' });
    expect((await roles()).find((x) => x.id === 'test-x')).toBeUndefined();
  });

  it('lists the built-in Super administrator first: read-only, every permission', async () => {
    const r = await superC.get('/api/admin/roles');
    expect(r.status).toBe(200);
    const [builtIn, ...custom] = r.body.roles;
    expect(builtIn).toMatchObject({ id: 'super-administrator', name: 'Super administrator', builtIn: true, readOnly: true });
    expect(builtIn.permissions).toHaveLength(22);
    expect(custom.find((x: any) => x.id === 'helpdesk')).toMatchObject({ builtIn: false, readOnly: false, delegations: ['helpdesk-branch', 'helpdesk-managed'] });
  });

  it('creates, replaces with optimistic versions, and deletes a role; each change audited with old and new values', async () => {
    await stepUp(superC, 'op-super');
    let mark = await auditMark();
    const created = await superC.put('/api/admin/roles/test-desk', { name: 'Test desk', permissions: ['computers.laps.read', 'computers.read'], version: 0 });
    expect(created.status).toBe(201);
    expect(created.body.role).toEqual({ id: 'test-desk', name: 'Test desk', permissions: ['computers.read', 'computers.laps.read'], builtIn: false, readOnly: false, version: 1 });
    expect((await auditSince(mark)).find((x) => x.event === 'roles.saved')).toMatchObject({
      outcome: 'success',
      target: { id: 'test-desk', name: 'Test desk', kind: 'role' },
      details: { old: null, new: { id: 'test-desk', name: 'Test desk', permissions: ['computers.read', 'computers.laps.read'] } },
    });

    mark = await auditMark();
    const replaced = await superC.put('/api/admin/roles/test-desk', { name: 'Test desk', permissions: ['computers.read'], version: 1 });
    expect(replaced.status).toBe(200);
    expect(replaced.body.role.version).toBe(2);
    expect((await auditSince(mark)).find((x) => x.event === 'roles.saved')?.details).toMatchObject({ old: { permissions: ['computers.read', 'computers.laps.read'] }, new: { permissions: ['computers.read'] } });

    // an editor that read version 1 loses: 409, nothing changed
    const stale = await expectRefused(() => superC.put('/api/admin/roles/test-desk', { name: 'Stale', permissions: [], version: 1 }), 409, 'version_conflict', 'roles.saved', roles);
    expect(stale.body.currentVersion).toBe(2);
    // version 0 means "create only"
    await expectRefused(() => superC.put('/api/admin/roles/test-desk', { name: 'Again', permissions: [], version: 0 }), 409, 'version_conflict', 'roles.saved', roles);

    mark = await auditMark();
    expect((await superC.delete('/api/admin/roles/test-desk')).status).toBe(204);
    expect((await auditSince(mark)).find((x) => x.event === 'roles.deleted')).toMatchObject({ outcome: 'success', details: { old: { name: 'Test desk', permissions: ['computers.read'] } } });
    expect((await roles()).find((x) => x.id === 'test-desk')).toBeUndefined();
    await expectRefused(() => superC.delete('/api/admin/roles/test-desk'), 404, 'not_found', 'roles.deleted', roles);
  });

  it('lets exactly one of two concurrent creations of the same role win', async () => {
    await stepUp(superC, 'op-super');
    const [a, b] = await Promise.all([
      superC.put('/api/admin/roles/test-race', { name: 'Race A', permissions: ['users.read'], version: 0 }),
      superC.put('/api/admin/roles/test-race', { name: 'Race B', permissions: ['groups.read'], version: 0 }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const winner = a.status === 201 ? a : b;
    expect((await roles()).find((x) => x.id === 'test-race')).toMatchObject({ name: winner.body.role.name, version: 1 });
    expect((await superC.delete('/api/admin/roles/test-race')).status).toBe(204);
  });

  it.each([
    [{ name: 'Laps only', permissions: ['computers.laps.read'] }, 400, 'computers_read_required'],
    [{ name: 'Expire only', permissions: ['computers.laps.expire', 'vip.manage'] }, 400, 'computers_read_required'],
    [{ name: 'Login rename', permissions: ['users.read', 'users.rename.login'] }, 400, 'users_rename_required'],
    [{ name: 'Group delete', permissions: ['groups.delete'] }, 400, 'groups_read_required'],
    [{ name: 'Unknown', permissions: ['users.read', 'computers.fly'] }, 400, 'unknown_permission'],
    [{ name: 'helpdesk', permissions: ['users.read'] }, 409, 'role_name_taken'],
    [{ name: '', permissions: [] }, 400, 'validation_failed'],
  ])('refuses %j with %i %s, audited, nothing changed', async (body, status, code) => {
    await stepUp(superC, 'op-super');
    const r = await expectRefused(() => superC.put('/api/admin/roles/test-bad', body), status, code, 'roles.saved', roles);
    if (code === 'unknown_permission') expect(r.body.permissions).toEqual(['computers.fly']);
    if (code === 'computers_read_required') expect(r.body.requires).toBe('computers.read');
  });

  it('refuses a malformed role id (400 invalid_id) on create', async () => {
    await stepUp(superC, 'op-super');
    await expectRefused(() => superC.put('/api/admin/roles/Bad_Id', { name: 'Bad', permissions: [] }), 400, 'invalid_id', 'roles.saved', roles);
  });

  it('keeps the built-in role read-only and undeletable (403 role_read_only, audited)', async () => {
    await stepUp(superC, 'op-super');
    await expectRefused(() => superC.put('/api/admin/roles/super-administrator', { name: 'Super administrator', permissions: ['users.read'] }), 403, 'role_read_only', 'roles.saved', roles);
    await expectRefused(() => superC.delete('/api/admin/roles/super-administrator'), 403, 'role_read_only', 'roles.deleted', roles);
  });

  it("renames a custom role called 'Super administrator' with a ' (custom)' suffix", async () => {
    await stepUp(superC, 'op-super');
    const r = await superC.put('/api/admin/roles/test-impostor', { name: 'super administrator', permissions: ['users.read'] });
    expect(r.status).toBe(201);
    expect(r.body.role.name).toBe('super administrator (custom)');
    const listed = await roles();
    expect(listed.filter((x) => x.name === 'Super administrator')).toHaveLength(1);
    expect(listed.find((x) => x.id === 'test-impostor')?.name).toBe('super administrator (custom)');
    expect((await superC.delete('/api/admin/roles/test-impostor')).status).toBe(204);
  });

  it('refuses to delete a role a delegation uses (409 role_in_use, naming them), audited', async () => {
    await stepUp(superC, 'op-super');
    const r = await expectRefused(() => superC.delete('/api/admin/roles/helpdesk'), 409, 'role_in_use', 'roles.deleted', roles);
    expect(r.body.delegations).toEqual(['helpdesk-branch', 'helpdesk-managed']);
  });
});

describe('delegations', () => {
  const state = async () => ({ roles: await roles(), delegations: await delegations() });

  beforeAll(async () => {
    await stepUp(superC, 'op-super');
    expect((await superC.put('/api/admin/roles/test-deleg-role', { name: 'Test delegation role', permissions: ['users.read'] })).status).toBe(201);
  });
  afterAll(async () => {
    await stepUp(superC, 'op-super');
    await superC.delete('/api/admin/roles/test-deleg-role');
  });

  it('lists the seeded delegations with their role names, resolved scope and assignees', async () => {
    const d = (await delegations()).find((x) => x.id === 'helpdesk-managed')!;
    expect(d).toMatchObject({ roleId: 'helpdesk', roleName: 'Helpdesk', scope: [{ dn: ou('Managed') }] });
    expect(d.assignees.map((a: any) => a.name).sort()).toEqual(['GG-Helpdesk', 'op-enrol']);
  });

  it('saves a delegation: OUs by DN or GUID, assignees by sAMAccountName, DN or GUID, resolved to GUID and SID; audited', async () => {
    await stepUp(superC, 'op-super');
    const usersOu = (await superC.get('/api/admin/delegations')).body.delegations.find((x: any) => x.id === 'helpdesk-branch').scope[0];
    const mark = await auditMark();
    const r = await superC.put('/api/admin/delegations/test-deleg', {
      roleId: 'test-deleg-role',
      scope: [`OU=Users,${ou('Managed')}`, usersOu.guid, usersOu.dn.toLowerCase()],
      assignees: ['op-auditor', group('GG-Sales').dn, group('GG-Helpdesk').guid, `${stack.directory.netbios}\\op-auditor`],
      version: 0,
    });
    expect(r.status).toBe(201);
    const d = r.body.delegation;
    expect(d).toMatchObject({ id: 'test-deleg', roleId: 'test-deleg-role', roleName: 'Test delegation role', version: 1 });
    expect(d.scope.map((s: any) => s.dn)).toEqual([`OU=Users,${ou('Managed')}`, ou('Branch')]);
    expect(d.scope.every((s: any) => /^[0-9a-f-]{36}$/.test(s.guid))).toBe(true);
    expect(d.assignees).toEqual([
      { kind: 'user', guid: seedUser('op-auditor').guid, sid: expect.stringMatching(/^S-1-5-21-/), name: 'op-auditor' },
      { kind: 'group', guid: group('GG-Sales').guid, sid: expect.stringMatching(/^S-1-5-21-/), name: 'GG-Sales' },
      { kind: 'group', guid: group('GG-Helpdesk').guid, sid: expect.stringMatching(/^S-1-5-21-/), name: 'GG-Helpdesk' },
    ]);
    expect((await auditSince(mark)).find((x) => x.event === 'delegations.saved')).toMatchObject({ outcome: 'success', target: { id: 'test-deleg' }, details: { old: null, new: { roleId: 'test-deleg-role' } } });
    // the role is in use now
    await expectRefused(() => superC.delete('/api/admin/roles/test-deleg-role'), 409, 'role_in_use', 'roles.deleted', state);

    const stale = await expectRefused(() => superC.put('/api/admin/delegations/test-deleg', { roleId: 'test-deleg-role', scope: [ou('Branch')], assignees: ['op-auditor'], version: 0 }), 409, 'version_conflict', 'delegations.saved', state);
    expect(stale.body.currentVersion).toBe(1);
  });

  const computer = () => stack.directory.computers[0];
  it.each([
    ['an OU outside the managed OUs', { scope: [ou('Staff')] }, 'ou_not_managed'],
    ['the domain root (not an OU)', { scope: [BASE] }, 'not_an_ou'],
    ['a container that is not an OU', { scope: [`CN=Users,${BASE}`] }, 'not_an_ou'],
    ['an unknown OU GUID', { scope: ['00000000-0000-4000-8000-000000000000'] }, 'ou_not_found'],
    ['an unknown OU DN', { scope: [ou('Nowhere')] }, 'ou_not_found'],
    ['a Tier 0 OU', { scope: [stack.directory.tier0Ous[0]] }, 'ou_in_tier'],
    ['an unknown assignee', { assignees: ['nobody-here'] }, 'assignee_not_found'],
    ['a computer as assignee', { assignees: [`${computer().name}$`] }, 'assignee_not_found'],
    ['a computer DN as assignee', { assignees: [computer().dn] }, 'assignee_not_found'],
    ['an unknown role', { roleId: 'test-no-such-role' }, 'role_not_found'],
    ['the built-in role', { roleId: 'super-administrator' }, 'role_not_delegable'],
  ])('refuses %s (400 %s), audited, nothing changed', async (_what, change, code) => {
    await stepUp(superC, 'op-super');
    const body = { roleId: 'test-deleg-role', scope: [ou('Branch')], assignees: ['op-auditor'], ...change };
    const r = await expectRefused(() => superC.put('/api/admin/delegations/test-deleg', body), 400, code, 'delegations.saved', state);
    expect(JSON.stringify(r.body)).not.toMatch(/password/i);
  });

  it('refuses a malformed body (400 validation_failed) and a malformed id (400 invalid_id)', async () => {
    await stepUp(superC, 'op-super');
    await expectRefused(() => superC.put('/api/admin/delegations/test-deleg', { roleId: 'test-deleg-role', scope: [], assignees: ['op-auditor'] }), 400, 'validation_failed', undefined, state);
    await expectRefused(() => superC.put('/api/admin/delegations/Test_Deleg', { roleId: 'test-deleg-role', scope: [ou('Branch')], assignees: ['op-auditor'] }), 400, 'invalid_id', 'delegations.saved', state);
  });

  it('deletes a delegation (audited with its old value); an unknown one is 404', async () => {
    await stepUp(superC, 'op-super');
    const mark = await auditMark();
    expect((await superC.delete('/api/admin/delegations/test-deleg')).status).toBe(204);
    expect((await auditSince(mark)).find((x) => x.event === 'delegations.deleted')).toMatchObject({ outcome: 'success', details: { old: { id: 'test-deleg', roleId: 'test-deleg-role' } } });
    expect((await delegations()).find((x) => x.id === 'test-deleg')).toBeUndefined();
    await expectRefused(() => superC.delete('/api/admin/delegations/test-deleg'), 404, 'not_found', 'delegations.deleted', state);
  });
});

describe('a delegation changes what an operator may do', () => {
  it('gives op-auditor settings.manage on OU=Branch, then takes it back', async () => {
    const auditor = await signedIn('op-auditor');
    expect((await auditor.get('/api/admin/roles')).status).toBe(403);
    await stepUp(superC, 'op-super');
    expect((await superC.put('/api/admin/roles/test-settings', { name: 'Test settings', permissions: ['settings.manage'] })).status).toBe(201);
    expect((await superC.put('/api/admin/delegations/test-settings-branch', { roleId: 'test-settings', scope: [ou('Branch')], assignees: ['op-auditor'] })).status).toBe(201);
    try {
      expect((await auditor.get('/api/admin/roles')).status).toBe(200);
      expect((await auditor.get('/api/auth/me')).body.permissions).toContain('settings.manage');

      // settings.manage is not enough to grant or revoke the Super administrator role
      await stepUp(auditor, 'op-auditor');
      const supers = async () => (await superC.get('/api/admin/super-administrators')).body;
      await expectRefused(() => auditor.post('/api/admin/super-administrators', { operator: 'op-auditor' }), 403, 'super_administrator_required', 'super_administrator:granted', supers);
      await expectRefused(() => auditor.delete(`/api/admin/super-administrators/${seedUser('op-super').guid}`), 403, 'super_administrator_required', 'super_administrator:revoked', supers);
    } finally {
      await stepUp(superC, 'op-super');
      expect((await superC.delete('/api/admin/delegations/test-settings-branch')).status).toBe(204);
      expect((await superC.delete('/api/admin/roles/test-settings')).status).toBe(204);
    }
    expect((await auditor.get('/api/admin/roles')).status).toBe(403);
    expect((await auditor.get('/api/auth/me')).body.permissions).not.toContain('settings.manage');
  });
});

describe('Super administrators', () => {
  const supers = async () => (await superC.get('/api/admin/super-administrators')).body.superAdministrators as Array<{ guid: string; name: string }>;

  it('lists the holders with their names', async () => {
    expect(await supers()).toEqual([{ guid: seedUser('op-super').guid, name: 'op-super', dn: seedUser('op-super').dn, enabled: true }]);
  });

  it('grants and revokes (audited), refuses the last holder, unknown, disabled and duplicate operators', async () => {
    await stepUp(superC, 'op-super');
    const approver = seedUser('op-approver');
    let mark = await auditMark();
    const granted = await superC.post('/api/admin/super-administrators', { operator: 'op-approver' });
    expect(granted.status).toBe(201);
    expect(granted.body.superAdministrator).toEqual({ guid: approver.guid, name: 'op-approver', dn: approver.dn });
    expect((await auditSince(mark)).find((x) => x.event === 'super_administrator:granted')).toMatchObject({ outcome: 'success', target: { id: approver.guid, name: 'op-approver' } });
    try {
      expect((await supers()).map((s) => s.name)).toEqual(['op-super', 'op-approver']);
      const approverC = await signedIn('op-approver');
      expect((await approverC.get('/api/auth/me')).body.superAdministrator).toBe(true);

      await expectRefused(() => superC.post('/api/admin/super-administrators', { operator: approver.guid }), 409, 'already_super_administrator', 'super_administrator:granted', supers);
      await expectRefused(() => superC.post('/api/admin/super-administrators', { operator: 'nobody-here' }), 400, 'operator_not_found', 'super_administrator:granted', supers);
      await expectRefused(() => superC.post('/api/admin/super-administrators', { operator: 'GG-Sales' }), 400, 'operator_not_found', 'super_administrator:granted', supers);
      await expectRefused(() => superC.post('/api/admin/super-administrators', { operator: 'carol' }), 400, 'operator_disabled', 'super_administrator:granted', supers);
      await expectRefused(() => superC.delete('/api/admin/super-administrators/00000000-0000-4000-8000-000000000000'), 404, 'not_found', 'super_administrator:revoked', supers);
    } finally {
      mark = await auditMark();
      expect((await superC.delete(`/api/admin/super-administrators/${approver.guid}`)).status).toBe(204);
    }
    expect((await auditSince(mark)).find((x) => x.event === 'super_administrator:revoked')).toMatchObject({ outcome: 'success', target: { id: approver.guid, name: 'op-approver' } });
    expect((await supers()).map((s) => s.name)).toEqual(['op-super']);
    expect((await (await signedIn('op-approver')).get('/api/auth/me')).body.superAdministrator).toBe(false);

    await expectRefused(() => superC.delete(`/api/admin/super-administrators/${seedUser('op-super').guid}`), 409, 'last_super_administrator', 'super_administrator:revoked', supers);
  });
});

describe('admin CLI import-roles', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-import-'));
  const file = (name: string, content: unknown) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content));
    return f;
  };
  const custom = async () => (await roles()).filter((r: any) => !r.builtIn).map((r) => ({ id: r.id, name: r.name, permissions: r.permissions }));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const outJson = (out: string) => JSON.parse(out.slice(out.indexOf('{')));

  it('imports the valid roles and reports each refused one (exit 1), audited per role and as a whole', async () => {
    const before = await custom();
    const helpdesk = before.find((r) => r.id === 'helpdesk')!;
    const auditor = before.find((r) => r.id === 'auditor')!;
    const mark = await auditMark();
    const r = await runAdminCommand(['import-roles', file('mixed.json', { roles: [
      { id: 'test-imp-a', name: 'Imported A', permissions: ['users.read', 'users.unlock'] },
      { id: 'test-imp-b', name: 'Super administrator', permissions: ['computers.read', 'computers.laps.read'] },
      { id: 'test-imp-c', name: 'C', permissions: ['computers.laps.expire'] },
      { id: 'super-administrator', name: 'S', permissions: [] },
      { id: 'test-imp-e', name: 'E', permissions: ['users.teleport'] },
      { id: 'test-imp-f', name: 'HELPDESK', permissions: [] },
      { id: 'test-imp-a', name: 'Imported A again', permissions: [] },
      { id: 'helpdesk', name: 'Helpdesk', permissions: ['users.read'] },
      auditor,
      { id: 'Bad_Id', name: 'Bad', permissions: [] },
      'not a role',
      { id: 'test-imp-l', name: 'imported a', permissions: [] },
    ] })], env);
    expect(r.code).toBe(1);
    const out = outJson(r.out);
    expect(out).toMatchObject({ created: ['test-imp-a', 'test-imp-b'], updated: [], unchanged: ['auditor'] });
    expect(out.refused.map((x: any) => [x.index, x.id, x.code])).toEqual([
      [2, 'test-imp-c', 'computers_read_required'],
      [3, 'super-administrator', 'role_read_only'],
      [4, 'test-imp-e', 'unknown_permission'],
      [5, 'test-imp-f', 'role_name_taken'],
      [6, 'test-imp-a', 'duplicate_role'],
      [7, 'helpdesk', 'role_exists'],
      [9, null, 'invalid_id'],
      [10, null, 'validation_failed'],
      [11, 'test-imp-l', 'role_name_taken'],
    ]);
    const after = await custom();
    expect(after.find((x) => x.id === 'test-imp-a')).toEqual({ id: 'test-imp-a', name: 'Imported A', permissions: ['users.read', 'users.unlock'] });
    expect(after.find((x) => x.id === 'test-imp-b')?.name).toBe('Super administrator (custom)');
    expect(after.find((x) => x.id === 'helpdesk')).toEqual(helpdesk);
    expect(after.filter((x) => !x.id.startsWith('test-imp'))).toEqual(before.filter((x) => !x.id.startsWith('test-imp')));
    for (const id of ['test-imp-c', 'test-imp-e', 'test-imp-f', 'test-imp-l']) expect(after.find((x) => x.id === id)).toBeUndefined();

    const rows = await auditSince(mark);
    expect(rows.filter((x) => x.event === 'roles.saved' && x.outcome === 'success').map((x) => x.target?.id).sort()).toEqual(['test-imp-a', 'test-imp-b']);
    const denied = rows.filter((x) => x.event === 'roles.saved' && x.outcome === 'denied');
    expect(denied.map((x) => x.reason)).toEqual(out.refused.map((x: any) => x.code));
    expect(denied.find((x) => x.reason === 'role_exists')).toMatchObject({ target: { id: 'helpdesk', kind: 'role' }, details: { source: 'import', index: 7 } });
    expect(JSON.stringify(denied)).not.toContain('Bad_Id');
    expect(rows.find((x) => x.event === 'roles.imported')).toMatchObject({ outcome: 'partial', actor: { name: 'admin-cli' }, details: { replace: false, created: ['test-imp-a', 'test-imp-b'], refused: 9 } });
  });

  it('never overwrites without --replace; --replace overwrites only the roles the file names and deletes none', async () => {
    const before = await custom();
    const changedA = { id: 'test-imp-a', name: 'Imported A', permissions: ['users.read'] };
    const refused = await runAdminCommand(['import-roles', file('over.json', { roles: [changedA] })], env);
    expect(refused.code).toBe(1);
    expect(outJson(refused.out)).toMatchObject({ created: [], updated: [], refused: [{ index: 0, id: 'test-imp-a', code: 'role_exists' }] });
    expect(await custom()).toEqual(before);

    const mark = await auditMark();
    const r = await runAdminCommand(['import-roles', file('over.json', { roles: [changedA] }), '--replace'], env);
    expect(r.code).toBe(0);
    expect(outJson(r.out)).toEqual({ created: [], updated: ['test-imp-a'], unchanged: [], refused: [] });
    const after = await custom();
    expect(after.find((x) => x.id === 'test-imp-a')).toEqual(changedA);
    // every other role is still there, test-imp-b and the seeded ones included
    expect(after.filter((x) => x.id !== 'test-imp-a')).toEqual(before.filter((x) => x.id !== 'test-imp-a'));
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'roles.saved')).toMatchObject({ outcome: 'success', details: { source: 'import', old: { permissions: ['users.read', 'users.unlock'] }, new: changedA } });
    expect(rows.filter((x) => x.event === 'roles.deleted')).toEqual([]);
    expect(rows.find((x) => x.event === 'roles.imported')).toMatchObject({ outcome: 'success', details: { replace: true, updated: ['test-imp-a'] } });

    await stepUp(superC, 'op-super');
    for (const id of ['test-imp-a', 'test-imp-b']) expect((await superC.delete(`/api/admin/roles/${id}`)).status).toBe(204);
  });

  it('refuses a file that is not a roles file: nothing imported (exit 1), audited', async () => {
    const before = await custom();
    const mark = await auditMark();
    const r = await runAdminCommand(['import-roles', file('bad.json', { role: [] })], env);
    expect(r.code).toBe(1);
    expect(r.out).toContain('"code":"invalid_import_file"');
    expect(await custom()).toEqual(before);
    expect((await auditSince(mark)).find((x) => x.event === 'roles.imported')).toMatchObject({ outcome: 'denied', reason: 'invalid_import_file' });
  });

  it('answers usage errors with exit code 2', async () => {
    expect((await runAdminCommand(['import-roles'], env)).code).toBe(2);
    expect((await runAdminCommand(['import-roles', path.join(dir, 'missing.json')], env)).code).toBe(2);
    expect((await runAdminCommand(['import-roles', file('x.json', '{'), '--merge'], env)).code).toBe(2);
  });
});
