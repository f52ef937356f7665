import type { HttpResponse } from '../../local/console-client';
import { auditMark, auditSince, seedUser, signedIn, stack, steppedUp } from '../support/stack';

// The baseline (roles, delegations, approval settings between instances; never approvers) and
// the CSV exports (users, watch lists), through the real routes against the Samba directory.
// Every refusal: status, code, audit row, nothing changed. Everything changed here is put back.

const BASE = stack.directory.baseDn;

/** A refusal: its status and code, a `denied` audit row of `event` with that reason, and the state unchanged. */
async function expectRefused(call: () => Promise<HttpResponse>, status: number, code: string, event: string | undefined, state: () => Promise<unknown>) {
  const before = await state();
  const mark = await auditMark();
  const r = await call();
  expect({ status: r.status, code: r.body?.code }).toEqual({ status, code });
  if (event) expect((await auditSince(mark)).find((x) => x.event === event)).toMatchObject({ outcome: 'denied', reason: event === 'authz.decision' ? 'missing_permission' : code });
  expect(await state()).toEqual(before);
  return r;
}

describe('baseline export and import', () => {
  let approvalsBefore: any;
  const admin = () => steppedUp('op-super');
  const everything = async () => {
    const c = await admin();
    const [roles, delegations, approvals] = await Promise.all([c.get('/api/admin/roles'), c.get('/api/admin/delegations'), c.get('/api/admin/approvals/settings')]);
    return { roles: roles.body.roles, delegations: delegations.body.delegations, approvals: approvals.body.settings };
  };

  beforeAll(async () => {
    const c = await admin();
    approvalsBefore = (await c.get('/api/admin/approvals/settings')).body;
    // approvers chosen on this instance for one delegation: the export must not carry them
    const r = await c.put('/api/admin/approvals/settings', {
      ...approvalsBefore.settings,
      delegations: { ...approvalsBefore.settings.delegations, 'helpdesk-branch': { requiresApproval: ['users.unlock'], approvers: { roles: ['approver'], operators: ['op-approver2'] }, approvalsNeeded: 2 } },
    });
    expect(r.status).toBe(200);
  });
  afterAll(async () => {
    const c = await admin();
    await c.delete('/api/admin/delegations/test-bl-deleg');
    await c.delete('/api/admin/roles/test-bl-role');
    const now = (await c.get('/api/admin/approvals/settings')).body;
    await c.put('/api/admin/approvals/settings', { ...approvalsBefore.settings, version: now.version });
  });

  it('exports roles, delegations (OU paths below the domain root, assignees by name) and approval actions and counts, never approvers; audited', async () => {
    const c = await admin();
    const mark = await auditMark();
    const r = await c.get('/api/admin/baseline');
    expect(r.status).toBe(200);
    const b = r.body;
    expect(b).toMatchObject({ format: 'hdc-baseline', formatVersion: 1, source: { domain: stack.directory.domain } });
    expect(b.roles.map((x: any) => x.id)).toEqual(expect.arrayContaining(['helpdesk', 'auditor', 'approver']));
    expect(b.delegations.find((d: any) => d.id === 'helpdesk-managed')).toEqual({
      id: 'helpdesk-managed',
      roleId: 'helpdesk',
      scope: ['OU=Managed'],
      assignees: expect.arrayContaining([{ kind: 'group', name: 'GG-Helpdesk' }, { kind: 'user', name: 'op-enrol' }]),
    });
    expect(b.delegations.find((d: any) => d.id === 'helpdesk-branch').scope).toEqual(['OU=Branch']);
    expect(b.approvals.delegations['helpdesk-branch']).toEqual({ requiresApproval: ['users.unlock'], approvalsNeeded: 2 });
    expect(r.text).not.toContain('"approvers"');
    expect(r.text).not.toContain(seedUser('op-approver2').guid);
    expect(r.text).not.toContain(BASE);
    expect((await auditSince(mark)).find((x) => x.event === 'settings.baseline.export')).toMatchObject({ outcome: 'success', actor: { name: 'op-super' } });
  });

  it('imports its own export unchanged (approvers chosen here stay), then a new role and delegation whose approvals go to the instance approvers', async () => {
    const c = await admin();
    const b = (await c.get('/api/admin/baseline')).body;
    const same = await c.post('/api/admin/baseline/import', { baseline: b });
    expect(same.status).toBe(200);
    expect(same.body.roles).toMatchObject({ created: [], updated: [] });
    expect(same.body.delegations).toMatchObject({ created: [], updated: [] });
    expect(same.body.approversToChoose).not.toContain('helpdesk-branch');
    expect((await c.get('/api/admin/approvals/settings')).body.settings.delegations['helpdesk-branch'].approvers.roles).toEqual(['approver']);

    const next = {
      ...b,
      roles: [...b.roles, { id: 'test-bl-role', name: 'Test baseline role', permissions: ['users.read', 'users.unlock'] }],
      delegations: [...b.delegations, { id: 'test-bl-deleg', roleId: 'test-bl-role', scope: ['OU=Users,OU=Branch'], assignees: [{ kind: 'user', name: 'op-auditor' }] }],
      // approvers sent anyway are dropped: a baseline never carries them
      approvals: { ...b.approvals, delegations: { ...b.approvals.delegations, 'test-bl-deleg': { requiresApproval: ['users.unlock'], approvalsNeeded: 2, approvers: { roles: ['approver'], operators: [] } } } },
    };
    // a dry run reports and writes nothing
    const before = await everything();
    const dry = await c.post('/api/admin/baseline/import', { baseline: next, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, roles: { created: ['test-bl-role'] }, delegations: { created: ['test-bl-deleg'] }, approversToChoose: ['test-bl-deleg'] });
    expect(await everything()).toEqual(before);

    const mark = await auditMark();
    const r = await c.post('/api/admin/baseline/import', { baseline: next });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ dryRun: false, roles: { created: ['test-bl-role'] }, delegations: { created: ['test-bl-deleg'] }, approversToChoose: ['test-bl-deleg'] });
    const d = (await c.get('/api/admin/delegations')).body.delegations.find((x: any) => x.id === 'test-bl-deleg');
    expect(d.scope.map((o: any) => o.dn)).toEqual([`OU=Users,OU=Branch,${BASE}`]);
    expect(d.assignees).toMatchObject([{ kind: 'user', guid: seedUser('op-auditor').guid }]);
    expect((await c.get('/api/admin/approvals/settings')).body.settings.delegations['test-bl-deleg']).toEqual({ requiresApproval: ['users.unlock'], approvalsNeeded: 2, approvers: { roles: [], operators: [] } });
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'settings.baseline.import')).toMatchObject({ outcome: 'success', details: { replace: false, approversToChoose: ['test-bl-deleg'] } });
    expect(rows.find((x) => x.event === 'roles.saved')).toMatchObject({ outcome: 'success', target: { id: 'test-bl-role' }, details: { source: 'baseline' } });
    expect(rows.find((x) => x.event === 'delegations.saved')).toMatchObject({ outcome: 'success', target: { id: 'test-bl-deleg' }, details: { source: 'baseline' } });
    expect(rows.find((x) => x.event === 'settings.approvals')).toMatchObject({ outcome: 'success', reason: 'baseline' });

    // op-auditor now holds users.unlock on OU=Branch only with approval: the engine says so
    const auditor = await signedIn('op-auditor');
    const bea = await auditor.get(`/api/users/${seedUser('branch-bea').guid}`);
    expect(bea.body.actions['users.unlock']).toBe('approval');
  });

  it('refuses a baseline with any problem, all or nothing (400 baseline_invalid listing each; audited; nothing changed)', async () => {
    const c = await admin();
    const b = (await c.get('/api/admin/baseline')).body;
    const bad = {
      ...b,
      roles: [...b.roles, { id: 'test-bl-laps', name: 'Test LAPS', permissions: ['computers.laps.read'] }, { id: 'test-bl-ok', name: 'Test fine', permissions: ['users.read'] }],
      delegations: [
        ...b.delegations,
        { id: 'test-bl-out', roleId: 'test-bl-ok', scope: ['OU=Unmanaged'], assignees: [{ kind: 'user', name: 'alice' }] },
        { id: 'test-bl-nobody', roleId: 'test-bl-ok', scope: ['OU=Branch'], assignees: [{ kind: 'group', name: 'GG-No-Such-Group' }] },
        { id: 'test-bl-norole', roleId: 'no-such-role', scope: ['OU=Branch'], assignees: [{ kind: 'user', name: 'alice' }] },
      ],
    };
    const r = await expectRefused(() => c.post('/api/admin/baseline/import', { baseline: bad }), 400, 'baseline_invalid', 'settings.baseline.import', everything);
    expect(r.body.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ where: `roles[${b.roles.length}]`, code: 'computers_read_required' }),
        expect.objectContaining({ where: 'delegations.test-bl-out', code: 'ou_not_managed' }),
        expect.objectContaining({ where: 'delegations.test-bl-nobody', code: 'assignee_not_found' }),
        expect.objectContaining({ where: 'delegations.test-bl-norole', code: 'role_not_found' }),
      ]),
    );
    // not a baseline at all
    await expectRefused(() => c.post('/api/admin/baseline/import', { baseline: { format: 'other' } }), 400, 'validation_failed', 'settings.baseline.import', everything);
  });

  it('replaces a differing role only with replace (409 baseline_conflicts otherwise, audited, nothing changed)', async () => {
    const c = await admin();
    const b = (await c.get('/api/admin/baseline')).body;
    const changed = {
      ...b,
      roles: b.roles.map((r: any) => (r.id === 'test-bl-role' ? { ...r, permissions: ['users.read'] } : r)),
      approvals: { ...b.approvals, delegations: { ...b.approvals.delegations, 'test-bl-deleg': { requiresApproval: [], approvalsNeeded: 1 } } },
    };
    // an approval action the (new) role no longer holds is a problem of the baseline itself
    const stillUnlock = { ...changed, approvals: b.approvals };
    const inconsistent = await expectRefused(() => c.post('/api/admin/baseline/import', { baseline: stillUnlock, replace: true }), 400, 'baseline_invalid', 'settings.baseline.import', everything);
    expect(inconsistent.body.problems).toEqual([expect.objectContaining({ where: 'approvals.delegations.test-bl-deleg', code: 'action_not_in_delegation' })]);
    const r = await expectRefused(() => c.post('/api/admin/baseline/import', { baseline: changed }), 409, 'baseline_conflicts', 'settings.baseline.import', everything);
    expect(r.body.problems).toEqual([expect.objectContaining({ code: 'role_exists' })]);
    const replaced = await c.post('/api/admin/baseline/import', { baseline: changed, replace: true });
    expect(replaced.status).toBe(200);
    expect(replaced.body.roles.updated).toEqual(['test-bl-role']);
    expect((await c.get('/api/admin/roles')).body.roles.find((x: any) => x.id === 'test-bl-role').permissions).toEqual(['users.read']);
  });

  it('needs settings.manage (403, audited) and a step-up', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    await expectRefused(() => helpdesk.get('/api/admin/baseline'), 403, 'forbidden', 'authz.decision', everything);
    await expectRefused(() => helpdesk.post('/api/admin/baseline/import', { baseline: {} }), 403, 'forbidden', 'authz.decision', everything);
    // the state is read before the fresh session exists: reading it steps up op-super's saved session
    const before = await everything();
    const fresh = await signedIn('op-super', { fresh: true });
    const r = await fresh.post('/api/admin/baseline/import', { baseline: {} });
    expect([r.status, r.body.code]).toEqual([403, 'reauth_required']);
    expect(await everything()).toEqual(before);
  });
});

