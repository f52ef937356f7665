import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { badRequest, conflict, forbidden } from '../errors';
import type { ManagedOu, InstanceSettings } from '../setup/settings';
import { isConditionFailed, type Store } from '../store';
import { getRecord, queryRecords, type Rec } from '../store/records';
import { PERMISSIONS, SUPER_ADMINISTRATOR_ROLE, type Permission } from './permissions';
import { forgetRequestRead, readOncePerRequest, shareRequestRead } from '../request-scope';

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

/** Ids of roles and delegations: lower-case letters, digits and hyphens (they sit in URLs). */
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

export const roleSchema = z.object({
  id: z.string().regex(ID_PATTERN),
  name: z.string().trim().min(1).max(100),
  permissions: z.array(z.string().max(100)).max(100),
});

/**
 * Permissions that need another one in the same role (console spec: a LAPS permission needs
 * `computers.read`; Moves, renames and groups: "Delegation must also hold"). The error code is
 * `<required code with _>_required`, e.g. `computers_read_required`.
 */
export const REQUIRES: Partial<Record<Permission, Permission>> = {
  'computers.laps.read': 'computers.read',
  'computers.laps.expire': 'computers.read',
  'computers.bitlocker.read': 'computers.read',
  'users.move': 'users.read',
  'users.rename': 'users.read',
  'users.rename.login': 'users.rename',
  'groups.create': 'groups.read',
  'groups.attributes.write': 'groups.read',
  'groups.delete': 'groups.read',
  'groups.owned.members.write': 'groups.read',
};

const KNOWN = new Set<string>(PERMISSIONS);
export const isBuiltInRoleId = (id: string) => id === SUPER_ADMINISTRATOR_ROLE.id;

/**
 * The role editor's rules, pure: the built-in role is read-only, every code is known, every
 * prerequisite is in the role; a custom role named 'Super administrator' gets ' (custom)'.
 * Permissions come back deduplicated in the spec's order.
 */
export function validateRole(input: unknown): Role {
  const parsed = roleSchema.safeParse(input);
  if (!parsed.success) {
    const idIssue = parsed.error.issues.some((i) => i.path[0] === 'id');
    throw badRequest(idIssue ? 'invalid_id' : 'validation_failed', { errors: parsed.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message })) });
  }
  const role = parsed.data;
  if (isBuiltInRoleId(role.id)) throw forbidden('role_read_only', { role: role.id });
  const unknown = [...new Set(role.permissions.filter((p) => !KNOWN.has(p)))];
  if (unknown.length) throw badRequest('unknown_permission', { permissions: unknown });
  const perms = new Set(role.permissions as Permission[]);
  for (const p of PERMISSIONS) {
    const needs = REQUIRES[p];
    if (perms.has(p) && needs && !perms.has(needs)) throw badRequest(`${needs.replace(/\./g, '_')}_required`, { permission: p, requires: needs });
  }
  // a custom role may not pass for the built-in one (console spec, Versioning 4)
  const name = role.name.toLowerCase() === SUPER_ADMINISTRATOR_ROLE.name.toLowerCase() ? `${role.name} (custom)` : role.name;
  return { id: role.id, name, permissions: PERMISSIONS.filter((p) => perms.has(p)) };
}

// ---- storage: every write to roles and delegations moves one revision item in the same
// transaction, so a change is validated against the state it replaces (no delegation ever names
// a deleted role, no two roles share a name) and concurrent administrators never lose an update.

const ROLES = 'ROLES';
const DELEGATIONS = 'DELEGATIONS';
const REVISION = { pk: 'AUTHZ', sk: 'REVISION' };
/** The revision's item (a request's batch read names it: lib/http/middlewares/session.ts) */
export const AUTHZ_REVISION_KEY = REVISION;

export interface AuthzState {
  revision: number;
  roles: Map<string, Rec<Role>>;
  delegations: Map<string, Rec<Delegation>>;
}

export type AuthzWrite =
  | { put: 'role'; value: Role; version: number }
  | { put: 'delegation'; value: Delegation; version: number }
  | { delete: 'role' | 'delegation'; id: string };

