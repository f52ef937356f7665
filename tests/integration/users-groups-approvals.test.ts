import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { Attribute, Change, Client } from 'ldapts';
import { Webhook } from 'standardwebhooks';
import { guidFromBuffer } from '../../lib/directory/guid';
import { getRecord, putRecord } from '../../lib/store/records';
import type { ConsoleClient } from '../../local/console-client';
import { RUN_DIR } from '../../local/processes';
import { stepUpByCode, auditMark, auditSince, profile, seedUser, signedIn, stack, store } from '../support/stack';

// Users, groups and four-eyes approvals through the real routes, against the Samba directory:
// every transition of the state table and every refusal code, each with its audit rows and the
// directory really changed (or really not). Dedicated users and a group are created here (and
// removed); dave is unlocked through an approval and locked again; settings are restored.

const BASE = stack.directory.baseDn;
const USERS_OU = `OU=Users,OU=Managed,${BASE}`;
const GROUPS_OU = `OU=Groups,OU=Managed,${BASE}`;
const T1 = `CN=t4-user1,${USERS_OU}`;
const T2 = `CN=t4-user2,${USERS_OU}`;
const TG = `CN=t4-group,${GROUPS_OU}`;
const guids: Record<string, string> = {};
const generated: string[] = []; // every password the service generated: searched for leaks at the end
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the directory as Administrator (setup, checks, restore)
async function adminClient<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}
const readAttrs = (dn: string, attributes: string[]) =>
  adminClient(async (c) => (await c.search(dn, { scope: 'base', attributes, explicitBufferAttributes: ['objectGUID'] })).searchEntries[0] as Record<string, any>);
const uac = async (dn: string) => Number((await readAttrs(dn, ['userAccountControl'])).userAccountControl);
const isLocked = async (dn: string) => (Number((await readAttrs(dn, ['msDS-User-Account-Control-Computed']))['msDS-User-Account-Control-Computed']) & 0x10) !== 0;
const members = async (dn: string) => [(await readAttrs(dn, ['member'])).member ?? []].flat().map(String);
async function canBind(dn: string, password: string) {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  try {
    await c.bind(dn, password);
    return true;
  } catch {
    return false;
  } finally {
    await c.unbind().catch(() => undefined);
  }
}
async function createUser(dn: string, sam: string) {
  await adminClient(async (c) => {
    await c.del(dn).catch(() => undefined);
    await c.add(dn, {
      objectClass: ['top', 'person', 'organizationalPerson', 'user'],
      sAMAccountName: sam,
      userPrincipalName: `${sam}@${stack.directory.domain}`,
      unicodePwd: Buffer.from('"Initial-Pw!4001"', 'utf16le') as any,
      userAccountControl: '512',
      description: 'issue 4 test user',
    });
  });
  guids[sam] = guidFromBuffer((await readAttrs(dn, ['objectGUID'])).objectGUID);
}

// one code step-up per operator, renewed before the 300 s window closes (tests/support/stack)
const stepUp = stepUpByCode;

// ---- the notification receiver: HTTPS on loopback, certificate from the local test CA
const hookToken = randomBytes(12).toString('hex');
const hookSecret = `hook-secret-${randomBytes(16).toString('hex')}`;
const received: Array<{ headers: Record<string, any>; body: string }> = [];
let receiver: https.Server;
let hookUrl: string;
function startReceiver(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 't4-hook-'));
  const caKey = path.join(path.dirname(stack.directory.caFile), 'ca.key');
  fs.writeFileSync(path.join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1\n');
  execFileSync('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', `${dir}/key.pem`, '-out', `${dir}/req.csr`], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', `${dir}/req.csr`, '-CA', stack.directory.caFile, '-CAkey', caKey, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '2', '-extfile', `${dir}/ext`, '-out', `${dir}/cert.pem`], { stdio: 'ignore' });
  receiver = https.createServer({ key: fs.readFileSync(`${dir}/key.pem`), cert: fs.readFileSync(`${dir}/cert.pem`) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(req.url === `/hook/${hookToken}` ? 204 : 404).end();
    });
  });
  return new Promise((resolve) =>
    receiver.listen(0, '127.0.0.1', () => {
      hookUrl = `https://127.0.0.1:${(receiver.address() as { port: number }).port}/hook/${hookToken}`;
      resolve();
    }),
  );
}
const hooksFor = (requestId: string, kind: string) => received.filter((h) => JSON.parse(h.body).request.id === requestId && JSON.parse(h.body).kind === kind);

// ---- operators
let superC: ConsoleClient;
let helpdesk: ConsoleClient; // holds the approvable actions only with approval (settings below)
let approver: ConsoleClient;
let approver2: ConsoleClient;
const opGuid = (name: string) => seedUser(name).guid;

