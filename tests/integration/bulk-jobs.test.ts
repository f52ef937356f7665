import fs from 'node:fs';
import { Attribute, Change, Client } from 'ldapts';
import type { AuditRow } from '../../lib/audit';
import { approveRequest, resumeJobs } from '../../lib/approvals/requests';
import { JOB_LEASE_MS } from '../../lib/approvals/jobs';
import { readApprovalSettings, writeApprovalSettings, type ApprovalSettings } from '../../lib/approvals/settings';
import type { Session } from '../../lib/auth/sessions';
import { changeAuthz, operatorRights, putDelegation, putRole } from '../../lib/authz/rights';
import { guidFromBuffer } from '../../lib/directory/guid';
import { createRuntime, decisionContext } from '../../lib/runtime';
import type { ConsoleClient } from '../../local/console-client';
import { stepUpByCode, auditMark, auditSince, nextCode, seedUser, signedIn, stack, store } from '../support/stack';

// Bulk jobs and the leaver flow through approvals (console spec, Approval request; docs/approvals.md),
// against the Samba directory and DynamoDB Local. 200 test users are created here in their own OU
// (OU=BulkTest,OU=Managed, emptied first and removed at the end, so reruns work); op-helpdesk holds
// users.disable only with approval through a temporary delegation, the Approver role approves.
// The proof: one approved request over 200 targets, its job killed mid-way (a crash injected after
// N targets through the runner's test seam, in-process) and resumed as a restarted function would
// (the scheduled resume, once the lease has expired): every target disabled, each exactly once
// (one users.disable row per target). Refusals: code, audit row, nothing changed.

const BASE = stack.directory.baseDn;
const BULK_OU = `OU=BulkTest,OU=Managed,${BASE}`;
const UNMANAGED = `OU=Unmanaged,${BASE}`;
const N = 200;
const CRASH_AFTER = 70;
const sam = (i: number) => `bk-${String(i).padStart(3, '0')}`;
const guids: Record<string, string> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the directory as Administrator
const tls = () => ({ ca: [fs.readFileSync(stack.directory.caFile)] });
async function admin<T>(fn: (c: Client) => Promise<T>, url = stack.directory.dcs[0].url): Promise<T> {
  const c = new Client({ url, tlsOptions: tls() });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}
/** sAMAccountName → userAccountControl (and memberOf) of every user under the OU, as one DC holds them. */
const usersOn = (url: string, base: string) =>
  admin(async (c) => {
    const r = await c.search(base, { filter: '(objectClass=user)', attributes: ['sAMAccountName', 'userAccountControl', 'memberOf'], sizeLimit: 1000, paged: true }).catch(() => ({ searchEntries: [] as any[] }));
    return Object.fromEntries(r.searchEntries.map((e: any) => [String(e.sAMAccountName), { uac: Number(e.userAccountControl), memberOf: [e.memberOf ?? []].flat().map(String).sort() }]));
  }, url);
/** The users once every DC agrees (the console may write to dc2 after the failover tests; the DCs replicate within seconds). */
async function users(base = BULK_OU): Promise<Record<string, { uac: number; memberOf: string[] }>> {
  let seen: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 60; i++) {
    seen = await Promise.all(stack.directory.dcs.map((dc) => usersOn(dc.url, base)));
    if (seen.every((x) => JSON.stringify(x) === JSON.stringify(seen[0]))) return seen[0] as Record<string, { uac: number; memberOf: string[] }>;
    await sleep(500);
  }
  throw new Error(`the DCs still disagree on ${base} after 30 s`);
}
const disabled = (u: { uac: number }) => (u.uac & 2) !== 0;

async function emptyBulkOu() {
  await admin(async (c) => {
    const found = await c.search(BULK_OU, { scope: 'sub', filter: '(objectClass=*)', attributes: ['dn'], paged: true }).catch(() => ({ searchEntries: [] as any[] }));
    // deepest first, the OU itself last
    for (const e of found.searchEntries.map((x: any) => x.dn as string).sort((a, b) => b.split(',').length - a.split(',').length)) await c.del(e).catch(() => undefined);
  });
}
const guidOf = (c: Client, dn: string) => c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] }).then((r) => guidFromBuffer(r.searchEntries[0].objectGUID as Buffer));
async function addUser(c: Client, ou: string, name: string) {
  const dn = `CN=${name},${ou}`;
  await c.add(dn, {
    objectClass: ['top', 'person', 'organizationalPerson', 'user'],
    sAMAccountName: name,
    userPrincipalName: `${name}@${stack.directory.domain}`,
    unicodePwd: Buffer.from('"Bulk-Test-Pw!7001"', 'utf16le') as any,
    userAccountControl: '512',
  });
  guids[name] = await guidOf(c, dn);
}

