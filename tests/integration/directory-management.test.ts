import fs from 'node:fs';
import { Attribute, Change, Client } from 'ldapts';
import type { AuditRow } from '../../lib/audit';
import { actorOf } from '../../lib/authz/engine';
import { changeAuthz, listDelegations, listRoles, putDelegation, putRole, rightsFrom } from '../../lib/authz/rights';
import { moveUser, renameUser } from '../../lib/actions';
import { currentRightsModels, delegationExportStatus, lapsRightsModel, resolveRightsModel, writeRightsModel, type RightsModel } from '../../lib/delegation';
import { guidFromBuffer } from '../../lib/directory/guid';
import { withAddedAces } from '../../lib/directory/security-descriptor';
import type { Directory } from '../../lib/directory';
import { createRuntime, decisionContext } from '../../lib/runtime';
import { readSettings } from '../../lib/setup/settings';
import { seedDirectory } from '../../local/seed-app';
import type { ConsoleClient } from '../../local/console-client';
import { stepUpByCode, auditMark, auditSince, seedUser, signedIn, stack, store } from '../support/stack';

// Moves, renames and groups (console spec) through the real routes against the Samba directory,
// with the write account holding exactly the exported rights model: applied here through LDAP
// (the ACEs the delegation script would write), checked with the write account itself (a
// delegated operation works, one step outside the model fails), and removed again at the end
// (original security descriptors restored). Every refusal: its code, its audit row, nothing changed.
// Test objects (dm-*) are created here and deleted at the end, wherever the tests left them.

const BASE = stack.directory.baseDn;
const M_USERS = `OU=Users,OU=Managed,${BASE}`;
const M_GROUPS = `OU=Groups,OU=Managed,${BASE}`;
const B_USERS = `OU=Users,OU=Branch,${BASE}`;
const BRANCH = `OU=Branch,${BASE}`;
const TIER0 = `OU=Tier0,OU=Servers,OU=Managed,${BASE}`;
const CONTAINER = `CN=dm-container,OU=Managed,${BASE}`;
const UNMANAGED = `OU=Unmanaged,${BASE}`;
const ids: Record<string, string> = {};
/** The delegations local/seed-app.ts creates (their LAPS rights are the ones local/directory/dc.sh grants). */
const SEEDED_DELEGATIONS = ['helpdesk-managed', 'helpdesk-branch', 'auditor-managed', 'approver-managed'];
const ouGuid: Record<string, string> = {};

