import { readApprovalSettings } from '../approvals/settings';
import type { AuditActor } from '../audit';
import type { Directory } from '../directory';
import { dnOfObjectGuid, resolvePrincipal } from '../directory/principals';
import { badRequest, conflict, forbidden, isApiError, notFound, unauthorized } from '../errors';
import type { RouteContext } from '../http/route';
import type { ConsoleRuntime } from '../runtime';
import type { InstanceSettings, ManagedOu } from '../setup/settings';
import { decisionContext } from '../runtime';
import { currentClassification, isAtOrBelow } from './classify';
import { PERMISSIONS, SUPER_ADMINISTRATOR_ROLE } from './permissions';
import {
  changeAuthz,
  checkRoleName,
  delegationsUsing,
  ID_PATTERN,
  isBuiltInRoleId,
  readAuthzState,
  validateRole,
  type Assignee,
  type AuthzChange,
  type AuthzState,
  type AuthzWrite,
  type Delegation,
  type Role,
} from './rights';
import { newRightsOf, type NewRight } from './widening';

// Administration of roles and delegations (settings.manage + step-up at the route). Every change
// and every refusal decided here is audited: roles.saved, roles.deleted, delegations.saved,
// delegations.deleted, with the old and new values. A save that would widen the rights of the
// operator making it is refused `approval_required` (decision 26): a second administrator
// approves it through an approval request (lib/approvals/admin-changes.ts).

export interface AdminContext {
  rt: ConsoleRuntime;
  actor: AuditActor;
  correlationId: string;
  /** the signed-in operator (absent for the admin CLI): their own rights may not be widened by their change */
  operator?: { guid: string };
  /** the approval request whose last approval runs this change */
  requestId?: string;
}

/** The actor of an admin route: the signed-in operator. */
export const adminContext = ({ rt, operator, sourceIp, correlationId }: RouteContext): AdminContext => ({
  rt,
  actor: { id: operator?.guid, name: operator?.username, provider: operator?.provider, ip: sourceIp },
  correlationId,
  ...(operator ? { operator: { guid: operator.guid } } : {}),
});

const requestDetails = (ctx: AdminContext) => (ctx.requestId ? { request: ctx.requestId } : {});

/** Run a change; a refusal it decides is audited under the same event, outcome denied. */
export async function audited<T>(ctx: AdminContext, event: string, target: { id: string; kind: string }, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isApiError(e)) {
      await ctx.rt.audit.append({ event, outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: { ...e.details, ...requestDetails(ctx) } });
    }
    throw e;
  }
}

// ---- self-widening (decision 26)

/** What `writes` would add to this operator's own rights, on fresh facts (group SIDs read now by GUID). */
export async function rightsAddedFor(rt: ConsoleRuntime, operatorGuid: string) {
  const settings = await rt.settings();
  if (!settings) throw conflict('not_configured');
  const dc = await decisionContext(rt);
  const dn = await dc.dir.dnOfGuid(operatorGuid);
  const facts = dn ? await dc.dir.principalFacts(dn) : undefined;
  if (!facts || facts.userAccountControl & 0x2) throw unauthorized('session_revoked');
  const { settings: approvals } = await readApprovalSettings(rt.store);
  return (state: AuthzState, writes: AuthzWrite[]): Promise<NewRight[]> => newRightsOf(dc, settings, facts, state, writes, approvals);
}

/** Refuse a change that widens the caller's own rights (`403 approval_required`, naming the new rights). */
async function selfWideningGuard(ctx: AdminContext) {
  if (!ctx.operator) return async () => undefined; // the admin CLI: host access, not an operator
  const added = await rightsAddedFor(ctx.rt, ctx.operator.guid);
  return async (state: AuthzState, writes: AuthzWrite[]) => {
    const widens = await added(state, writes);
    if (widens.length) throw forbidden('approval_required', { widens });
  };
}

/** Decide a change on the current state, refusing a self-widening one, then commit it. */
async function commitGuarded<T>(ctx: AdminContext, decide: (s: AuthzState) => AuthzChange<T>): Promise<T> {
  const guard = await selfWideningGuard(ctx);
  return changeAuthz(ctx.rt.store, async (s) => {
    const change = decide(s);
    await guard(s, change.writes);
    return change;
  });
}

const versionConflict = (current: number) => conflict('version_conflict', { currentVersion: current });
function checkVersion(expected: number | undefined, current: number) {
  if (expected !== undefined && expected !== current) throw versionConflict(current);
}

// ---- roles