// ---- operators, settings
let helpdesk: ConsoleClient;
let approver: ConsoleClient;
let approver2: ConsoleClient;
let savedSettings: { settings: ApprovalSettings; version: number };
const stepUp = stepUpByCode;
const rowsOf = (rows: AuditRow[], event: string) => rows.filter((r) => r.event === event);
const bulk = (c: ConsoleClient, targets: string[], extra: Record<string, unknown> = {}) =>
  c.post('/api/approvals', { kind: 'bulk', action: 'users.disable', targets, reason: 'bulk test', ticket: 'T-BULK-1', ...extra });

beforeAll(async () => {
  await emptyBulkOu();
  await admin(async (c) => {
    await c.add(BULK_OU, { objectClass: ['top', 'organizationalUnit'] });
    for (let i = 1; i <= N; i++) await addUser(c, BULK_OU, sam(i));
    await addUser(c, BULK_OU, 'bk-leaver');
    await c.add(`CN=bk-group,${BULK_OU}`, { objectClass: ['top', 'group'], sAMAccountName: 'bk-group', groupType: '-2147483646' });
    await c.del(`CN=bk-outside,${UNMANAGED}`).catch(() => undefined);
    await c.add(`CN=bk-outside,${UNMANAGED}`, { objectClass: ['top', 'group'], sAMAccountName: 'bk-outside', groupType: '-2147483646' });
    for (const g of [`CN=bk-group,${BULK_OU}`, `CN=bk-outside,${UNMANAGED}`])
      await c.modify(g, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [`CN=bk-leaver,${BULK_OU}`] }) }));
  });
  expect(Object.keys(await users()).length).toBe(N + 1);
  // op-helpdesk: users.disable on OU=Managed only with approval, approved by the Approver role
  await putRole(store, { id: 'bk-disabler', name: 'Bulk test disabler', permissions: ['users.read', 'groups.read', 'users.disable', 'groups.members.write'] });
  const helpdeskFacts = seedUser('op-helpdesk');
  const dir = (await decisionContext(inProcessRuntime())).dir;
  const opFacts = (await dir.principalFacts(helpdeskFacts.dn))!;
  await putDelegation(store, { id: 'bk-disabler', roleId: 'bk-disabler', scope: [await dir.resolveOu(`OU=Managed,${BASE}`)], assignees: [{ kind: 'user', guid: opFacts.guid, sid: opFacts.sid, name: 'op-helpdesk' }] });
  savedSettings = await readApprovalSettings(store);
  const next: ApprovalSettings = {
    ...savedSettings.settings,
    alwaysRequire: [],
    ticketRequired: false,
    // only this delegation asks for approvals while the file runs (restored after)
    delegations: { 'bk-disabler': { requiresApproval: ['users.disable', 'groups.members.write'], approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 1 } },
  };
  expect(await writeApprovalSettings(store, next, savedSettings.version)).toBe(true);
  helpdesk = await signedIn('op-helpdesk');
  approver = await signedIn('op-approver');
  approver2 = await signedIn('op-approver2');
}, 300_000);

afterAll(async () => {
  const now = await readApprovalSettings(store);
  await writeApprovalSettings(store, savedSettings.settings, now.version);
  await changeAuthz(store, () => ({ writes: [{ delete: 'delegation', id: 'bk-disabler' }, { delete: 'role', id: 'bk-disabler' }], result: undefined }));
  await emptyBulkOu();
  await admin((c) => c.del(`CN=bk-outside,${UNMANAGED}`)).catch(() => undefined);
}, 300_000);

let rtCache: ReturnType<typeof createRuntime> | undefined;
function inProcessRuntime() {
  return (rtCache ??= createRuntime({ env: { HDC_MASTER_KEY_FILE: stack.masterKeyFile, ...stack.stores.console }, store }));
}

