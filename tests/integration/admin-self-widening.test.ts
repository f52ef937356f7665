import type { ConsoleClient } from '../../local/console-client';
import { auditMark, auditSince, stack, steppedUp } from '../support/stack';

// Issue 8 (beyond the spec): a role or delegation change that widens the rights of the operator
// making it (directly or through a group they are in) needs a second administrator's approval,
// through the four-eyes requests. op-approver and op-approver2 (both in GG-Approvers) are given
// settings.manage on OU=Branch for this file; op-super is the second administrator.

const BASE = stack.directory.baseDn;
const ou = (name: string) => `OU=${name},${BASE}`;

let superC: ConsoleClient;
const roles = async () => (await superC.get('/api/admin/roles')).body.roles as Array<{ id: string; name: string; permissions: string[]; version?: number }>;
const delegations = async () => (await superC.get('/api/admin/delegations')).body.delegations as Array<{ id: string; roleId: string; scope: any[]; assignees: any[]; version: number }>;
const permissionsOf = async (c: ConsoleClient) => (await c.get('/api/auth/me')).body.permissions as string[];

beforeAll(async () => {
  superC = await steppedUp('op-super');
  expect((await superC.put('/api/admin/roles/test-wide-admin', { name: 'Test wide admin', permissions: ['settings.manage'] })).status).toBe(201);
  expect((await superC.put('/api/admin/delegations/test-wide-admins', { roleId: 'test-wide-admin', scope: [ou('Branch')], assignees: ['op-approver', 'op-approver2'] })).status).toBe(201);
});
afterAll(async () => {
  superC = await steppedUp('op-super');
  for (const d of await delegations()) if (d.id.startsWith('test-wide')) await superC.delete(`/api/admin/delegations/${d.id}`);
  for (const r of await roles()) if (r.id.startsWith('test-wide')) await superC.delete(`/api/admin/roles/${r.id}`);
});