const baseSettings = (over: Record<string, unknown> = {}) => ({
  requestLifetimeDays: 7,
  alwaysRequire: [],
  instanceApprovers: { roles: [], operators: [] },
  instanceApprovalsNeeded: 1,
  ticketRequired: false,
  consoleUrl: 'https://console.corp.example.test',
  delegations: {
    'helpdesk-managed': { requiresApproval: ['users.unlock', 'users.password.reset'], approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 1 },
    'test-appr-managed': {
      requiresApproval: ['users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'users.password.reset', 'groups.members.write'],
      approvers: { roles: ['approver'], operators: [] },
      approvalsNeeded: 1,
    },
  },
  ...over,
});
async function putSettings(body: Record<string, unknown>) {
  await stepUp(superC, 'op-super');
  const r = await superC.put('/api/admin/approvals/settings', body);
  expect(r.status).toBe(200);
  return r;
}

const request = (c: ConsoleClient, action: string, target: string, parameters: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  c.post('/api/approvals', { kind: 'action', action, target, parameters, reason: `test ${action}`, ticket: 'T4-1', ...extra });

beforeAll(async () => {
  await startReceiver();
  superC = await signedIn('op-super', { fresh: true });
  helpdesk = await signedIn('op-helpdesk');
  approver = await signedIn('op-approver');
  approver2 = await signedIn('op-approver2');
  await createUser(T1, 't4-user1');
  await createUser(T2, 't4-user2');
  await adminClient(async (c) => {
    await c.del(TG).catch(() => undefined);
    await c.add(TG, { objectClass: ['top', 'group'], sAMAccountName: 't4-group', groupType: '-2147483646', description: 'issue 4 test group' });
  });
  guids['t4-group'] = guidFromBuffer((await readAttrs(TG, ['objectGUID'])).objectGUID);
  // a role holding every approvable action, delegated on OU=Managed to op-helpdesk
  await stepUp(superC, 'op-super');
  expect((await superC.put('/api/admin/roles/test-appr', { name: 'Test approvable', permissions: ['users.read', 'groups.read', 'users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'users.password.reset', 'groups.members.write'] })).status).toBeLessThan(300);
  expect((await superC.put('/api/admin/delegations/test-appr-managed', { roleId: 'test-appr', scope: [`OU=Managed,${BASE}`], assignees: ['op-helpdesk'] })).status).toBeLessThan(300);
  expect((await superC.put('/api/admin/notifications/channels/test-hook', { url: hookUrl, secret: hookSecret, events: ['approval_requested', 'approval_decided'] })).status).toBeLessThan(300);
  await putSettings(baseSettings());
});

afterAll(async () => {
  await stepUp(superC, 'op-super');
  await superC.put('/api/admin/approvals/settings', { ...baseSettings(), delegations: {}, consoleUrl: undefined });
  await superC.delete('/api/admin/notifications/channels/test-hook');
  await superC.delete('/api/admin/delegations/test-appr-managed');
  await superC.delete('/api/admin/roles/test-appr');
  await adminClient(async (c) => {
    for (const dn of [TG, T1, T2]) await c.del(dn).catch(() => undefined);
  });
  // dave stays locked out for the other tests: three failed binds lock him again (PSO threshold 3)
  if (!(await isLocked(seedUser('dave').dn))) for (let i = 0; i < 3; i++) await canBind(seedUser('dave').dn, 'wrong-password');
  await new Promise((r) => receiver.close(r));
});

describe('users: read views', () => {
  it('searches in scope, never lists never-manageable accounts, marks VIP, pages of 50', async () => {
    const r = await helpdesk.get('/api/users?q=t4-');
    expect(r.status).toBe(200);
    expect(r.body.items.map((u: any) => u.username).sort()).toEqual(['t4-user1', 't4-user2']);
    const all = await helpdesk.get('/api/users');
    const names = all.body.items.map((u: any) => u.username);
    expect(names).toEqual(expect.arrayContaining(['alice', 'bob', 'vip-victor']));
    for (const never of ['admin-adam', 'da-dana', 'Administrator', 'krbtgt', 'op-helpdesk', 'branch-bea']) expect(names).not.toContain(never);
    expect(all.body.items.length).toBeLessThanOrEqual(50);
    expect(all.body.items.find((u: any) => u.username === 'vip-victor').protected).toBe(true);
    expect(JSON.stringify(all.body)).not.toMatch(/password"/i);
  });

  it('detail with action hints; 404 for never-manageable, out of scope and unknown, same body', async () => {
    const d = await helpdesk.get(`/api/users/${seedUser('dave').guid}`);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ username: 'dave', lockedOut: true, enabled: true, actions: { 'users.unlock': 'approval', 'users.password.reset': 'approval', 'users.disable': 'approval' } });
    const a = await approver.get(`/api/users/${seedUser('dave').guid}`);
    expect(a.body.actions).toMatchObject({ 'users.unlock': 'direct', 'users.disable': 'direct' });
    const carol = await helpdesk.get(`/api/users/${seedUser('carol').guid}`);
    expect(carol.body.enabled).toBe(false);
    const branch = await signedIn('op-branch');
    for (const [c, g] of [
      [helpdesk, seedUser('admin-adam').guid],
      [helpdesk, seedUser('da-dana').guid],
      [helpdesk, opGuid('op-approver')],
      [branch, seedUser('alice').guid],
      [helpdesk, '00000000-0000-0000-0000-000000000001'],
      [helpdesk, 'not-a-guid'],
    ] as Array<[ConsoleClient, string]>) {
      const r = await c.get(`/api/users/${g}`);
      expect({ status: r.status, body: r.body }).toEqual({ status: 404, body: { code: 'not_found' } });
    }
  });
});

describe('groups: read views', () => {
  it('searches groups in scope, never the built-in or sensitive ones', async () => {
    const r = await helpdesk.get('/api/groups');
    expect(r.status).toBe(200);
    const names = r.body.items.map((g: any) => g.name);
    expect(names).toEqual(expect.arrayContaining(['GG-Sales', 'GG-VIP', 't4-group']));
    expect(names).not.toContain('GG-Nested-Sensitive');
    expect(names).not.toContain('Domain Admins');
    expect(r.body.items.find((g: any) => g.name === 'GG-VIP').protected).toBe(true);
    const sens = stack.directory.groups.find((g) => g.name === 'GG-Nested-Sensitive')!;
    expect((await helpdesk.get(`/api/groups/${sens.guid}`)).status).toBe(404);
  });

  it('lists members of a group', async () => {
    const sales = stack.directory.groups.find((g) => g.name === 'GG-Sales')!;
    const r = await helpdesk.get(`/api/groups/${sales.guid}/members`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((m: any) => m.name).sort()).toEqual(['bob', 'carol']);
    expect(r.body).toMatchObject({ omitted: 0, truncated: false });
  });
});

describe('direct actions (each decided by the engine, audited under its own name)', () => {
  it('disable then enable: the directory changes, rows users.disable / users.enable with old and new', async () => {
    await stepUp(approver, 'op-approver');
    const mark = await auditMark();
    const r = await approver.post(`/api/users/${guids['t4-user1']}/disable`, { ticket: 'T4-D' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ outcome: 'succeeded' });
    expect((await uac(T1)) & 2).toBe(2);
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'allowed', reason: 'delegation:approver-managed', target: { kind: 'user' } });
    expect(rows.find((x) => x.event === 'users.disable')).toMatchObject({ outcome: 'success', ticket: 'T4-D', details: { old: { enabled: true }, new: { enabled: false } } });
    expect((await approver.post(`/api/users/${guids['t4-user1']}/enable`, {})).status).toBe(200);
    expect((await uac(T1)) & 2).toBe(0);
  });

  it('attributes: old and new values recorded, a sensitive value never', async () => {
    await stepUp(approver, 'op-approver');
    const mark = await auditMark();
    const r = await approver.put(`/api/users/${guids['t4-user1']}/attributes`, { attributes: { description: 'changed by t4', telephoneNumber: '+41 44 555 01 99' } });
    expect(r.status).toBe(200);
    const after = await readAttrs(T1, ['description', 'telephoneNumber']);
    expect(after).toMatchObject({ description: 'changed by t4', telephoneNumber: '+41 44 555 01 99' });
    const row = (await auditSince(mark)).find((x) => x.event === 'users.attributes.write')!;
    expect(row.details).toMatchObject({ old: { description: 'issue 4 test user', telephoneNumber: '[sensitive]' }, new: { description: 'changed by t4', telephoneNumber: '[sensitive]' } });
    expect(JSON.stringify(row)).not.toContain('555 01 99');
    const bad = await approver.put(`/api/users/${guids['t4-user1']}/attributes`, { attributes: { userAccountControl: '514' } });
    expect(bad.status).toBe(400);
  });

  it('password reset: generated by the password service, shown once, the user signs in with it', async () => {
    await stepUp(approver, 'op-approver');
    const mark = await auditMark();
    const before = String((await readAttrs(T1, ['pwdLastSet'])).pwdLastSet);
    const r = await approver.post(`/api/users/${guids['t4-user1']}/reset-password`, { mustChange: false, ticket: 'T4-R' });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('succeeded');
    expect(r.body.password).toMatch(/^.{20}$/);
    generated.push(r.body.password);
    expect(await canBind(T1, r.body.password)).toBe(true);
    // Samba keeps accepting the previous password for its 'old password allowed period' (60 min),
    // so the proof that it changed is the new one binding and pwdLastSet moving
    const after = String((await readAttrs(T1, ['pwdLastSet'])).pwdLastSet);
    expect(after).not.toBe(before);
    expect(after).not.toBe('0');
    const row = (await auditSince(mark)).find((x) => x.event === 'users.password.reset')!;
    expect(row).toMatchObject({ outcome: 'success', ticket: 'T4-R', details: { mustChange: false, unlock: false } });
  });

  it('refusals: VIP without vip.manage, never-manageable (404), approval_required, no step-up, own account as a member; nothing changed', async () => {
    await stepUp(approver, 'op-approver');
    let mark = await auditMark();
    const vip = seedUser('vip-victor');
    const before = await uac(vip.dn);
    const v = await approver.post(`/api/users/${vip.guid}/disable`, {});
    expect({ status: v.status, body: v.body }).toEqual({ status: 403, body: { code: 'forbidden', reason: 'vip_requires_vip_manage' } });
    expect(await uac(vip.dn)).toBe(before);
    expect((await auditSince(mark)).find((x) => x.event === 'users.disable')).toMatchObject({ outcome: 'denied', reason: 'vip_requires_vip_manage' });

    const adam = await approver.post(`/api/users/${seedUser('admin-adam').guid}/disable`, {});
    expect({ status: adam.status, body: adam.body }).toEqual({ status: 404, body: { code: 'not_found' } });

    await stepUp(helpdesk, 'op-helpdesk');
    mark = await auditMark();
    const dave = seedUser('dave');
    const u = await helpdesk.post(`/api/users/${dave.guid}/unlock`, {});
    expect({ status: u.status, code: u.body.code }).toEqual({ status: 403, code: 'approval_required' });
    expect(await isLocked(dave.dn)).toBe(true);
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', reason: 'approval_required:delegation:helpdesk-managed' });
    expect(rows.find((x) => x.event === 'users.unlock')).toMatchObject({ outcome: 'denied', reason: 'approval_required' });

    const fresh = await signedIn('op-approver2', { fresh: true });
    const noStep = await fresh.post(`/api/users/${guids['t4-user2']}/disable`, {});
    expect({ status: noStep.status, code: noStep.body.code }).toEqual({ status: 403, code: 'reauth_required' });
    expect((await uac(T2)) & 2).toBe(0);
    approver2 = fresh;

    const own = await approver.post(`/api/groups/${guids['t4-group']}/members`, { add: [opGuid('op-approver')] });
    expect({ status: own.status, code: own.body.code }).toEqual({ status: 403, code: 'own_account' });
    expect(await members(TG)).toEqual([]);
  });

  it('group members: add and remove, one audit row per member', async () => {
    await stepUp(approver, 'op-approver');
    const mark = await auditMark();
    const add = await approver.post(`/api/groups/${guids['t4-group']}/members`, { add: [guids['t4-user2']] });
    expect(add.status).toBe(200);
    expect(add.body).toMatchObject({ outcome: 'succeeded', members: [{ id: guids['t4-user2'], change: 'add', outcome: 'succeeded' }] });
    expect(await members(TG)).toEqual([T2]);
    expect((await auditSince(mark)).find((x) => x.event === 'groups.members.add')).toMatchObject({ outcome: 'success', target: { id: guids['t4-group'], kind: 'group' }, details: { member: guids['t4-user2'] } });
    const del = await approver.delete(`/api/groups/${guids['t4-group']}/members/${guids['t4-user2']}`);
    expect(del.status).toBe(200);
    expect(await members(TG)).toEqual([]);
    // a member outside the operator's scope is refused, nothing written
    const out = await approver.post(`/api/groups/${guids['t4-group']}/members`, { add: [seedUser('branch-bea').guid] });
    expect({ status: out.status, code: out.body.code }).toEqual({ status: 400, code: 'member_not_allowed' });
    expect(await members(TG)).toEqual([]);
  });
});

describe('approval requests: create', () => {
  it('refuses approval_not_required, out of scope and never-manageable; all audited request.created denied', async () => {
    let mark = await auditMark();
    const direct = await request(approver, 'users.unlock', seedUser('dave').guid);
    expect({ status: direct.status, code: direct.body.code }).toEqual({ status: 409, code: 'approval_not_required' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.created')).toMatchObject({ outcome: 'denied', reason: 'approval_not_required' });
    mark = await auditMark();
    const branch = await request(helpdesk, 'users.unlock', seedUser('branch-bea').guid);
    expect({ status: branch.status, body: branch.body }).toEqual({ status: 404, body: { code: 'not_found' } });
    expect((await auditSince(mark)).find((x) => x.event === 'request.created')).toMatchObject({ outcome: 'denied', reason: 'out_of_scope' });
    const adam = await request(helpdesk, 'users.disable', seedUser('admin-adam').guid);
    expect(adam.status).toBe(404);
    const vip = await request(helpdesk, 'users.disable', seedUser('vip-victor').guid);
    expect({ status: vip.status, code: vip.body.code, reason: vip.body.reason }).toEqual({ status: 403, code: 'forbidden', reason: 'vip_requires_vip_manage' });
    const notApprovable = await request(helpdesk, 'users.move', seedUser('alice').guid);
    expect({ status: notApprovable.status, code: notApprovable.body.code }).toEqual({ status: 400, code: 'action_not_approvable' });
    const noReason = await helpdesk.post('/api/approvals', { kind: 'action', action: 'users.unlock', target: seedUser('dave').guid, parameters: {} });
    expect(noReason.status).toBe(400);
    // a bulk request names its targets (`targets`), never one `target` (tests/integration/bulk-jobs.test.ts)
    const bulk = await request(helpdesk, 'users.unlock', seedUser('dave').guid, {}, { kind: 'bulk' });
    expect({ status: bulk.status, code: bulk.body.code, fields: bulk.body.errors?.map((e: { field: string }) => e.field) }).toEqual({ status: 400, code: 'validation_failed', fields: ['body.targets'] });
  });
});

describe('approval requests: the state table', () => {
  it('create → approve (last) → executed: unlocks dave under the approver’s rights, one correlation id, notifications signed', async () => {
    const dave = seedUser('dave');
    let mark = await auditMark();
    const c = await request(helpdesk, 'users.unlock', dave.guid);
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ state: 'pending', action: 'users.unlock', approvalsNeeded: 1, approvals: [], requester: { username: 'op-helpdesk' }, target: { id: dave.guid, kind: 'user' } });
    const id = c.body.id;
    const created = (await auditSince(mark)).find((x) => x.event === 'request.created')!;
    expect(created).toMatchObject({ outcome: 'success', reason: 'approval_required:delegation:helpdesk-managed', ticket: 'T4-1' });
    // the approvers' notification: signed with the channel secret, links to the request in the SPA
    const hook = hooksFor(id, 'approval_requested')[0];
    expect(hook).toBeDefined();
    // Standard Webhooks: verified with that specification's library (the secret as raw bytes: not a whsec_ key)
    const signed = { 'webhook-id': String(hook.headers['webhook-id']), 'webhook-timestamp': String(hook.headers['webhook-timestamp']), 'webhook-signature': String(hook.headers['webhook-signature']) };
    expect(new Webhook(hookSecret, { format: 'raw' }).verify(hook.body, signed)).toMatchObject({ kind: 'approval_requested' });
    expect(signed['webhook-signature']).toBe(`v1,${createHmac('sha256', hookSecret).update(`${signed['webhook-id']}.${signed['webhook-timestamp']}.${hook.body}`).digest('base64')}`);
    expect(hook.headers['x-hdc-signature']).toBeUndefined();
    expect(JSON.parse(hook.body)).toMatchObject({ kind: 'approval_requested', link: `https://console.corp.example.test/approvals/${id}`, request: { action: 'users.unlock', requester: 'op-helpdesk' } });

    // self approval refused, pending stays
    await stepUp(helpdesk, 'op-helpdesk');
    mark = await auditMark();
    const self = await helpdesk.post(`/api/approvals/${id}/approve`);
    expect({ status: self.status, code: self.body.code }).toEqual({ status: 403, code: 'self_approval' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'denied', reason: 'self_approval', correlationId: created.correlationId });

    // an operator not named as approver
    const auditor = await signedIn('op-auditor');
    await stepUp(auditor, 'op-auditor');
    const notNamed = await auditor.post(`/api/approvals/${id}/approve`);
    expect({ status: notNamed.status, code: notNamed.body.code }).toEqual({ status: 403, code: 'approver_not_allowed:not_captured' });
    // an approver without a recent step-up
    const noStep = await signedIn('op-approver', { fresh: true });
    mark = await auditMark();
    const r1 = await noStep.post(`/api/approvals/${id}/approve`);
    expect({ status: r1.status, code: r1.body.code }).toEqual({ status: 403, code: 'reauth_required' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'denied', reason: 'reauth_required' });
    expect(await isLocked(dave.dn)).toBe(true);
    approver = noStep; // a fresh session: stepUp steps it up (kept per client)

    // to_approve and count
    await stepUp(approver, 'op-approver');
    expect((await approver.get('/api/approvals?view=to_approve')).body.items.map((x: any) => x.id)).toContain(id);
    expect((await approver.get('/api/approvals/count')).body.toApprove).toBeGreaterThanOrEqual(1);
    expect((await helpdesk.get('/api/approvals?view=mine')).body.items[0].id).toBe(id);
    expect((await helpdesk.get('/api/approvals/count')).body.minePending).toBeGreaterThanOrEqual(1);

    mark = await auditMark();
    const ok = await approver.post(`/api/approvals/${id}/approve`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ request: { state: 'executed', outcome: 'succeeded' }, result: { outcome: 'succeeded' } });
    expect(await isLocked(dave.dn)).toBe(false);
    const rows = await auditSince(mark);
    const names = rows.map((x) => x.event);
    expect(names).toEqual(expect.arrayContaining(['request.approved', 'authz.decision', 'users.unlock', 'request.executed']));
    expect(rows.find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'success', reason: 'approval:1/1' });
    expect(rows.find((x) => x.event === 'users.unlock')).toMatchObject({ outcome: 'success', actor: { name: 'op-approver' }, details: { request: id, wasLockedOut: true } });
    expect(rows.find((x) => x.event === 'request.executed')).toMatchObject({ outcome: 'succeeded' });
    for (const row of rows.filter((x) => ['request.approved', 'users.unlock', 'request.executed'].includes(x.event))) expect(row.correlationId).toBe(created.correlationId);
    expect(hooksFor(id, 'approval_decided')).toHaveLength(1);
    // visible to requester and approver; not to an operator with nothing to do with it
    expect((await helpdesk.get(`/api/approvals/${id}`)).body).toMatchObject({ state: 'executed', outcome: 'succeeded' });
    expect((await (await signedIn('op-branch')).get(`/api/approvals/${id}`)).status).toBe(404);
    expect((await approver.get('/api/approvals?view=history')).body.items.map((x: any) => x.id)).toContain(id);

    // a closed request cannot be approved again
    const again = await approver2.post(`/api/approvals/${id}/approve`);
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: 'request_not_pending' });
    // lock dave again for the other tests
    for (let i = 0; i < 3; i++) await canBind(dave.dn, 'wrong-password');
    expect(await isLocked(dave.dn)).toBe(true);
  });

  it('two approvals need two different approvers; a raised count applies to pending requests', async () => {
    const c = await request(helpdesk, 'users.disable', guids['t4-user2']);
    expect(c.status).toBe(201);
    expect(c.body.approvalsNeeded).toBe(1);
    await putSettings(baseSettings({ delegations: { ...baseSettings().delegations as object, 'test-appr-managed': { ...(baseSettings().delegations as any)['test-appr-managed'], approvalsNeeded: 2 } } }));
    await stepUp(approver, 'op-approver');
    await stepUp(approver2, 'op-approver2');
    let mark = await auditMark();
    const first = await approver.post(`/api/approvals/${c.body.id}/approve`);
    expect(first.status).toBe(200);
    expect(first.body.request).toMatchObject({ state: 'pending', approvalsNeeded: 2 });
    expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'success', reason: 'approval:1/2' });
    expect((await uac(T2)) & 2).toBe(0);
    const twice = await approver.post(`/api/approvals/${c.body.id}/approve`);
    expect({ status: twice.status, code: twice.body.code }).toEqual({ status: 403, code: 'approver_not_allowed:already_approved' });
    mark = await auditMark();
    const second = await approver2.post(`/api/approvals/${c.body.id}/approve`);
    expect(second.status).toBe(200);
    expect(second.body.request).toMatchObject({ state: 'executed', outcome: 'succeeded' });
    expect((await uac(T2)) & 2).toBe(2);
    expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ reason: 'approval:2/2' });
    await putSettings(baseSettings());
    expect((await approver.post(`/api/users/${guids['t4-user2']}/enable`, {})).status).toBe(200);
  });

  it('concurrent approvals of the same request execute the action once', async () => {
    const c = await request(helpdesk, 'users.attributes.write', guids['t4-user2'], { attributes: { description: 'raced' } });
    expect(c.status).toBe(201);
    await stepUp(approver, 'op-approver');
    await stepUp(approver2, 'op-approver2');
    const mark = await auditMark();
    const answers = await Promise.all([approver.post(`/api/approvals/${c.body.id}/approve`), approver2.post(`/api/approvals/${c.body.id}/approve`), approver.post(`/api/approvals/${c.body.id}/approve`)]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const rows = await auditSince(mark);
    expect(rows.filter((x) => x.event === 'users.attributes.write' && x.correlationId === answers.find((a) => a.status === 200)!.body.request.correlationId)).toHaveLength(1);
    expect(rows.filter((x) => x.event === 'request.executed')).toHaveLength(1);
    expect((await readAttrs(T2, ['description'])).description).toBe('raced');
  });

  it('reject needs a comment; rejected requests do not execute', async () => {
    const c = await request(helpdesk, 'users.disable', guids['t4-user1']);
    const id = c.body.id;
    expect((await approver.post(`/api/approvals/${id}/reject`, {})).status).toBe(400);
    const byRequester = await helpdesk.post(`/api/approvals/${id}/reject`, { comment: 'no' });
    expect({ status: byRequester.status, code: byRequester.body.code }).toEqual({ status: 403, code: 'self_approval' });
    const mark = await auditMark();
    const r = await approver.post(`/api/approvals/${id}/reject`, { comment: 'not without a call to the user' });
    expect(r.status).toBe(200);
    expect(r.body.request).toMatchObject({ state: 'rejected', comment: 'not without a call to the user', closedBy: { username: 'op-approver' } });
    expect((await auditSince(mark)).find((x) => x.event === 'request.rejected')).toMatchObject({ outcome: 'success', details: { comment: 'not without a call to the user' } });
    expect(hooksFor(id, 'approval_decided')).toHaveLength(1);
    await stepUp(approver, 'op-approver');
    expect((await approver.post(`/api/approvals/${id}/approve`)).status).toBe(409);
    expect((await uac(T1)) & 2).toBe(0);
  });

  it('cancel by the requester only, pending only', async () => {
    const c = await request(helpdesk, 'users.disable', guids['t4-user1']);
    const id = c.body.id;
    let mark = await auditMark();
    const other = await approver.post(`/api/approvals/${id}/cancel`);
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 403, code: 'not_requester' });
    expect((await auditSince(mark)).find((x) => x.event === 'request.cancelled')).toMatchObject({ outcome: 'denied', reason: 'not_requester' });
    mark = await auditMark();
    const ok = await helpdesk.post(`/api/approvals/${id}/cancel`);
    expect(ok.status).toBe(200);
    expect(ok.body.request.state).toBe('cancelled');
    expect((await auditSince(mark)).find((x) => x.event === 'request.cancelled')).toMatchObject({ outcome: 'success' });
    expect((await helpdesk.post(`/api/approvals/${id}/cancel`)).status).toBe(409);
  });

  it('an approver no longer named by the current settings is refused', async () => {
    const c = await request(helpdesk, 'users.disable', guids['t4-user1']);
    await putSettings(baseSettings({ delegations: { ...(baseSettings().delegations as object), 'test-appr-managed': { ...(baseSettings().delegations as any)['test-appr-managed'], approvers: { roles: [], operators: ['op-approver2'] } } } }));
    await stepUp(approver, 'op-approver');
    const r = await approver.post(`/api/approvals/${c.body.id}/approve`);
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'approver_not_allowed:not_named' });
    await putSettings(baseSettings());
    expect((await uac(T1)) & 2).toBe(0);
    await helpdesk.post(`/api/approvals/${c.body.id}/cancel`);
  });

  it('a disabled requester’s request is not executed', async () => {
    const c = await request(helpdesk, 'users.disable', guids['t4-user1']);
    const op = seedUser('op-helpdesk');
    const original = await uac(op.dn);
    const setUac = (v: number) => adminClient((x) => x.modify(op.dn, new Change({ operation: 'replace', modification: new Attribute({ type: 'userAccountControl', values: [String(v)] }) })));
    await setUac(original | 2);
    try {
      await stepUp(approver, 'op-approver');
      const mark = await auditMark();
      const r = await approver.post(`/api/approvals/${c.body.id}/approve`);
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'requester_disabled' });
      expect((await auditSince(mark)).find((x) => x.event === 'request.approved')).toMatchObject({ outcome: 'denied', reason: 'requester_disabled' });
    } finally {
      await setUac(original);
    }
    expect((await uac(T1)) & 2).toBe(0);
    await helpdesk.post(`/api/approvals/${c.body.id}/cancel`);
  });

  it('password reset through an approval: a typed password is ignored, the generated one goes to the approver once', async () => {
    const c = await request(helpdesk, 'users.password.reset', guids['t4-user1'], { mustChange: false, password: 'Typed-Secret-4711!' });
    expect(c.status).toBe(201);
    expect(c.body.parameters).toEqual({ action: 'users.password.reset', mustChange: false, unlock: false });
    await stepUp(approver, 'op-approver');
    const r = await approver.post(`/api/approvals/${c.body.id}/approve`);
    expect(r.status).toBe(200);
    expect(r.body.result.password).toMatch(/^.{20}$/);
    generated.push(r.body.result.password);
    expect(await canBind(T1, r.body.result.password)).toBe(true);
    const seen = await helpdesk.get(`/api/approvals/${c.body.id}`);
    expect(JSON.stringify(seen.body)).not.toContain(r.body.result.password);
    const item = await getRecord<any>(store, 'APPROVAL', c.body.id);
    expect(JSON.stringify(item)).not.toContain('Typed-Secret-4711!');
  });

  it('group members through an approval', async () => {
    const c = await request(helpdesk, 'groups.members.write', guids['t4-group'], { add: [guids['t4-user1']] });
    expect(c.status).toBe(201);
    await stepUp(approver, 'op-approver');
    const mark = await auditMark();
    const r = await approver.post(`/api/approvals/${c.body.id}/approve`);
    expect(r.body.request).toMatchObject({ state: 'executed', outcome: 'succeeded' });
    expect(await members(TG)).toEqual([T1]);
    expect((await auditSince(mark)).find((x) => x.event === 'groups.members.add')).toMatchObject({ outcome: 'success', correlationId: c.body.correlationId });
  });

  it('expiry: a request past its lifetime expires once, even with two runs at once', async () => {
    const c = await request(helpdesk, 'users.disable', guids['t4-user1']);
    const rec = (await getRecord<any>(store, 'APPROVAL', c.body.id))!;
    expect(await putRecord(store, 'APPROVAL', c.body.id, { ...rec.data, expiresAt: new Date(Date.now() - 1000).toISOString() }, { expectVersion: rec.version })).toBe(true);
    const lambda = new LambdaClient({ endpoint: stack.lambdaEndpoint, region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const fn = `hdc-console-${profile === 'dev' ? 'local' : 'test'}-approvalsExpiry`;
    const mark = await auditMark();
    const runs = await Promise.all([0, 1].map(() => lambda.send(new InvokeCommand({ FunctionName: fn, Payload: Buffer.from('{}') }))));
    const out = runs.map((x) => JSON.parse(Buffer.from(x.Payload!).toString()));
    expect(out.reduce((n, o) => n + o.expired, 0)).toBe(1);
    const rows = (await auditSince(mark)).filter((x) => x.event === 'request.expired');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'success', reason: 'lifetime_elapsed', details: { request: c.body.id } });
    expect((await helpdesk.get(`/api/approvals/${c.body.id}`)).body.state).toBe('expired');
    expect(hooksFor(c.body.id, 'approval_decided')).toHaveLength(1);
    expect((await uac(T1)) & 2).toBe(0);
  });
});