// ---- the directory as Administrator (setup, checks, restore)
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
const adminCreds = { user: stack.directory.admin.upn, password: stack.directory.admin.password };
const writeCreds = { user: stack.directory.technicalAccounts.write.upn, password: stack.directory.technicalAccounts.write.password };
const bySamOn = (sam: string, url: string) =>
  admin(async (c) => (await c.search(BASE, { filter: `(sAMAccountName=${sam})`, attributes: ['distinguishedName', 'objectGUID', 'cn', 'displayName', 'userPrincipalName', 'managedBy', 'info', 'member'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0] as Record<string, any> | undefined, url);
/** An entry as comparable text: multi-valued attributes (member) sorted, since each DC returns its own order. */
const canonical = (e: Record<string, any> | undefined) =>
  e === undefined ? 'none' : JSON.stringify(Object.keys(e).sort().map((k) => [k.toLowerCase(), Array.isArray(e[k]) ? [...e[k]].map(String).sort() : Buffer.isBuffer(e[k]) ? e[k].toString('hex') : e[k]]));
/**
 * The object once every DC holds the same: the console writes to the first DC it can use (after
 * the failover tests dc1 can sit in its cooldown and dc2 takes the write) and the DCs replicate
 * within seconds (notify interval 1 s), so a check waits for them to agree rather than read one.
 * A multi-valued attribute comes back in each DC's own order: compared sorted.
 */
async function bySam(sam: string): Promise<Record<string, any> | undefined> {
  let seen: Array<Record<string, any> | undefined> = [];
  for (let i = 0; i < 60; i++) {
    seen = await Promise.all(stack.directory.dcs.map((dc) => bySamOn(sam, dc.url)));
    if (seen.every((x) => canonical(x) === canonical(seen[0]))) return seen[0];
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the DCs still disagree on ${sam} after 30 s: ${JSON.stringify(seen.map(canonical))}`);
}
const dnOf = async (sam: string) => (await bySam(sam))?.dn;
const guidOfDn = (dn: string) => admin(async (c) => guidFromBuffer((await c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0].objectGUID as Buffer));

async function createUser(ou: string, sam: string, extra: Record<string, string> = {}) {
  const dn = `CN=${sam},${ou}`;
  const old = await dnOf(sam);
  await admin(async (c) => {
    if (old) await c.del(old);
    // an earlier run may have left the object at this DN under another sAMAccountName (a login rename)
    if (old?.toLowerCase() !== dn.toLowerCase()) await c.del(dn).catch(() => undefined);
    await c.add(dn, { objectClass: ['top', 'person', 'organizationalPerson', 'user'], sAMAccountName: sam, userPrincipalName: `${sam}@${stack.directory.domain}`, displayName: sam, userAccountControl: '514', ...extra });
  });
  ids[sam] = await guidOfDn(dn);
  await bySam(sam); // on every DC before the console is asked about it
}
async function removeBySam(sam: string) {
  const dn = await dnOf(sam);
  if (dn) await admin((c) => c.del(dn));
}

// ---- the rights model applied to the directory (and removed)
let dir: Directory;
let writeModel: RightsModel;
const originalSds = new Map<string, Buffer>();
async function applyModel(model: RightsModel) {
  const resolved = await resolveRightsModel(dir, model);
  for (const ou of resolved.ous) {
    const sd = (await dir.readSecurityDescriptor(ou.dn))!;
    if (!originalSds.has(ou.dn)) originalSds.set(ou.dn, sd);
    await dir.writeSecurityDescriptor(ou.dn, withAddedAces(sd, ou.aces.map((a) => a.ace)), { as: adminCreds });
  }
}
async function restoreSds() {
  for (const [dn, sd] of originalSds) await dir.writeSecurityDescriptor(dn, sd, { as: adminCreds });
  originalSds.clear();
}

// ---- operators
let superC: ConsoleClient;
let branchC: ConsoleClient;
// one code step-up per operator, renewed before the 300 s window closes (tests/support/stack)
const stepUp = stepUpByCode;
const rowsOf = (rows: AuditRow[], event: string) => rows.filter((r) => r.event === event);

beforeAll(async () => {
  dir = seedDirectory(stack.directory);
  for (const dn of [M_USERS, M_GROUPS, B_USERS, BRANCH, TIER0, UNMANAGED]) ouGuid[dn] = await guidOfDn(dn);
  await createUser(M_USERS, 'dm-user1', { givenName: 'Dora', sn: 'Mover' });
  await createUser(B_USERS, 'dm-branch1');
  for (const g of ['dm-group1', 'dm-group2', 'dm-owned']) await removeBySam(g);
  await admin(async (c) => {
    await c.del(CONTAINER).catch(() => undefined);
    await c.add(CONTAINER, { objectClass: ['top', 'container'] });
  });
  ouGuid[CONTAINER] = await guidOfDn(CONTAINER);
  // op-branch: moves, renames and group management on OU=Branch only (a temporary delegation)
  await putRole(store, { id: 'dm-branch-manager', name: 'DM branch manager', permissions: ['users.read', 'users.move', 'users.rename', 'users.rename.login', 'groups.read', 'groups.create', 'groups.attributes.write', 'groups.owned.members.write'] });
  const scope = [await dir.resolveOu(BRANCH)];
  const opBranch = (await dir.principalFacts(seedUser('op-branch').dn))!;
  await putDelegation(store, { id: 'dm-branch-manager', roleId: 'dm-branch-manager', scope, assignees: [{ kind: 'user', guid: opBranch.guid, sid: opBranch.sid, name: 'op-branch' }] });
  const { settings } = (await readSettings(store))!;
  writeModel = writeRightsModel(settings, await listRoles(store), await listDelegations(store));
  superC = await signedIn('op-super');
  branchC = await signedIn('op-branch');
}, 120_000);

afterAll(async () => {
  for (const sam of ['dm-user1', 'dm-user1x', 'dm-branch1', 'dm-branch1x', 'dm-group1', 'dm-group2', 'dm-owned']) await removeBySam(sam).catch(() => undefined);
  await admin((c) => c.del(CONTAINER)).catch(() => undefined);
  await restoreSds();
  await changeAuthz(store, () => ({ writes: [{ delete: 'delegation', id: 'dm-branch-manager' }, { delete: 'role', id: 'dm-branch-manager' }], result: undefined }));
  dir?.stop();
}, 120_000);

describe('the exported rights model on the real directory', () => {
  it('is reported missing, then works for the write account once applied, and nothing outside it does', async () => {
    const before = await delegationExportStatus(dir, writeModel);
    const moveMissing = before.missing.some((m) => m.ace.startsWith('(OA;CI;CC;user;'));
    if (moveMissing) {
      // without the model's rights the write account cannot move (the right comes from the model)
      await expect(dir.moveObject(`CN=dm-user1,${M_USERS}`, 'CN=dm-user1', B_USERS, { as: writeCreds })).rejects.toMatchObject({ kind: 'denied' });
      expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    }
    await applyModel(writeModel);
    const after = await delegationExportStatus(dir, writeModel);
    expect(after.missing).toEqual([]);
    expect(after.upToDate).toBe(true);

    // delegated operations with the write account itself: move there and back, create and delete a group
    await dir.moveObject(`CN=dm-user1,${M_USERS}`, 'CN=dm-user1', B_USERS, { as: writeCreds });
    await dir.moveObject(`CN=dm-user1,${B_USERS}`, 'CN=dm-user1', M_USERS, { as: writeCreds });
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    await dir.addObject(`CN=dm-group2,${M_GROUPS}`, { objectClass: ['top', 'group'], sAMAccountName: 'dm-group2', groupType: String(-2147483646) }, { as: writeCreds });
    await dir.deleteObject(`CN=dm-group2,${M_GROUPS}`, { as: writeCreds });
    // one step outside: a computer object (no Create computer), an attribute not in the model,
    // deleting the OU's child container (no Delete child, no Delete on containers)
    await expect(dir.addObject(`CN=DM-PC,${M_USERS}`, { objectClass: ['top', 'computer'], sAMAccountName: 'DM-PC$', userAccountControl: '4096' }, { as: writeCreds })).rejects.toMatchObject({ kind: 'denied' });
    await expect(dir.modify(`CN=dm-user1,${M_USERS}`, [{ operation: 'replace', attribute: 'info', values: ['x'] }], { as: writeCreds })).rejects.toMatchObject({ kind: 'denied' });
    await expect(dir.deleteObject(CONTAINER, { as: writeCreds })).rejects.toMatchObject({ kind: 'denied' });
    // and never outside the scope OUs: moving into OU=Unmanaged has no Create user there
    await expect(dir.moveObject(`CN=dm-user1,${M_USERS}`, 'CN=dm-user1', UNMANAGED, { as: writeCreds })).rejects.toMatchObject({ kind: 'denied' });
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
  }, 60_000);

  it('the LAPS model of the seeded delegations matches the rights the local directory grants the LAPS account', async () => {
    const { settings } = (await readSettings(store))!;
    // the seeded delegations only: other test files add (and remove) delegations of their own
    const seeded = (await listDelegations(store)).filter((d) => SEEDED_DELEGATIONS.includes(d.id));
    const laps = lapsRightsModel(settings, await listRoles(store), seeded, { legacySchema: true, otherAccounts: [settings.readAccount.user, settings.writeAccount.user] });
    const status = await delegationExportStatus(dir, laps);
    expect(status.missing).toEqual([]);
    expect(laps.ous.map((o) => o.ou.dn).sort()).toEqual(expect.arrayContaining([`OU=Managed,${BASE}`, BRANCH]));
  });

  it('GET /api/admin/delegation-export answers both models, their scripts and their status', async () => {
    const r = await superC.get('/api/admin/delegation-export');
    expect(r.status).toBe(200);
    // the expected status is the directory's against the models of the delegations as they are now
    const { settings } = (await readSettings(store))!;
    const models = await currentRightsModels(store, settings, dir);
    const write = r.body.exports.find((e: { kind: string }) => e.kind === 'write');
    expect(write.identity).toBe(stack.directory.technicalAccounts.write.upn);
    expect(write.status).toEqual(await delegationExportStatus(dir, models.write));
    expect(write.status.missing.filter((m: { ou: string }) => writeModel.ous.some((o) => o.ou.dn === m.ou))).toEqual([]);
    expect(write.script).toContain('[Parameter(Mandatory = $true)][string[]]$ManagedOu');
    expect(r.body.exports.find((e: { kind: string }) => e.kind === 'laps').status).toEqual(await delegationExportStatus(dir, models.laps!));
    const ps1 = await superC.get('/api/admin/delegation-export/laps');
    expect(ps1.status).toBe(200);
    expect(ps1.text).toContain("'msLAPS-EncryptedPassword'");
    expect((await branchC.get('/api/admin/delegation-export')).status).toBe(403);
  });
});

describe('users.move', () => {
  it('moves a user between managed OUs and back, audited with from and to', async () => {
    const mark = await auditMark();
    let r = await superC.post(`/api/users/${ids['dm-user1']}/move`, { destination: ouGuid[B_USERS], ticket: 'T-MOVE-1' });
    expect(r.status).toBe(200);
    expect(r.body.dn).toBe(`CN=dm-user1,${B_USERS}`);
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${B_USERS}`);
    r = await superC.post(`/api/users/${ids['dm-user1']}/move`, { destination: M_USERS });
    expect(r.status).toBe(200);
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    const rows = rowsOf(await auditSince(mark), 'users.move');
    expect(rows.map((x) => x.outcome)).toEqual(['success', 'success']);
    expect(rows[0]).toMatchObject({ ticket: 'T-MOVE-1', target: { id: ids['dm-user1'], dn: `CN=dm-user1,${B_USERS}` }, details: { from: M_USERS, to: B_USERS } });
  });

  it.each([
    ['a Tier 0 OU', () => ouGuid[TIER0], 'destination:never_manageable:tier0_ou'],
    ['a container that is not an OU', () => ouGuid[CONTAINER], 'destination:never_manageable:not_an_ou'],
    ['an OU outside the managed OUs', () => ouGuid[UNMANAGED], 'destination:out_of_scope'],
    ['an unknown OU', () => '00000000-0000-4000-8000-000000000000', 'destination:not_found'],
  ])('refuses %s as destination: 404, audited, the user stays', async (_, dest, reason) => {
    const mark = await auditMark();
    const r = await superC.post(`/api/users/${ids['dm-user1']}/move`, { destination: dest() });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'not_found' });
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    expect(rowsOf(await auditSince(mark), 'users.move')).toEqual([expect.objectContaining({ outcome: 'denied', reason })]);
  });

  it.each([
    ['admin-adam (adminCount=1)', 'admin-adam'],
    ['da-dana (Domain Admins)', 'da-dana'],
  ])('never touches %s: 404, audited, not moved', async (_, sam) => {
    const mark = await auditMark();
    const u = seedUser(sam);
    const r = await superC.post(`/api/users/${u.guid}/move`, { destination: ouGuid[B_USERS] });
    expect(r.status).toBe(404);
    expect(await dnOf(sam)).toBe(u.dn);
    const rows = await auditSince(mark);
    expect(rowsOf(rows, 'users.move')).toEqual([expect.objectContaining({ outcome: 'denied', reason: 'not_found' })]);
    expect(rowsOf(rows, 'authz.decision')[0].reason).toMatch(/^never_manageable:/);
  });

  it('an operator scoped to OU=Branch cannot move a user out of it nor take one in (404, audited)', async () => {
    const mark = await auditMark();
    let r = await branchC.post(`/api/users/${ids['dm-branch1']}/move`, { destination: ouGuid[M_USERS] });
    expect(r.status).toBe(404);
    r = await branchC.post(`/api/users/${ids['dm-user1']}/move`, { destination: ouGuid[B_USERS] });
    expect(r.status).toBe(404);
    expect(await dnOf('dm-branch1')).toBe(`CN=dm-branch1,${B_USERS}`);
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    expect(rowsOf(await auditSince(mark), 'users.move').map((x) => [x.outcome, x.reason])).toEqual([
      ['denied', 'destination:out_of_scope'],
      ['denied', 'not_found'],
    ]);
  });

  it('an operator without users.move is refused by the route (403)', async () => {
    const helpdesk = await signedIn('op-helpdesk');
    const r = await helpdesk.post(`/api/users/${ids['dm-user1']}/move`, { destination: ouGuid[B_USERS] });
    expect(r.status).toBe(403);
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
  });

  it('nobody moves or renames their own account (403 own_account, audited; the engine decides it)', async () => {
    // the decision in-process on the stack's store and directory: an operator whose account is dm-user1
    const rt = createRuntime({ env: { HDC_MASTER_KEY_FILE: stack.masterKeyFile, ...stack.stores.console }, store });
    const ctx = await decisionContext(rt);
    const me = (await dir.principalFacts(`CN=dm-user1,${M_USERS}`))!;
    const rights = rightsFrom({ ...ctx.settings, superAdministrators: [me.guid] }, { guid: me.guid, sid: me.sid, groupSids: me.groupSids }, [], []);
    const actor = actorOf({ operator: { guid: me.guid, username: 'dm-user1', provider: 'ad' }, rights, sourceIp: '127.0.0.1' });
    const mark = await auditMark();
    await expect(moveUser(ctx, actor, me.guid, ouGuid[B_USERS], { correlationId: 'dm-own-1' })).rejects.toMatchObject({ status: 403, code: 'own_account' });
    await expect(renameUser(ctx, actor, me.guid, { displayName: 'Me' }, { correlationId: 'dm-own-2' })).rejects.toMatchObject({ status: 403, code: 'own_account' });
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    const rows = await auditSince(mark);
    expect(rowsOf(rows, 'users.move')).toEqual([expect.objectContaining({ outcome: 'denied', reason: 'own_account' })]);
    expect(rowsOf(rows, 'users.rename')).toEqual([expect.objectContaining({ outcome: 'denied', reason: 'own_account' })]);
  });
});

