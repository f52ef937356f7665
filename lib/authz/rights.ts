import { z } from 'zod';
import { ApiError } from '../errors';
import type { ManagedOu, InstanceSettings } from '../setup/settings';
import type { Store } from '../store';
import { getRecord, putRecord, queryRecords } from '../store/records';
import { PERMISSIONS, SUPER_ADMINISTRATOR_ROLE, type Permission } from './permissions';

// Roles hold permission codes; a delegation is a role plus a scope of managed OUs, assigned to
// directory users or groups (matched by SID against the operator's transitive groups).
export interface Role {
  id: string;
  name: string;
  permissions: Permission[];
}
export interface Assignee {
  kind: 'user' | 'group';
  guid: string;
  sid: string;
  name: string;
}
export interface Delegation {
  id: string;
  roleId: string;
  scope: ManagedOu[];
  assignees: Assignee[];
}

export const roleSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  name: z.string().trim().min(1).max(100),
  permissions: z.array(z.enum(PERMISSIONS)).max(PERMISSIONS.length),
});

const LAPS = ['computers.laps.read', 'computers.laps.expire'];

/** Role editor rules (console spec: a LAPS permission needs computers.read). */
export function validateRole(input: unknown): Role {
  const role = roleSchema.parse(input);
  const perms = new Set(role.permissions);
  if (role.permissions.some((p) => LAPS.includes(p)) && !perms.has('computers.read')) {
    throw new ApiError(400, 'computers_read_required');
  }
  if (role.id === SUPER_ADMINISTRATOR_ROLE.id) throw new ApiError(400, 'role_read_only');
  // a custom role may not pass for the built-in one
  if (role.name.trim().toLowerCase() === SUPER_ADMINISTRATOR_ROLE.name.toLowerCase()) role.name = `${role.name.trim()} (custom)`;
  return { ...role, permissions: [...perms] };
}

export async function putRole(store: Store, role: Role) {
  await putRecord(store, 'ROLES', role.id, validateRole(role));
}
export async function listRoles(store: Store): Promise<Role[]> {
  return (await queryRecords<Role>(store, 'ROLES')).map((r) => r.data);
}
export async function putDelegation(store: Store, d: Delegation) {
  await putRecord(store, 'DELEGATIONS', d.id, d);
}
export async function listDelegations(store: Store): Promise<Delegation[]> {
  return (await queryRecords<Delegation>(store, 'DELEGATIONS')).map((r) => r.data);
}
export async function getRole(store: Store, id: string) {
  return (await getRecord<Role>(store, 'ROLES', id))?.data;
}

export interface OperatorRights {
  superAdministrator: boolean;
  permissions: Set<Permission>;
  grants: Array<{ delegation: Delegation; role: Role }>;
}

/** What an operator may do, from the current settings and delegations and their fresh group SIDs. */
export async function operatorRights(
  store: Store,
  settings: InstanceSettings,
  operator: { guid: string; sid: string; groupSids: string[] },
): Promise<OperatorRights> {
  const superAdministrator = settings.superAdministrators.some((g) => g.toLowerCase() === operator.guid.toLowerCase());
  const sids = new Set([operator.sid, ...operator.groupSids]);
  const [roles, delegations] = await Promise.all([listRoles(store), listDelegations(store)]);
  const byId = new Map(roles.map((r) => [r.id, r]));
  const grants: OperatorRights['grants'] = [];
  for (const d of delegations) {
    const role = byId.get(d.roleId);
    if (role && d.assignees.some((a) => sids.has(a.sid))) grants.push({ delegation: d, role });
  }
  const permissions = new Set<Permission>(superAdministrator ? PERMISSIONS : grants.flatMap((g) => g.role.permissions));
  return { superAdministrator, permissions, grants };
}

export const hasAnyRole = (r: OperatorRights) => r.superAdministrator || r.grants.length > 0;