export const builtInRoleView = () => ({ ...SUPER_ADMINISTRATOR_ROLE, permissions: [...PERMISSIONS], builtIn: true, readOnly: true });

export async function listRolesView(rt: ConsoleRuntime) {
  const s = await readAuthzState(rt.store);
  const custom = [...s.roles.values()]
    .map((r) => ({ ...r.data, builtIn: false, readOnly: false, version: r.version, delegations: delegationsUsing(s, r.data.id) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { roles: [builtInRoleView(), ...custom] };
}

export interface RoleInput {
  name: string;
  permissions: string[];
  /** the version the editor read (0: create only); absent: last write wins */
  version?: number;
}

/** A role as the editor saves it (the built-in one is read-only). */
export function roleFromInput(id: string, input: Omit<RoleInput, 'version'>): Role {
  if (isBuiltInRoleId(id)) throw forbidden('role_read_only', { role: id });
  return validateRole({ id, name: input.name, permissions: input.permissions });
}

/** The writes of a role save against a state: its version, a unique name; none when unchanged. */
export const roleSave = (role: Role, version?: number) => (s: AuthzState) => {
  const current = s.roles.get(role.id);
  checkVersion(version, current?.version ?? 0);
  checkRoleName(s, role);
  const unchanged = current && current.data.name === role.name && sameSet(current.data.permissions, role.permissions);
  if (unchanged) return { writes: [] as AuthzWrite[], result: { old: current.data as Role | undefined, version: current.version, changed: false } };
  return { writes: [{ put: 'role' as const, value: role, version: current?.version ?? 0 }] as AuthzWrite[], result: { old: current?.data, version: (current?.version ?? 0) + 1, changed: true } };
};

/** Create or replace a custom role (the role editor's rules, then against the current state). */
export function saveRole(ctx: AdminContext, id: string, input: RoleInput) {
  return audited(ctx, 'roles.saved', { id, kind: 'role' }, async () => {
    const role = roleFromInput(id, input);
    const out = await commitGuarded(ctx, roleSave(role, input.version));
    if (out.changed) {
      await ctx.rt.audit.append({
        event: 'roles.saved',
        outcome: 'success',
        actor: ctx.actor,
        target: { id, name: role.name, kind: 'role' },
        correlationId: ctx.correlationId,
        details: { old: out.old ?? null, new: role, ...requestDetails(ctx) },
      });
    }
    return { created: !out.old, role: { ...role, builtIn: false, readOnly: false, version: out.version } };
  });
}

/** Delete a custom role; the built-in one and a role some delegation uses are refused. */
export function deleteRole(ctx: AdminContext, id: string) {
  return audited(ctx, 'roles.deleted', { id, kind: 'role' }, async () => {
    if (isBuiltInRoleId(id)) throw forbidden('role_read_only', { role: id });
    const old = await changeAuthz(ctx.rt.store, (s) => {
      const current = s.roles.get(id);
      if (!current) throw notFound();
      const used = delegationsUsing(s, id);
      if (used.length) throw conflict('role_in_use', { delegations: used });
      return { writes: [{ delete: 'role' as const, id }], result: current.data };
    });
    await ctx.rt.audit.append({ event: 'roles.deleted', outcome: 'success', actor: ctx.actor, target: { id, name: old.name, kind: 'role' }, correlationId: ctx.correlationId, details: { old } });
  });
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

// ---- delegations

export async function listDelegationsView(rt: ConsoleRuntime) {
  const s = await readAuthzState(rt.store);
  return { delegations: [...s.delegations.values()].map((d) => delegationView(s, d.data, d.version)).sort((a, b) => a.id.localeCompare(b.id)) };
}
const delegationView = (s: AuthzState, d: Delegation, version: number) => ({ ...d, roleName: s.roles.get(d.roleId)?.data.name ?? null, version });

export interface DelegationInput {
  roleId: string;
  /** OU DNs or GUIDs */
  scope: string[];
  /** users or groups by DN, sAMAccountName or GUID */
  assignees: string[];
  version?: number;
}

const lower = (s: string) => s.toLowerCase();

/**
 * Each scope OU resolved (an OU strictly below the domain root, given by DN or GUID), inside a
 * managed OU, and not at or below a Tier 0/1 OU (nothing there is ever manageable); duplicates
 * dropped. The managed and Tier OUs are where the decisions find them (currentClassification): a
 * managed OU that cannot be found manages nothing, a Tier OU that cannot be found still protects
 * its recorded DN.
 */
export async function resolveScope(dir: Directory, settings: InstanceSettings, refs: string[]): Promise<ManagedOu[]> {
  const { managedOuDns: managed, tierOuDns: tiers } = await currentClassification(settings, [], (o) => dnOfObjectGuid(dir, o.guid));
  const out = new Map<string, ManagedOu>();
  for (const ref of refs) {
    const given = ref.trim();
    if (!given) throw badRequest('ou_not_found', { ou: given }); // an empty base would be the root DSE
    const ou = await dir.resolveOu(given);
    if (!managed.some((m) => isAtOrBelow(ou.dn, m))) throw badRequest('ou_not_managed', { ou: ou.dn });
    if (tiers.some((t) => isAtOrBelow(ou.dn, t))) throw badRequest('ou_in_tier', { ou: ou.dn });
    if (!out.has(lower(ou.guid))) out.set(lower(ou.guid), ou);
  }
  return [...out.values()];
}

/** Each assignee a directory user or a security group, with its GUID and SID; duplicates dropped. */
export async function resolveAssignees(dir: Directory, refs: string[]): Promise<Assignee[]> {
  const out = new Map<string, Assignee>();
  for (const ref of refs) {
    const p = await resolvePrincipal(dir, ref);
    if (!p) throw badRequest('assignee_not_found', { assignee: ref });
    if (p.kind === 'group' && !p.securityGroup) throw badRequest('assignee_not_security_group', { assignee: p.dn });
    if (!out.has(lower(p.guid))) out.set(lower(p.guid), { kind: p.kind, guid: p.guid, sid: p.sid, name: p.name });
  }
  return [...out.values()];
}

/** A delegation as saved: the role must be a custom one, scope and assignees resolved by the directory now. */
export async function delegationFromInput(ctx: Pick<AdminContext, 'rt'>, id: string, input: Omit<DelegationInput, 'version'>): Promise<Delegation> {
  if (!ID_PATTERN.test(id)) throw badRequest('invalid_id', { id });
  // the built-in role is given through the Super administrator assignment, never delegated
  if (isBuiltInRoleId(input.roleId)) throw badRequest('role_not_delegable', { roleId: input.roleId });
  if (!(await readAuthzState(ctx.rt.store)).roles.has(input.roleId)) throw badRequest('role_not_found', { roleId: input.roleId });
  const settings = await ctx.rt.settings();
  if (!settings) throw conflict('not_configured');
  const dir = await ctx.rt.directory();
  return { id, roleId: input.roleId, scope: await resolveScope(dir, settings, input.scope), assignees: await resolveAssignees(dir, input.assignees) };
}

/** The writes of a delegation save against a state: its role still exists, its version. */
export const delegationSave = (d: Delegation, version?: number) => (s: AuthzState) => {
  if (!s.roles.has(d.roleId)) throw badRequest('role_not_found', { roleId: d.roleId });
  const current = s.delegations.get(d.id);
  checkVersion(version, current?.version ?? 0);
  return { writes: [{ put: 'delegation' as const, value: d, version: current?.version ?? 0 }] as AuthzWrite[], result: { old: current?.data, version: (current?.version ?? 0) + 1, view: delegationView(s, d, (current?.version ?? 0) + 1) } };
};

export function saveDelegation(ctx: AdminContext, id: string, input: DelegationInput) {
  return audited(ctx, 'delegations.saved', { id, kind: 'delegation' }, async () => {
    const d = await delegationFromInput(ctx, id, input);
    const out = await commitGuarded(ctx, delegationSave(d, input.version));
    await ctx.rt.audit.append({ event: 'delegations.saved', outcome: 'success', actor: ctx.actor, target: { id, kind: 'delegation' }, correlationId: ctx.correlationId, details: { old: out.old ?? null, new: d, ...requestDetails(ctx) } });
    return { created: !out.old, delegation: out.view };
  });
}

export function deleteDelegation(ctx: AdminContext, id: string) {
  return audited(ctx, 'delegations.deleted', { id, kind: 'delegation' }, async () => {
    const old = await changeAuthz(ctx.rt.store, (s) => {
      const current = s.delegations.get(id);
      if (!current) throw notFound();
      return { writes: [{ delete: 'delegation' as const, id }], result: current.data };
    });
    await ctx.rt.audit.append({ event: 'delegations.deleted', outcome: 'success', actor: ctx.actor, target: { id, kind: 'delegation' }, correlationId: ctx.correlationId, details: { old } });
  });
}