describe('approval settings', () => {
  it('need settings.manage and a step-up; validated; always-require applies to the super administrator', async () => {
    expect((await helpdesk.get('/api/admin/approvals/settings')).status).toBe(403);
    await stepUp(superC, 'op-super');
    const got = await superC.get('/api/admin/approvals/settings');
    expect(got.status).toBe(200);
    expect(got.body.settings).toMatchObject({ requestLifetimeDays: 7, instanceApprovalsNeeded: 1 });
    expect((await superC.put('/api/admin/approvals/settings', baseSettings({ requestLifetimeDays: 91 }))).status).toBe(400);
    expect((await superC.put('/api/admin/approvals/settings', baseSettings({ instanceApprovalsNeeded: 3 }))).status).toBe(400);
    const badDeleg = await superC.put('/api/admin/approvals/settings', baseSettings({ delegations: { nope: { requiresApproval: ['users.unlock'], approvers: { roles: [], operators: [] }, approvalsNeeded: 1 } } }));
    expect({ status: badDeleg.status, code: badDeleg.body.code }).toEqual({ status: 400, code: 'delegation_not_found' });

    await putSettings(baseSettings({ alwaysRequire: ['users.disable'] }));
    const r = await superC.post(`/api/users/${guids['t4-user1']}/disable`, {});
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'approval_required' });
    // the request goes to the instance approvers: none named, so the Super administrators
    const c = await request(approver, 'users.disable', guids['t4-user1']);
    expect(c.status).toBe(201);
    expect(c.body.approvers).toEqual({ roles: ['super-administrator'], operators: [] });
    const ok = await superC.post(`/api/approvals/${c.body.id}/approve`);
    expect(ok.body.request).toMatchObject({ state: 'executed', outcome: 'succeeded' });
    expect((await uac(T1)) & 2).toBe(2);
    await putSettings(baseSettings());
    expect((await approver.post(`/api/users/${guids['t4-user1']}/enable`, {})).status).toBe(200);
  });
});

describe('secrets', () => {
  it('a generated password never reaches a log, an audit row, a database item; the channel URL and secret neither', async () => {
    expect(generated.length).toBeGreaterThanOrEqual(2);
    const needles = [...generated, hookSecret, hookToken, 'Typed-Secret-4711!'];
    await sleep(500);
    const log = fs.readFileSync(path.join(RUN_DIR, `${profile}-offline.log`), 'utf8');
    for (const n of needles) expect(log.includes(n)).toBe(false);
    const rows = await auditSince(0);
    const text = JSON.stringify(rows);
    for (const n of needles) expect(text.includes(n)).toBe(false);
    let start: Record<string, unknown> | undefined;
    do {
      const page = await store.scan({ ExclusiveStartKey: start });
      const items = JSON.stringify(page.Items ?? []);
      for (const n of needles) expect(items.includes(n)).toBe(false);
      start = page.LastEvaluatedKey;
    } while (start);
  });
});
