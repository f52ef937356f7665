import fs from 'node:fs';
import { Attribute, Change, Client } from 'ldapts';
import type { AuditRow } from '../../lib/audit';
import { expireTemporaryMemberships, type ApprovalRequest } from '../../lib/approvals/requests';
import { readApprovalSettings, writeApprovalSettings, type ApprovalSettings } from '../../lib/approvals/settings';
import { changeAuthz, putDelegation, putRole } from '../../lib/authz/rights';
import { guidFromBuffer } from '../../lib/directory/guid';
import { freezeDc } from '../../local/directory/dc-faults';
import type { ConsoleClient } from '../../local/console-client';
import { createRuntime, decisionContext } from '../../lib/runtime';
import { getRecord } from '../../lib/store/records';
import { stepUpByCode, auditMark, auditSince, nextCode, seedUser, signedIn, stack, store } from '../support/stack';

// Just-in-time group membership (issue 33, groups.members.add.temporary) through the real routes,
// against the Samba directory: filed by op-helpdesk (groups.members.write on OU=Managed only with
// approval, through a delegation of this file), approved by op-approver, the membership written;
// the scheduled run (expireTemporaryMemberships, called in-process with a clock moved past the
// expiry, as the approvals scheduler runs it) removes it; the requester ends one early; one removed
// by hand is recorded; with both DCs down the removal fails, the diagnostics warn, and the next run
// removes it. Every refusal: its code, its audit row, nothing filed or written.

const BASE = stack.directory.baseDn;
const GROUPS_OU = `OU=Groups,OU=Managed,${BASE}`;
const G1 = `CN=jit-group1,${GROUPS_OU}`;
const G2 = `CN=jit-group2,${GROUPS_OU}`;
const TIER0 = `CN=jit-tier0,OU=Tier0,OU=Servers,OU=Managed,${BASE}`;
const OUTSIDE = `CN=jit-outside,OU=Unmanaged,${BASE}`;
const guids: Record<string, string> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ACTION = 'groups.members.add.temporary';
const MIN = 60_000;