describe('a change that widens the caller’s own rights', () => {
  it('through a group they are in: PUT delegation refused 403 approval_required, audited, nothing saved', async () => {
    const admin = await steppedUp('op-approver');
    expect(await permissionsOf(admin)).not.toContain('audit.read');
    const mark = await auditMark();
    const r = await admin.put('/api/admin/delegations/test-wide-self', { roleId: 'auditor', scope: [ou('Managed')], assignees: ['GG-Approvers'] });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'approval_required' });
    expect(r.body.widens).toEqual(expect.arrayContaining([expect.objectContaining({ delegation: 'test-wide-self', permissions: expect.arrayContaining(['audit.read']) })]));
    const row = (await auditSince(mark)).find((x) => x.event === 'delegations.saved')!;
    expect(row).toMatchObject({ outcome: 'denied', reason: 'approval_required', actor: { name: 'op-approver' }, target: { id: 'test-wide-self' } });
    expect((await delegations()).find((d) => d.id === 'test-wide-self')).toBeUndefined();
    expect(await permissionsOf(admin)).not.toContain('audit.read');
  });

  it('directly: adding a permission to a role the caller holds is refused; a narrowing or unrelated change stays direct', async () => {
    const admin = await steppedUp('op-approver');
    const before = await roles();
    const mark = await auditMark();
    const r = await admin.put('/api/admin/roles/test-wide-admin', { name: 'Test wide admin', permissions: ['settings.manage', 'audit.read'] });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'approval_required' });
    expect((await auditSince(mark)).find((x) => x.event === 'roles.saved')).toMatchObject({ outcome: 'denied', reason: 'approval_required', target: { id: 'test-wide-admin' } });
    expect(await roles()).toEqual(before);

    // a delegation to someone else (alice) and a role nobody holds: direct, as before
    const other = await admin.put('/api/admin/delegations/test-wide-other', { roleId: 'auditor', scope: [ou('Managed')], assignees: ['alice'] });
    expect(other.status).toBe(201);
    expect((await admin.put('/api/admin/roles/test-wide-unused', { name: 'Test wide unused', permissions: ['users.read', 'users.unlock'] })).status).toBe(201);
    expect((await admin.delete('/api/admin/delegations/test-wide-other')).status).toBe(204);
    expect((await admin.delete('/api/admin/roles/test-wide-unused')).status).toBe(204);
    // renaming the role they hold changes no right
    expect((await admin.put('/api/admin/roles/test-wide-admin', { name: 'Test wide admin (renamed)', permissions: ['settings.manage'] })).status).toBe(200);
  });

  it('a request for a change that does not widen is refused approval_not_required', async () => {
    const admin = await steppedUp('op-approver');
    const mark = await auditMark();
    const r = await admin.post('/api/approvals', { kind: 'action', action: 'delegations.save', target: 'test-wide-other', parameters: { roleId: 'auditor', scope: [ou('Managed')], assignees: ['alice'] }, reason: 'nothing to widen' });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: 'approval_not_required' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.created')).toMatchObject({ outcome: 'denied', reason: 'approval_not_required' });
    expect((await delegations()).find((d) => d.id === 'test-wide-other')).toBeUndefined();
  });

  it('a request without settings.manage is refused, audited', async () => {
    const helpdesk = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    const r = await helpdesk.post('/api/approvals', { kind: 'action', action: 'delegations.save', target: 'test-wide-x', parameters: { roleId: 'approver', scope: [ou('Managed')], assignees: ['op-helpdesk'] }, reason: 'let me' });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.created')).toMatchObject({ outcome: 'denied', reason: 'missing_permission:settings.manage' });
  });

  it('the request: filed by the caller, refused to the caller and to an admin it would widen too, approved by a second admin, then applied', async () => {
    const admin = await steppedUp('op-approver');
    let mark = await auditMark();
    const c = await admin.post('/api/approvals', {
      kind: 'action',
      action: 'delegations.save',
      target: 'test-wide-self',
      parameters: { roleId: 'auditor', scope: [ou('Managed')], assignees: ['GG-Approvers'] },
      reason: 'audit duty for the approvers',
      ticket: 'CHG-8',
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      state: 'pending',
      action: 'delegations.save',
      target: { id: 'test-wide-self', kind: 'delegation' },
      source: { kind: 'admin' },
      approvers: { roles: [], operators: [], permission: 'settings.manage' },
      approvalsNeeded: 1,
      parameters: { action: 'delegations.save', roleId: 'auditor', version: 0 },
    });
    // scope and assignees are captured resolved (by GUID): the execution acts on the same objects
    expect(c.body.parameters.assignees).toEqual([stack.directory.groups.find((g) => g.name === 'GG-Approvers')!.guid]);
    const id = c.body.id;
    expect((await auditSince(mark)).find((x) => x.event === 'request.created')).toMatchObject({ outcome: 'success', reason: 'approval_required:self_widening', ticket: 'CHG-8', correlationId: c.body.correlationId });
    expect((await delegations()).find((d) => d.id === 'test-wide-self')).toBeUndefined();

    // the requester cannot approve it
    mark = await auditMark();
    const self = await admin.post(`/api/approvals/${id}/approve`);
    expect({ status: self.status, code: self.body.code }).toEqual({ status: 403, code: 'self_approval' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'denied', reason: 'self_approval' });

    // an operator without settings.manage does not see it
    const helpdesk = await steppedUp('op-helpdesk');
    expect((await helpdesk.get(`/api/approvals/${id}`)).status).toBe(404);
    expect((await helpdesk.post(`/api/approvals/${id}/approve`)).status).toBe(404);

    // a second administrator whom the change would widen too (op-approver2 is in GG-Approvers)
    const admin2 = await steppedUp('op-approver2');
    expect((await admin2.get('/api/approvals?view=to_approve')).body.items.map((x: any) => x.id)).toContain(id);
    mark = await auditMark();
    const widened = await admin2.post(`/api/approvals/${id}/approve`);
    expect({ status: widened.status, code: widened.body.code }).toEqual({ status: 403, code: 'approver_not_allowed:widens_own_rights' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'denied', reason: 'approver_not_allowed:widens_own_rights', actor: { name: 'op-approver2' } });
    expect((await delegations()).find((d) => d.id === 'test-wide-self')).toBeUndefined();

    // the second administrator approves: the change is applied under their rights, on fresh state
    superC = await steppedUp('op-super');
    mark = await auditMark();
    const ok = await superC.post(`/api/approvals/${id}/approve`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ request: { state: 'executed', outcome: 'succeeded' }, result: { outcome: 'succeeded' } });
    const d = (await delegations()).find((x) => x.id === 'test-wide-self');
    expect(d).toMatchObject({ roleId: 'auditor', scope: [{ dn: ou('Managed') }], assignees: [{ kind: 'group', name: 'GG-Approvers' }] });
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'success', reason: 'approval:1/1', actor: { name: 'op-super' } });
    expect(rows.find((x) => x.event === 'delegations.saved')).toMatchObject({ outcome: 'success', actor: { name: 'op-super' }, target: { id: 'test-wide-self' }, details: { request: id, old: null } });
    expect(rows.find((x) => x.event === 'request.executed')).toMatchObject({ outcome: 'succeeded' });
    for (const row of rows.filter((x) => ['request.approved', 'delegations.saved', 'request.executed'].includes(x.event))) expect(row.correlationId).toBe(c.body.correlationId);
    expect(await permissionsOf(admin)).toContain('audit.read');
    expect((await admin.get(`/api/approvals/${id}`)).body).toMatchObject({ state: 'executed', outcome: 'succeeded' });
  });

  it('a role change through a request: a stale captured version fails the execution (fresh state), nothing written', async () => {
    const admin = await steppedUp('op-approver');
    const c = await admin.post('/api/approvals', { kind: 'action', action: 'roles.save', target: 'test-wide-admin', parameters: { name: 'Test wide admin', permissions: ['settings.manage', 'users.read'] }, reason: 'read users too' });
    expect(c.status).toBe(201);
    const version = c.body.parameters.version;
    expect(version).toBeGreaterThan(0);
    // the role changes after the request was filed
    superC = await steppedUp('op-super');
    expect((await superC.put('/api/admin/roles/test-wide-admin', { name: 'Test wide admin', permissions: ['settings.manage'] })).status).toBe(200);
    const mark = await auditMark();
    const r = await superC.post(`/api/approvals/${c.body.id}/approve`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ request: { state: 'executed', outcome: 'failed', result: { code: 'version_conflict' } } });
    expect((await auditSince(mark)).find((x) => x.event === 'roles.saved')).toMatchObject({ outcome: 'denied', reason: 'version_conflict', details: { request: c.body.id } });
    expect((await roles()).find((x) => x.id === 'test-wide-admin')?.permissions).toEqual(['settings.manage']);

    // filed again on the current version, approved: applied
    const again = await admin.post('/api/approvals', { kind: 'action', action: 'roles.save', target: 'test-wide-admin', parameters: { name: 'Test wide admin', permissions: ['settings.manage', 'users.read'] }, reason: 'read users too' });
    expect(again.status).toBe(201);
    const ok = await superC.post(`/api/approvals/${again.body.id}/approve`);
    expect(ok.body).toMatchObject({ request: { state: 'executed', outcome: 'succeeded' } });
    expect((await roles()).find((x) => x.id === 'test-wide-admin')?.permissions).toEqual(['users.read', 'settings.manage']);
    expect(await permissionsOf(admin)).toContain('users.read');
  });

  it('a Super administrator’s changes never widen their rights: direct', async () => {
    superC = await steppedUp('op-super');
    expect((await superC.put('/api/admin/delegations/test-wide-super', { roleId: 'auditor', scope: [ou('Managed')], assignees: ['op-super'] })).status).toBe(201);
    expect((await superC.delete('/api/admin/delegations/test-wide-super')).status).toBe(204);
  });
});