describe('watch lists and CSV exports', () => {
  const rowsOf = (csv: string) => csv.trimEnd().split('\r\n');

  it('exports the users an operator may read as CSV, audited users.export with the row count', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    const mark = await auditMark();
    const r = await helpdesk.get('/api/exports/users');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="users-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = rowsOf(r.text);
    expect(lines[0]).toBe('"id","username","upn","displayName","givenName","sn","mail","description","enabled","lockedOut","lastSignIn","passwordLastSet","protected"');
    const n = lines.length - 1;
    expect(Number(r.headers['x-row-count'])).toBe(n);
    expect(r.text).toContain('"bob"');
    // never-manageable accounts are never exported; nothing outside the scope (OU=Branch)
    for (const u of ['admin-adam', 'da-dana', 'branch-bea']) expect(r.text).not.toContain(`"${u}"`);
    expect((await auditSince(mark)).find((x) => x.event === 'users.export')).toMatchObject({ outcome: 'success', actor: { name: 'op-helpdesk' }, details: { rows: n } });

    const branch = await signedIn('op-branch');
    const b = await branch.get('/api/exports/users');
    expect(b.text).toContain('"branch-bea"');
    expect(b.text).not.toContain('"bob"');
  });

  it('turns a directory value that a spreadsheet would run into text', async () => {
    const admin = await steppedUp('op-super');
    const alice = seedUser('alice');
    const formula = '=HYPERLINK("http://evil.example","click")';
    expect((await admin.put(`/api/users/${alice.guid}/attributes`, { attributes: { description: formula } })).status).toBe(200);
    try {
      const r = await admin.get('/api/exports/users?q=alice');
      const line = rowsOf(r.text).find((l) => l.includes('"alice"'))!;
      expect(line).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
      expect(line).not.toMatch(/(^|,)"=/);
    } finally {
      await admin.put(`/api/users/${alice.guid}/attributes`, { attributes: { description: null } });
    }
  });

  it('lists the watch lists and exports one, audited users.watch.export with the list and row count; an unknown list is 404', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    expect((await helpdesk.get('/api/watch-lists')).body.lists.map((l: any) => l.id)).toEqual(['locked-out', 'disabled', 'password-never-expires', 'inactive-90-days']);
    const disabled = await helpdesk.get('/api/watch-lists/disabled');
    expect(disabled.status).toBe(200);
    const names = disabled.body.items.map((u: any) => u.username);
    expect(names).toContain('carol');
    expect(names).not.toContain('bob');
    expect(disabled.body.items.every((u: any) => u.enabled === false)).toBe(true);

    const mark = await auditMark();
    const r = await helpdesk.get('/api/exports/watch-lists/disabled');
    expect(r.status).toBe(200);
    expect(rowsOf(r.text).length - 1).toBe(names.length);
    expect((await auditSince(mark)).find((x) => x.event === 'users.watch.export')).toMatchObject({ outcome: 'success', target: { id: 'disabled' }, details: { list: 'disabled', rows: names.length } });

    for (const p of ['/api/watch-lists/nope', '/api/exports/watch-lists/nope', '/api/exports/watch-lists/constructor']) expect((await helpdesk.get(p)).status).toBe(404);
  });
});