/** The revision's version now (0: nothing committed yet). */
const readRevision = async (store: Store) => (await getRecord<unknown>(store, REVISION.pk, REVISION.sk))?.version ?? 0;

/** Roles and delegations as of one revision (read the revision first: a later commit moves it). */
export async function readAuthzState(store: Store): Promise<AuthzState> {
  const revision = await readRevision(store);
  const [roles, delegations] = await Promise.all([queryRecords<Role>(store, ROLES), queryRecords<Delegation>(store, DELEGATIONS)]);
  return {
    revision,
    roles: new Map(roles.map((r) => [r.sk, { data: r.data, version: r.version }])),
    delegations: new Map(delegations.map((d) => [d.sk, { data: d.data, version: d.version }])),
  };
}

/** The request-scope keys of the revision and of the roles and delegations read (see `rightsInputsOncePerRequest`). */
const RIGHTS_READ = 'roles-and-delegations';
const REVISION_READ = 'authz-revision';

/** DynamoDB allows 100 actions per transaction; one is the revision. */
export const MAX_WRITES_PER_CHANGE = 99;

/** Commit writes made against `revision`; false when another change committed first. */
export async function commitAuthz(store: Store, revision: number, writes: AuthzWrite[]): Promise<boolean> {
  if (writes.length > MAX_WRITES_PER_CHANGE) throw badRequest('too_many_changes', { max: MAX_WRITES_PER_CHANGE });
  const TableName = store.tableName;
  forgetRequestRead(RIGHTS_READ);
  forgetRequestRead(REVISION_READ);
  const items = writes.map((w) => {
    if ('put' in w) {
      const pk = w.put === 'role' ? ROLES : DELEGATIONS;
      return { Put: { TableName, Item: { pk, sk: w.value.id, _et: 'Record', data: w.value, version: w.version + 1 } } };
    }
    return { Delete: { TableName, Key: { pk: w.delete === 'role' ? ROLES : DELEGATIONS, sk: w.id } } };
  });
  try {
    await store.transactWrite([
          {
            Put: {
              TableName,
              // a commit id no other commit has: kept roles and delegations are known by it
              Item: { ...REVISION, _et: 'Record', data: { commit: randomUUID() }, version: revision + 1 },
              ConditionExpression: revision === 0 ? 'attribute_not_exists(pk)' : 'version = :r',
              ...(revision === 0 ? {} : { ExpressionAttributeValues: { ':r': revision } }),
            },
          },
      ...items,
    ]);
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  } finally {
    forgetRequestRead(RIGHTS_READ); // a read started meanwhile may hold the old roles
    forgetRequestRead(REVISION_READ);
  }
}

export interface AuthzChange<T> {
  writes: AuthzWrite[];
  result: T;
}

/** Roles and delegations once these writes are committed (pure). */
export function applyAuthzWrites(state: AuthzState, writes: AuthzWrite[]): { roles: Role[]; delegations: Delegation[] } {
  const roles = new Map([...state.roles].map(([id, r]) => [id, r.data]));
  const delegations = new Map([...state.delegations].map(([id, d]) => [id, d.data]));
  for (const w of writes) {
    if ('put' in w && w.put === 'role') roles.set(w.value.id, w.value);
    else if ('put' in w) delegations.set(w.value.id, w.value);
    else (w.delete === 'role' ? roles : delegations).delete(w.id);
  }
  return { roles: [...roles.values()], delegations: [...delegations.values()] };
}

/** A commit tried again from a fresh read while another change wins the race (a few times, then 409). */
async function untilCommitted(attempt: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 5; i++) if (await attempt()) return;
  throw conflict('authz_changed_concurrently');
}

/**
 * Read, decide, commit; again from a fresh read when another change won the race (a few times,
 * then 409 `authz_changed_concurrently`). `decide` throws ApiError to refuse.
 */
export async function changeAuthz<T>(store: Store, decide: (s: AuthzState) => AuthzChange<T> | Promise<AuthzChange<T>>): Promise<T> {
  let result!: T;
  await untilCommitted(async () => {
    const state = await readAuthzState(store);
    const change = await decide(state);
    result = change.result;
    return !change.writes.length || commitAuthz(store, state.revision, change.writes);
  });
  return result;
}