// ---- the directory as Administrator
async function admin<T>(fn: (c: Client) => Promise<T>, url = stack.directory.dcs[0].url): Promise<T> {
  const c = new Client({ url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}
// undefined: that DC does not hold the group yet (created a moment ago on dc1)
const membersOn = (dn: string, url: string) =>
  admin(async (c) => [(await c.search(dn, { scope: 'base', attributes: ['member'] })).searchEntries[0].member ?? []].flat().map((m) => String(m).toLowerCase()), url).catch(() => undefined);
/** The group's members once every DC agrees (the console may write to either; they replicate within seconds). */
async function members(dn: string): Promise<string[]> {
  let seen: Array<string[] | undefined> = [];
  for (let i = 0; i < 60; i++) {
    seen = await Promise.all(stack.directory.dcs.map((d) => membersOn(dn, d.url)));
    if (seen.every((x) => x && JSON.stringify([...x].sort()) === JSON.stringify([...seen[0]!].sort()))) return seen[0]!;
    await sleep(500);
  }
  throw new Error(`the DCs disagree on the members of ${dn}`);
}
const isMember = async (group: string, userDn: string) => (await members(group)).includes(userDn.toLowerCase());
async function addGroup(c: Client, dn: string, sam: string) {
  await c.del(dn).catch(() => undefined);
  await c.add(dn, { objectClass: ['top', 'group'], sAMAccountName: sam, groupType: '-2147483646' });
  guids[sam] = guidFromBuffer((await c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0].objectGUID as Buffer);
}

// ---- in-process runtime: the scheduled run as the approvals scheduler calls it
const inProcess = (env: Record<string, string> = {}) => createRuntime({ env: { HDC_MASTER_KEY_FILE: stack.masterKeyFile, ...stack.stores.console, ...env }, store });
async function scheduledRun(at: number, env: Record<string, string> = {}) {
  const rt = inProcess(env);
  return expireTemporaryMemberships(rt, await decisionContext(rt), at);
}

// ---- operators
let helpdesk: ConsoleClient;
let approver: ConsoleClient;
let superC: ConsoleClient;
let saved: { settings: ApprovalSettings; version: number };
const stepUp = stepUpByCode;
const rowsOf = (rows: AuditRow[], event: string) => rows.filter((r) => r.event === event);
const file = (c: ConsoleClient, group: string, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  c.post('/api/approvals', { kind: 'action', action: ACTION, target: group, parameters, reason: 'jit test', ticket: 'JIT-1', ...extra });
const requestOf = async (id: string) => (await getRecord<ApprovalRequest>(store, 'APPROVAL', id))!.data;
const helpdeskDn = () => seedUser('op-helpdesk').dn;

/** File a temporary membership for op-helpdesk and have op-approver approve it: the request, executed. */
async function granted(group: string, durationMinutes = 60): Promise<ApprovalRequest> {
  const f = await file(helpdesk, guids[group], { member: 'self', durationMinutes });
  expect(f.status).toBe(201);
  await stepUp(approver, 'op-approver');
  const a = await approver.post(`/api/approvals/${f.body.id}/approve`);
  expect(a.status).toBe(200);
  expect(a.body.result).toMatchObject({ outcome: 'succeeded' });
  return a.body.request;
}

beforeAll(async () => {
  helpdesk = await signedIn('op-helpdesk');
  approver = await signedIn('op-approver');
  superC = await signedIn('op-super');
  await admin(async (c) => {
    await addGroup(c, G1, 'jit-group1');
    await addGroup(c, G2, 'jit-group2');
    await addGroup(c, TIER0, 'jit-tier0');
    await addGroup(c, OUTSIDE, 'jit-outside');
  });
  // op-helpdesk: groups.members.write on OU=Managed, only with approval; the Approver role approves
  await putRole(store, { id: 'jit-requester', name: 'JIT test requester', permissions: ['users.read', 'groups.read', 'groups.members.write'] });
  const dir = (await decisionContext(inProcess())).dir;
  const op = (await dir.principalFacts(helpdeskDn()))!;
  await putDelegation(store, { id: 'jit-requester', roleId: 'jit-requester', scope: [await dir.resolveOu(`OU=Managed,${BASE}`)], assignees: [{ kind: 'user', guid: op.guid, sid: op.sid, name: 'op-helpdesk' }] });
  saved = await readApprovalSettings(store);
  const next: ApprovalSettings = {
    ...saved.settings,
    alwaysRequire: [],
    ticketRequired: false,
    delegations: { ...saved.settings.delegations, 'jit-requester': { requiresApproval: ['groups.members.write'], approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 1 } },
  };
  expect(await writeApprovalSettings(store, next, saved.version)).toBe(true);
  // memberships an earlier, interrupted run of this file left active are ended first (their groups are recreated above)
  await scheduledRun(Date.now() + 200 * 3_600_000);
}, 120_000);

afterAll(async () => {
  const now = await readApprovalSettings(store);
  const { 'jit-requester': _gone, ...delegations } = now.settings.delegations;
  await writeApprovalSettings(store, { ...now.settings, delegations }, now.version);
  await changeAuthz(store, () => ({ writes: [{ delete: 'delegation', id: 'jit-requester' }, { delete: 'role', id: 'jit-requester' }], result: undefined }));
  await admin(async (c) => {
    for (const dn of [G1, G2, TIER0, OUTSIDE]) await c.del(dn).catch(() => undefined);
  });
}, 60_000);

describe('just-in-time group membership: refusals (nothing filed, nothing written)', () => {
  it('refuses protected, Tier 0, out-of-scope and unknown groups, out-of-range durations, refused members and an existing membership, each audited request.created denied', async () => {
    const vip = stack.directory.groups.find((g) => g.name === 'GG-VIP')!;
    const sales = stack.directory.groups.find((g) => g.name === 'GG-Sales')!;
    const cases: Array<[string, string, Record<string, unknown>, number, string, string?]> = [
      ['protected group', vip.guid, { durationMinutes: 60 }, 403, 'forbidden'],
      ['Tier 0 group', guids['jit-tier0'], { durationMinutes: 60 }, 404, 'not_found'],
      ['group outside the managed OUs', guids['jit-outside'], { durationMinutes: 60 }, 404, 'not_found'],
      ['unknown group', '00000000-0000-4000-8000-000000000000', { durationMinutes: 60 }, 404, 'not_found'],
      ['too short', guids['jit-group1'], { durationMinutes: 14 }, 400, 'duration_out_of_range'],
      ['over the cap (8 h)', guids['jit-group1'], { durationMinutes: 8 * 60 + 1 }, 400, 'duration_out_of_range'],
      ['not a number', guids['jit-group1'], { durationMinutes: 'long' }, 400, 'invalid_parameters'],
      ['a never-manageable member', guids['jit-group1'], { member: seedUser('admin-adam').guid, durationMinutes: 60 }, 400, 'member_not_allowed'],
      ['a protected member', guids['jit-group1'], { member: seedUser('vip-victor').guid, durationMinutes: 60 }, 403, 'forbidden'],
      ['a group as member', guids['jit-group1'], { member: guids['jit-group2'], durationMinutes: 60 }, 400, 'member_not_allowed'],
      ['already a member', sales.guid, { member: seedUser('bob').guid, durationMinutes: 60 }, 409, 'already_member'],
    ];
    const before = (await helpdesk.get('/api/approvals?view=mine')).body.items.length;
    const membersBefore = await members(G1);
    for (const [what, group, params, status, code] of cases) {
      const mark = await auditMark();
      const r = await file(helpdesk, group, params);
      expect([what, r.status, r.body.code]).toEqual([what, status, code]);
      const rows = rowsOf(await auditSince(mark), 'request.created');
      expect([what, rows.length, rows[0]?.outcome]).toEqual([what, 1, 'denied']);
      expect(rows[0].details).toMatchObject({ action: ACTION });
    }
    expect((await helpdesk.get('/api/approvals?view=mine')).body.items.length).toBe(before);
    expect(await members(G1)).toEqual(membersBefore);
  }, 120_000);

  it('a named member must be a user the requester reads in scope (another operator outside it is refused)', async () => {
    const mark = await auditMark();
    const f = await file(helpdesk, guids['jit-group2'], { member: seedUser('op-approver').guid, durationMinutes: 30 });
    expect([f.status, f.body.code]).toEqual([400, 'member_not_allowed']);
    expect(rowsOf(await auditSince(mark), 'request.created')[0]).toMatchObject({ outcome: 'denied', reason: 'member_not_allowed:out_of_scope' });
    expect(await isMember(G2, seedUser('op-approver').dn)).toBe(false);
  });
});

describe('just-in-time group membership: through approval to expiry', () => {
  it('files for oneself, the approval writes the membership and the request holds its expiry; the scheduled run removes it on time (groups.members.removed, reason expired), once', async () => {
    const mark = await auditMark();
    const f = await file(helpdesk, guids['jit-group1'], { member: 'self', durationMinutes: 30 });
    expect(f.status).toBe(201);
    expect(f.body).toMatchObject({ action: ACTION, state: 'pending', target: { id: guids['jit-group1'], kind: 'group', name: 'jit-group1' }, parameters: { action: ACTION, member: seedUser('op-helpdesk').guid, durationMinutes: 30 } });
    expect(rowsOf(await auditSince(mark), 'request.created')[0]).toMatchObject({ outcome: 'success', reason: 'approval_required:delegation:jit-requester' });
    // the approver sees the duration in the inbox
    const inbox = await approver.get('/api/approvals?view=to_approve');
    expect(inbox.body.items.find((r: any) => r.id === f.body.id)).toMatchObject({ parameters: { durationMinutes: 30 } });
    expect(await isMember(G1, helpdeskDn())).toBe(false);

    await stepUp(approver, 'op-approver');
    const t0 = Date.now();
    const a = await approver.post(`/api/approvals/${f.body.id}/approve`);
    expect(a.status).toBe(200);
    expect(a.body.result).toMatchObject({ outcome: 'succeeded' });
    const req = a.body.request;
    expect(req).toMatchObject({ state: 'executed', outcome: 'succeeded', temporary: { state: 'active', durationMinutes: 30, member: { id: seedUser('op-helpdesk').guid }, group: { id: guids['jit-group1'] } } });
    const expires = Date.parse(req.temporary.expiresAt);
    expect(Math.abs(expires - (t0 + 30 * MIN))).toBeLessThan(60_000);
    expect(await isMember(G1, helpdeskDn())).toBe(true);
    const added = rowsOf(await auditSince(mark), 'groups.members.add');
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ outcome: 'success', actor: { name: 'op-approver' }, correlationId: f.body.correlationId, details: { temporary: true, request: f.body.id, expiresAt: req.temporary.expiresAt } });

    // "my temporary memberships": with the expiry
    const mine = await helpdesk.get('/api/temporary-memberships');
    expect(mine.status).toBe(200);
    expect(mine.body.items.find((m: any) => m.request === f.body.id)).toMatchObject({ state: 'active', expiresAt: req.temporary.expiresAt, group: { name: 'jit-group1' } });

    // a run before the expiry leaves it; the run after removes it
    const early = await auditMark();
    expect(await scheduledRun(expires - MIN)).toEqual({ removed: 0, removedByHand: 0, failed: 0 });
    expect(await isMember(G1, helpdeskDn())).toBe(true);
    expect(await scheduledRun(expires + 1000)).toEqual({ removed: 1, removedByHand: 0, failed: 0 });
    expect(await isMember(G1, helpdeskDn())).toBe(false);
    const removed = rowsOf(await auditSince(early), 'groups.members.removed');
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatchObject({ outcome: 'success', reason: 'expired', actor: { name: 'approvals-expiry', provider: 'system' }, correlationId: f.body.correlationId, target: { id: guids['jit-group1'] }, details: { request: f.body.id, member: seedUser('op-helpdesk').guid } });
    expect((await requestOf(f.body.id)).temporary).toMatchObject({ state: 'ended', ended: { how: 'expired', by: 'approvals-expiry' } });
    // once: a second run finds nothing to do
    expect(await scheduledRun(expires + 2 * MIN)).toEqual({ removed: 0, removedByHand: 0, failed: 0 });
    expect(rowsOf(await auditSince(early), 'groups.members.removed')).toHaveLength(1);
  }, 120_000);

  it('the requester ends it early (reason ended_early); the approver may not; ending twice is refused, each audited', async () => {
    const req = await granted('jit-group1');
    expect(await isMember(G1, helpdeskDn())).toBe(true);
    const mark = await auditMark();
    const other = await approver.post(`/api/temporary-memberships/${req.id}/end`);
    expect([other.status, other.body.code]).toEqual([403, 'not_requester']);
    expect(await isMember(G1, helpdeskDn())).toBe(true);
    const end = await helpdesk.post(`/api/temporary-memberships/${req.id}/end`);
    expect(end.status).toBe(200);
    expect(end.body.membership).toMatchObject({ request: req.id, state: 'ended', ended: { how: 'ended_early', by: 'op-helpdesk' } });
    expect(await isMember(G1, helpdeskDn())).toBe(false);
    const again = await helpdesk.post(`/api/temporary-memberships/${req.id}/end`);
    expect([again.status, again.body.code]).toEqual([409, 'membership_not_active']);
    const unknown = await helpdesk.post('/api/temporary-memberships/000000000-0000000000000000/end');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    const rows = rowsOf(await auditSince(mark), 'groups.members.removed');
    expect(rows.map((r) => [r.outcome, r.reason])).toEqual([
      ['denied', 'not_requester'],
      ['success', 'ended_early'],
      ['denied', 'membership_not_active'],
      ['denied', 'not_found'],
    ]);
    // the scheduled run leaves an ended membership alone
    expect(await scheduledRun(Date.parse(req.temporary!.expiresAt) + MIN)).toMatchObject({ removed: 0, removedByHand: 0 });
  }, 120_000);

  it('a membership removed by hand before its expiry is noticed and recorded (outcome unchanged, removed_by_hand); nothing fails', async () => {
    const req = await granted('jit-group2');
    await admin((c) => c.modify(G2, new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [helpdeskDn()] }) })));
    expect(await isMember(G2, helpdeskDn())).toBe(false);
    const mark = await auditMark();
    expect(await scheduledRun(Date.parse(req.temporary!.expiresAt) + 1000)).toEqual({ removed: 0, removedByHand: 1, failed: 0 });
    expect(rowsOf(await auditSince(mark), 'groups.members.removed').map((r) => [r.outcome, r.reason])).toEqual([['unchanged', 'removed_by_hand']]);
    expect((await requestOf(req.id)).temporary).toMatchObject({ state: 'ended', ended: { how: 'removed_by_hand' } });
  }, 120_000);

  it('both DCs down at expiry: the removal fails and stays active, the diagnostics warn; the next run removes it and the warning goes', async () => {
    const req = await granted('jit-group2');
    const at = Date.parse(req.temporary!.expiresAt) + 1000;
    const mark = await auditMark();
    const frozen = [freezeDc('dc1'), freezeDc('dc2')];
    let down: Awaited<ReturnType<typeof scheduledRun>>;
    try {
      down = await scheduledRun(at, { Directory__ConnectTimeout: '2' });
    } finally {
      for (const f of frozen) f.thaw();
    }
    expect(down).toEqual({ removed: 0, removedByHand: 0, failed: 1 });
    const failed = rowsOf(await auditSince(mark), 'groups.members.removed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ outcome: 'failed', details: { how: 'expired', attempts: 1 } });
    expect((await requestOf(req.id)).temporary).toMatchObject({ state: 'active', removal: { attempts: 1 } });
    expect(await isMember(G2, helpdeskDn())).toBe(true);

    // the DCs answer again: the diagnostics name the overdue membership
    await stepUp(superC, 'op-super');
    const diag = await superC.get('/api/diagnostics');
    expect(diag.status).toBe(200);
    const warning = diag.body.checks.find((c: any) => c.code === 'temporary_membership_removal_failed');
    expect(warning).toMatchObject({ severity: 'warning', details: { count: 1, memberships: [{ request: req.id, group: 'jit-group2', attempts: 1 }] } });

    // the next run retries and removes it
    const retry = await auditMark();
    expect(await scheduledRun(at + 5 * MIN)).toEqual({ removed: 1, removedByHand: 0, failed: 0 });
    expect(await isMember(G2, helpdeskDn())).toBe(false);
    expect(rowsOf(await auditSince(retry), 'groups.members.removed').map((r) => [r.outcome, r.reason])).toEqual([['success', 'expired']]);
    const after = await superC.get('/api/diagnostics');
    expect(after.body.checks.find((c: any) => c.code === 'temporary_membership_removal_failed')).toBeUndefined();
  }, 180_000);
});