/** op-approver as the console's approve route sees them, in this process (so the runner's crash seam can be used). */
async function approverContext(correlationId: string) {
  const rt = inProcessRuntime();
  const dc = await decisionContext(rt);
  const u = seedUser('op-approver');
  const facts = (await dc.dir.principalFacts(u.dn))!;
  const operator = { guid: facts.guid, dn: facts.dn, username: 'op-approver', sid: facts.sid, groupSids: facts.groupSids, provider: 'ad' as const, factsAt: Date.now() };
  const rights = await operatorRights(store, dc.settings, operator);
  const now = Math.floor(Date.now() / 1000);
  const session: Session = { id: 'in-process', version: 1, csrfToken: 'x', createdAt: now, lastSeenAt: now, expiresAt: now + 3600, operator, stepUpAt: now, stepUpProof: 'authenticator' };
  return { rt, dc, actor: { identity: { guid: operator.guid, username: operator.username, provider: 'ad' }, rights, ip: '127.0.0.1' }, session, correlationId };
}

describe('bulk requests: refusals (code, audit row, nothing changed)', () => {
  it('refuses a never-manageable or unknown target among others: 403 bulk_target_refused, not_found for both, audited, no request', async () => {
    const mark = await auditMark();
    const unknown = '00000000-0000-4000-8000-0000000000bb';
    const r = await bulk(helpdesk, [guids[sam(1)], seedUser('admin-adam').guid, unknown]);
    expect([r.status, r.body.code]).toEqual([403, 'bulk_target_refused']);
    expect(r.body.targets).toEqual([
      { id: seedUser('admin-adam').guid, code: 'not_found' },
      { id: unknown, code: 'not_found' },
    ]);
    const rows = await auditSince(mark);
    expect(rowsOf(rows, 'request.created')).toEqual([expect.objectContaining({ outcome: 'denied', reason: 'bulk_target_refused:2' })]);
    expect((await helpdesk.get('/api/approvals?view=mine')).body.items.filter((x: any) => x.kind === 'bulk' && x.state === 'pending')).toEqual([]);
    expect(disabled((await users())[sam(1)])).toBe(false);
  });

  it('refuses more targets than Directory:MaxResults (400 too_many_targets), duplicates, and an action no bulk carries', async () => {
    const mark = await auditMark();
    const many = [...Object.values(guids).slice(0, N), '00000000-0000-4000-8000-0000000000cc'];
    let r = await bulk(helpdesk, many);
    expect([r.status, r.body.code, r.body.max]).toEqual([400, 'too_many_targets', 200]);
    r = await bulk(helpdesk, [guids[sam(1)], guids[sam(1)]]);
    expect([r.status, r.body.code]).toEqual([400, 'duplicate_target']);
    r = await bulk(helpdesk, [guids[sam(1)]], { action: 'groups.members.write' });
    expect([r.status, r.body.code]).toEqual([400, 'action_not_available']);
    expect(rowsOf(await auditSince(mark), 'request.created').map((x) => [x.outcome, x.reason])).toEqual([
      ['denied', 'too_many_targets'],
      ['denied', 'duplicate_target'],
      ['denied', 'action_not_available'],
    ]);
  });

  it('refuses a bulk request for targets the requester may change directly (409 approval_not_required)', async () => {
    const r = await bulk(approver, [guids[sam(1)], guids[sam(2)]]);
    expect([r.status, r.body.code]).toEqual([409, 'approval_not_required']);
    expect(r.body.targets).toEqual([guids[sam(1)], guids[sam(2)]]);
  });
});