/** A new commit id on the revision, nothing else written: every kept copy of the roles and delegations is read again. */
export const renewAuthzCommit = (store: Store): Promise<void> => untilCommitted(async () => commitAuthz(store, await readRevision(store), []));

/** The rules a role's save or delete must hold against the current state. */
export function checkRoleName(state: AuthzState, role: Role) {
  for (const [id, r] of state.roles) {
    if (id !== role.id && r.data.name.toLowerCase() === role.name.toLowerCase()) throw conflict('role_name_taken', { name: role.name, role: id });
  }
}
export function delegationsUsing(state: AuthzState, roleId: string): string[] {
  return [...state.delegations.values()].filter((d) => d.data.roleId === roleId).map((d) => d.data.id).sort();
}

/** Store a role (seed data, no audit); the same rules as the routes. */
export async function putRole(store: Store, role: Role) {
  const valid = validateRole(role);
  await changeAuthz(store, (s) => {
    checkRoleName(s, valid);
    return { writes: [{ put: 'role', value: valid, version: s.roles.get(valid.id)?.version ?? 0 }], result: undefined };
  });
}
export async function listRoles(store: Store): Promise<Role[]> {
  return (await queryRecords<Role>(store, ROLES)).map((r) => r.data);
}
/** Store a delegation whose scope and assignees are already resolved (seed data, no audit). */
export async function putDelegation(store: Store, d: Delegation) {
  await changeAuthz(store, (s) => {
    if (!s.roles.has(d.roleId)) throw badRequest('role_not_found', { roleId: d.roleId });
    return { writes: [{ put: 'delegation', value: d, version: s.delegations.get(d.id)?.version ?? 0 }], result: undefined };
  });
}
export async function listDelegations(store: Store): Promise<Delegation[]> {
  return (await queryRecords<Delegation>(store, DELEGATIONS)).map((r) => r.data);
}
export async function getRole(store: Store, id: string) {
  return (await getRecord<Role>(store, ROLES, id))?.data;
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
  const [roles, delegations] = await rightsInputsOncePerRequest(store);
  return rightsFrom(settings, operator, roles, delegations);
}

/**
 * The roles and delegations as this request first read them (the pipeline starts the read with the
 * session's). They are kept between requests under the revision's commit id: every change of
 * them commits a new one in the same transaction, and each request reads the revision (consistent)
 * first, so a request whose revision is the kept one gets exactly what the store holds; any other
 * reads them again. A revision without a commit id (written before ids existed) is never kept.
 */
export const rightsInputsOncePerRequest = (store: Store) =>
  readOncePerRequest(RIGHTS_READ, async (): Promise<[Role[], Delegation[]]> => {
    const rev = await readOncePerRequest(REVISION_READ, () => getRecord<unknown>(store, REVISION.pk, REVISION.sk));
    const commit = (rev?.data as { commit?: unknown } | undefined)?.commit;
    const id = typeof commit === 'string' && commit ? `${rev!.version}:${commit}` : undefined;
    const kept = keptRights.get(store);
    // copies: a caller's change to what it was given never reaches another request
    if (id && kept?.id === id) return structuredClone([kept.roles, kept.delegations]);
    // read after the revision: what is read is at least as new as the revision it is kept under
    const [roles, delegations] = await Promise.all([listRoles(store), listDelegations(store)]);
    if (id) keptRights.set(store, { id, roles: structuredClone(roles), delegations: structuredClone(delegations) });
    return [roles, delegations];
  });
const keptRights = new WeakMap<Store, { id: string; roles: Role[]; delegations: Delegation[] }>();

/** The revision's item read by a batch becomes this request's read of the revision. */
export const shareAuthzRevisionRead = (rec: Promise<Rec<unknown> | undefined>) => shareRequestRead(REVISION_READ, rec);

/** The same rights from given roles and delegations (pure: a change's effect is computed before it is committed). */
export function rightsFrom(settings: InstanceSettings, operator: { guid: string; sid: string; groupSids: string[] }, roles: Role[], delegations: Delegation[]): OperatorRights {
  const superAdministrator = settings.superAdministrators.some((g) => g.toLowerCase() === operator.guid.toLowerCase());
  const sids = new Set([operator.sid, ...operator.groupSids]);
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