describe('users.rename and users.rename.login', () => {
  it('renames cn, displayName, givenName and sn (old and new values audited), and back', async () => {
    const mark = await auditMark();
    let r = await superC.post(`/api/users/${ids['dm-user1']}/rename`, { cn: 'dm-user1, renamed', displayName: 'Dora Renamed', givenName: 'Dorothea', sn: null });
    expect(r.status).toBe(200);
    expect(r.body.dn).toBe(`CN=dm-user1\\, renamed,${M_USERS}`);
    const e = (await bySam('dm-user1'))!;
    expect([e.cn, e.displayName]).toEqual(['dm-user1, renamed', 'Dora Renamed']);
    const row = rowsOf(await auditSince(mark), 'users.rename')[0];
    expect(row).toMatchObject({ outcome: 'success', details: { old: { cn: 'dm-user1', displayName: 'dm-user1', givenName: 'Dora', sn: 'Mover' }, new: { cn: 'dm-user1, renamed', displayName: 'Dora Renamed', givenName: 'Dorothea', sn: null } } });
    r = await superC.post(`/api/users/${ids['dm-user1']}/rename`, { cn: 'dm-user1', displayName: 'dm-user1', givenName: 'Dora', sn: 'Mover' });
    expect(r.status).toBe(200);
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
  });

  it('refuses a cn the OU already holds (409 name_taken, audited failed, nothing changed) and never renames a privileged account', async () => {
    const mark = await auditMark();
    let r = await superC.post(`/api/users/${ids['dm-user1']}/rename`, { cn: 'alice', displayName: 'changed?' });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('name_taken');
    const e = (await bySam('dm-user1'))!;
    expect([e.dn, e.displayName]).toEqual([`CN=dm-user1,${M_USERS}`, 'dm-user1']);
    r = await superC.post(`/api/users/${seedUser('admin-adam').guid}/rename`, { displayName: 'x' });
    expect(r.status).toBe(404);
    expect(rowsOf(await auditSince(mark), 'users.rename').map((x) => [x.outcome, x.reason])).toEqual([
      ['failed', 'name_taken'],
      ['denied', 'not_found'],
    ]);
  });

  it('changes the sign-in names with a step-up, checks them unique in the domain, and back', async () => {
    // a session of its own, never stepped up (an earlier test file may have stepped up op-branch's saved one)
    const unstepped = await signedIn('op-branch', { fresh: true });
    expect((await unstepped.get('/api/auth/me')).body.stepUpAt ?? null).toBeNull();
    const noStep = await unstepped.post(`/api/users/${ids['dm-branch1']}/rename-login`, { sAMAccountName: 'dm-branch1x' });
    expect([noStep.status, noStep.body.code]).toEqual([403, 'reauth_required']);
    expect(await dnOf('dm-branch1')).toBe(`CN=dm-branch1,${B_USERS}`);
    expect(await dnOf('dm-branch1x')).toBeUndefined();
    await stepUp(superC, 'op-super');
    const mark = await auditMark();
    const upn = `dm-user1x@${stack.directory.domain}`;
    let r = await superC.post(`/api/users/${ids['dm-user1']}/rename-login`, { sAMAccountName: 'dm-user1x', userPrincipalName: upn });
    expect(r.status).toBe(200);
    expect((await bySam('dm-user1x'))?.userPrincipalName).toBe(upn);
    for (const [body, code, status] of [
      [{ sAMAccountName: 'alice' }, 'login_taken', 409],
      [{ sAMAccountName: 'WS-STD-01$' }, 'login_taken', 409], // computers share the sAMAccountName space
      [{ sAMAccountName: 'bad/name' }, 'validation_failed', 400],
      [{ userPrincipalName: `bob@${stack.directory.domain}` }, 'login_taken', 409],
      [{ userPrincipalName: 'dm-user1x@elsewhere.example' }, 'upn_suffix_unknown', 400],
    ] as const) {
      const x = await superC.post(`/api/users/${ids['dm-user1']}/rename-login`, body);
      expect([x.status, x.body.code]).toEqual([status, code]);
    }
    expect((await bySam('dm-user1x'))?.userPrincipalName).toBe(upn);
    r = await superC.post(`/api/users/${ids['dm-user1']}/rename-login`, { sAMAccountName: 'dm-user1', userPrincipalName: `dm-user1@${stack.directory.domain}` });
    expect(r.status).toBe(200);
    expect(await dnOf('dm-user1')).toBe(`CN=dm-user1,${M_USERS}`);
    const rows = rowsOf(await auditSince(mark), 'users.rename.login');
    expect(rows.map((x) => [x.outcome, x.reason])).toEqual([
      ['success', 'succeeded'],
      ['denied', 'login_taken'],
      ['denied', 'login_taken'],
      ['denied', 'login_taken'],
      ['denied', 'upn_suffix_unknown'],
      ['success', 'succeeded'],
    ]);
    expect(rows[0].details).toMatchObject({ old: { sAMAccountName: 'dm-user1' }, new: { sAMAccountName: 'dm-user1x', userPrincipalName: upn } });
  });
});