describe('a bulk request over 200 targets, its job killed mid-way and resumed', () => {
  let id: string;

  it('is filed by op-helpdesk (200 explicit accounts) and shown to the approvers', async () => {
    const targets = Array.from({ length: N }, (_, i) => guids[sam(i + 1)]);
    const r = await bulk(helpdesk, targets);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ kind: 'bulk', action: 'users.disable', state: 'pending', target: { id: 'bulk', name: '200 users' } });
    expect(r.body.targets).toHaveLength(N);
    id = r.body.id;
    expect((await approver.get('/api/approvals?view=to_approve')).body.items.map((x: any) => x.id)).toContain(id);
    // a target that becomes never-manageable after the request: re-checked at execution, refused there
    await admin((c) => c.modify(`CN=${sam(7)},${BULK_OU}`, new Change({ operation: 'replace', modification: new Attribute({ type: 'adminCount', values: ['1'] }) })));
  });

  it('runs as the approver’s job; killed after 70 targets; progress shows where it stopped; resumed, each target changed exactly once', async () => {
    const mark = await auditMark();
    const c = await approverContext('bk-approve');
    await expect(approveRequest(c, id, { crashAfter: CRASH_AFTER, budgetMs: 600_000 })).rejects.toThrow('injected crash');

    // what the function left: the request executing, the job running with 69 steps recorded and the 70th running
    const seen = await approver.get(`/api/approvals/${id}`);
    expect(seen.body).toMatchObject({ state: 'pending', executing: true, job: { state: 'running', total: N, done: CRASH_AFTER - 1 } });
    const job = await approver.get(`/api/approvals/${id}/job`);
    expect(job.status).toBe(200);
    expect(job.body.steps.filter((s: any) => s.state === 'running')).toEqual([expect.objectContaining({ i: CRASH_AFTER - 1, before: { enabled: true } })]);
    expect(job.body.steps.filter((s: any) => s.state === 'pending')).toHaveLength(N - CRASH_AFTER);
    // the requester sees the progress too; the executing approver cannot take over a live runner's lease
    expect((await helpdesk.get(`/api/approvals/${id}`)).body.job.done).toBe(CRASH_AFTER - 1);
    await stepUp(approver, 'op-approver');
    const early = await approver.post(`/api/approvals/${id}/resume`);
    expect([early.status, early.body.code]).toEqual([409, 'job_running']);
    const other = await approver2.post(`/api/approvals/${id}/resume`);
    expect([other.status, other.body.code]).toEqual([403, 'not_executor']);
    expect(Object.values(await users()).filter(disabled)).toHaveLength(CRASH_AFTER - 1); // bk-007 refused

    // a restarted function: the scheduled resume, once the lease has expired (its clock moved on)
    const rt = inProcessRuntime();
    const later = () => Date.now() + JOB_LEASE_MS + 1000;
    await resumeJobs(rt, await decisionContext(rt), { now: later, budgetMs: 600_000 });

    const done = await approver.get(`/api/approvals/${id}`);
    expect(done.body).toMatchObject({ state: 'executed', outcome: 'partial', result: { total: N, counts: { succeeded: N - 1, denied: 1 } }, job: { state: 'done', done: N } });
    const steps = (await approver.get(`/api/approvals/${id}/job`)).body.steps;
    expect(steps.filter((s: any) => s.resumed)).toEqual([expect.objectContaining({ i: CRASH_AFTER - 1, state: 'succeeded', after: { enabled: false } })]);
    expect(steps.find((s: any) => s.target.name === sam(7))).toMatchObject({ state: 'denied', code: 'not_found' });

    // the directory: every target but the refused one disabled
    const now = await users();
    for (let i = 1; i <= N; i++) expect([sam(i), disabled(now[sam(i)])]).toEqual([sam(i), i !== 7]);
    expect(disabled(now['bk-leaver'])).toBe(false);
    // each target changed exactly once: one users.disable row each, the interrupted one included
    const rows = await auditSince(mark);
    const disables = rowsOf(rows, 'users.disable');
    const byTarget = new Map<string, string[]>();
    for (const r of disables) byTarget.set(r.target!.id!, [...(byTarget.get(r.target!.id!) ?? []), r.outcome]);
    expect(byTarget.size).toBe(N);
    for (let i = 1; i <= N; i++) expect([sam(i), byTarget.get(guids[sam(i)])]).toEqual([sam(i), [i === 7 ? 'denied' : 'success']]);
    expect(disables.every((r) => r.correlationId === disables[0].correlationId && (r.details as any).request === id && r.ticket === 'T-BULK-1')).toBe(true);
    expect(rowsOf(rows, 'bulk.start')).toEqual([expect.objectContaining({ outcome: 'success', correlationId: disables[0].correlationId, details: expect.objectContaining({ steps: N }) })]);
    expect(rowsOf(rows, 'request.executed')).toEqual([expect.objectContaining({ outcome: 'partial', details: expect.objectContaining({ total: N, counts: { succeeded: N - 1, denied: 1 } }) })]);
    expect(rowsOf(rows, 'request.approved')).toEqual([expect.objectContaining({ outcome: 'success', reason: 'approval:1/1' })]);
  }, 600_000);
});