describe('groups', () => {
  it('creates a group in an OU of the scope, refuses a taken name and OUs that are never touched', async () => {
    const mark = await auditMark();
    const r = await superC.post('/api/groups', { ou: ouGuid[M_GROUPS], name: 'dm-group1', description: 'directory management test' });
    expect(r.status).toBe(201);
    ids['dm-group1'] = r.body.id;
    expect(await dnOf('dm-group1')).toBe(`CN=dm-group1,${M_GROUPS}`);
    expect((await superC.post('/api/groups', { ou: M_GROUPS, name: 'dm-group1' })).status).toBe(409);
    for (const ou of [ouGuid[TIER0], ouGuid[CONTAINER], ouGuid[UNMANAGED]]) expect((await superC.post('/api/groups', { ou, name: 'dm-group2' })).status).toBe(404);
    expect(await dnOf('dm-group2')).toBeUndefined();
    // op-branch holds groups.create on OU=Branch only
    expect((await branchC.post('/api/groups', { ou: ouGuid[M_GROUPS], name: 'dm-group2' })).status).toBe(404);
    expect(rowsOf(await auditSince(mark), 'groups.create').map((x) => [x.outcome, x.reason])).toEqual([
      ['success', 'succeeded'],
      ['denied', 'name_taken'],
      ['denied', 'ou:never_manageable:tier0_ou'],
      ['denied', 'ou:never_manageable:not_an_ou'],
      ['denied', 'ou:out_of_scope'],
      ['denied', 'ou:out_of_scope'],
    ]);
  });

  it('writes description, managedBy, mail and info; never the operator as manager, never a privileged manager', async () => {
    const mark = await auditMark();
    let r = await superC.put(`/api/groups/${ids['dm-group1']}/attributes`, { attributes: { description: 'new', managedBy: ids['dm-user1'], mail: 'dm-group1@corp.example.test', info: 'notes' } });
    expect(r.status).toBe(200);
    const g = (await bySam('dm-group1'))!;
    expect([g.managedBy, g.info]).toEqual([`CN=dm-user1,${M_USERS}`, 'notes']);
    r = await superC.put(`/api/groups/${ids['dm-group1']}/attributes`, { attributes: { managedBy: seedUser('op-super').guid } });
    expect([r.status, r.body.code]).toEqual([403, 'own_account']);
    r = await superC.put(`/api/groups/${ids['dm-group1']}/attributes`, { attributes: { managedBy: seedUser('admin-adam').guid } });
    expect([r.status, r.body.code]).toEqual([400, 'manager_not_allowed']);
    r = await superC.put(`/api/groups/${stack.directory.groups.find((x) => x.name === 'GG-Nested-Sensitive')!.guid}/attributes`, { attributes: { info: 'x' } });
    expect(r.status).toBe(404);
    expect((await bySam('dm-group1'))!.managedBy).toBe(`CN=dm-user1,${M_USERS}`);
    const rows = rowsOf(await auditSince(mark), 'groups.attributes.write');
    expect(rows.map((x) => [x.outcome, x.reason])).toEqual([
      ['success', 'succeeded'],
      ['denied', 'own_account'],
      ['denied', 'manager_not_allowed'],
      ['denied', 'not_found'],
    ]);
    expect(rows[0].details).toMatchObject({ old: { description: 'directory management test', info: null }, new: { info: 'notes', managedBy: `CN=dm-user1,${M_USERS}` } });
  });

  it('owned groups: their manager changes members; anyone else is refused (403 not_group_owner)', async () => {
    const created = await superC.post('/api/groups', { ou: ouGuid[BRANCH], name: 'dm-owned' });
    expect(created.status).toBe(201);
    ids['dm-owned'] = created.body.id;
    const mark = await auditMark();
    let r = await branchC.post(`/api/groups/${ids['dm-owned']}/owned-members`, { add: [ids['dm-branch1']] });
    expect([r.status, r.body.code]).toEqual([403, 'forbidden']);
    // op-branch becomes its manager (an administrator's change: nobody makes themselves owner through the console)
    await bySam('dm-owned'); // created by the console: on every DC before dc1 is changed
    await admin((c) => c.modify(`CN=dm-owned,${BRANCH}`, new Change({ operation: 'replace', modification: new Attribute({ type: 'managedBy', values: [seedUser('op-branch').dn] }) })));
    await bySam('dm-owned');
    r = await branchC.post(`/api/groups/${ids['dm-owned']}/owned-members`, { add: [ids['dm-branch1']] });
    expect(r.status).toBe(200);
    expect([(await bySam('dm-owned'))!.member].flat()).toEqual([`CN=dm-branch1,${B_USERS}`]);
    const rows = await auditSince(mark);
    expect(rows.filter((x) => x.event === 'authz.decision' && (x.details as { action?: string }).action === 'groups.owned.members.write').map((x) => x.reason)).toEqual(['not_group_owner', 'delegation:dm-branch-manager']);
    expect(rowsOf(rows, 'groups.members.add').map((x) => [x.outcome, (x.details as { action?: string }).action])).toEqual([
      ['denied', 'groups.owned.members.write'],
      ['success', 'groups.owned.members.write'],
    ]);
  });

  it('deletes a standard group with members only after they were confirmed; step-up; never a protected or privileged group', async () => {
    await stepUp(superC, 'op-super');
    await bySam('dm-group1');
    await admin((c) => c.modify(`CN=dm-group1,${M_GROUPS}`, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [`CN=dm-user1,${M_USERS}`] }) })));
    await bySam('dm-group1');
    const mark = await auditMark();
    const del = (id: string, body?: unknown) => superC.request('DELETE', `/api/groups/${id}`, body);
    let r = await del(ids['dm-group1']);
    expect([r.status, r.body.code, r.body.count]).toEqual([409, 'members_not_confirmed', 1]);
    expect(await dnOf('dm-group1')).toBeDefined();
    const seen = await superC.get(`/api/groups/${ids['dm-group1']}/members`);
    expect(seen.body.items.map((m: { name: string }) => m.name)).toEqual(['dm-user1']);
    expect(seen.body.confirmMembers).toBe(r.body.confirmMembers);
    r = await del(ids['dm-group1'], { confirmMembers: seen.body.confirmMembers, ticket: 'T-DEL-1' });
    expect([r.status, r.body]).toEqual([200, { outcome: 'succeeded' }]);
    expect(await dnOf('dm-group1')).toBeUndefined();
    const vip = stack.directory.groups.find((x) => x.name === 'GG-VIP')!;
    r = await del(vip.guid);
    expect([r.status, r.body.code]).toEqual([403, 'forbidden']);
    const domainAdmins = await guidOfDn(`CN=Domain Admins,CN=Users,${BASE}`);
    expect((await del(domainAdmins)).status).toBe(404);
    expect(await dnOf('GG-VIP')).toBe(vip.dn);
    const rows = rowsOf(await auditSince(mark), 'groups.delete');
    expect(rows.map((x) => [x.outcome, x.reason])).toEqual([
      ['denied', 'members_not_confirmed'],
      ['success', 'succeeded'],
      ['denied', 'not_a_standard_group'],
      ['denied', 'not_found'],
    ]);
    expect(rows[1]).toMatchObject({ ticket: 'T-DEL-1', details: { members: 1, memberDns: [`CN=dm-user1,${M_USERS}`] } });
  });
});