describe('two approvers at once, and the leaver flow', () => {
  it('executes a bulk request once when two approvers approve it at the same moment', async () => {
    // re-enable five targets, then disable them through one request approved twice at once
    const five = [1, 2, 3, 4, 5].map(sam);
    await admin(async (c) => {
      for (const s of five) await c.modify(`CN=${s},${BULK_OU}`, new Change({ operation: 'replace', modification: new Attribute({ type: 'userAccountControl', values: ['512'] }) }));
    });
    const before = await users();
    expect(five.every((s) => !disabled(before[s]))).toBe(true);
    const filed = await bulk(helpdesk, five.map((s) => guids[s]));
    expect(filed.status).toBe(201);
    await stepUp(approver, 'op-approver');
    await stepUp(approver2, 'op-approver2');
    const mark = await auditMark();
    const answers = await Promise.all([approver.post(`/api/approvals/${filed.body.id}/approve`), approver2.post(`/api/approvals/${filed.body.id}/approve`)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.code).toBe('request_not_pending');
    const ok = answers.find((a) => a.status === 200)!;
    expect(ok.body).toMatchObject({ request: { state: 'executed', outcome: 'succeeded' }, job: { state: 'done', total: 5, done: 5 } });
    const rows = await auditSince(mark);
    expect(rowsOf(rows, 'users.disable').map((r) => r.outcome)).toEqual(['success', 'success', 'success', 'success', 'success']);
    expect(rowsOf(rows, 'bulk.start')).toHaveLength(1);
    expect(rowsOf(rows, 'request.executed')).toHaveLength(1);
    const after = await users();
    expect(five.every((s) => disabled(after[s]))).toBe(true);
  }, 120_000);

  it('the leaver flow: disables the user and removes its group memberships, each decided; the out-of-scope group is reported and kept', async () => {
    const filed = await helpdesk.post('/api/approvals', { kind: 'leaver', action: 'users.disable', target: guids['bk-leaver'], reason: 'leaves the company', ticket: 'T-LEAVER-1' });
    expect(filed.status).toBe(201);
    expect(filed.body).toMatchObject({ kind: 'leaver', action: 'users.disable', target: { id: guids['bk-leaver'], name: 'bk-leaver' } });
    const wrong = await helpdesk.post('/api/approvals', { kind: 'leaver', action: 'users.unlock', target: guids['bk-leaver'], reason: 'x' });
    expect([wrong.status, wrong.body.code]).toEqual([400, 'action_not_available']);
    await stepUp(approver, 'op-approver');
    const mark = await auditMark();
    const r = await approver.post(`/api/approvals/${filed.body.id}/approve`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ request: { state: 'executed', outcome: 'partial' }, job: { state: 'done', total: 3, done: 3, counts: { succeeded: 2, denied: 1 } } });
    const steps = (await approver.get(`/api/approvals/${filed.body.id}/job`)).body.steps;
    expect(steps.map((s: any) => [s.target.name, s.state, s.code ?? null])).toEqual(
      expect.arrayContaining([
        ['bk-leaver', 'succeeded', null],
        ['bk-group', 'succeeded', null],
        ['bk-outside', 'denied', 'not_found'],
      ]),
    );
    const u = (await users())['bk-leaver'];
    expect(disabled(u)).toBe(true);
    expect(u.memberOf).toEqual([`CN=bk-outside,${UNMANAGED}`]);
    const rows = await auditSince(mark);
    expect(rowsOf(rows, 'users.disable')).toEqual([expect.objectContaining({ outcome: 'success', ticket: 'T-LEAVER-1' })]);
    expect(rowsOf(rows, 'groups.members.remove').map((x) => [x.outcome, x.target?.name ?? null])).toEqual(
      expect.arrayContaining([
        ['success', 'bk-group'],
        ['denied', null],
      ]),
    );
    expect(rowsOf(rows, 'bulk.start')).toEqual([expect.objectContaining({ details: expect.objectContaining({ kind: 'leaver', steps: 3 }) })]);
  }, 120_000);
});
