import type { Delegation, Role } from '../authz/rights';
import { PERMISSIONS, type Permission } from '../authz/permissions';
import { badRequest } from '../errors';
import type { InstanceSettings, ManagedOu } from '../setup/settings';

// The rights models of the delegation export (console spec, "Moves, renames and groups" and
// "LAPS directory rights"): which ACEs the write account and the LAPS account need on which OU,
// named by lDAPDisplayName (schema GUIDs differ per forest: resolved at export or check time).
// Pure: the PowerShell renderer (./script.ts) and the directory check (./status.ts) read the same model.

/** One right: an allow object ACE with names instead of GUIDs. */
export interface ModelRight {
  /** CC create child, SD delete (the object itself), WP write property, RPCR read property + control access, RPLCLORC read the object (BitLocker entries) */
  right: 'CC' | 'SD' | 'WP' | 'RPCR' | 'RPLCLORC';
  /** the class created (CC) or the attribute (WP, RPCR); none for SD */
  objectType?: string;
  /** the class of the objects that inherit it; none: the OU and every container below it */
  inheritedObjectType?: string;
  /** CI: this OU and everything below; CIIO: only the objects below (inherit only) */
  inheritance: 'CI' | 'CIIO';
}

export interface OuRights {
  ou: ManagedOu;
  /** the delegable actions that need these rights here, in the spec's order */
  permissions: Permission[];
  rights: ModelRight[];
}

export interface RightsModel {
  kind: 'write' | 'laps' | 'bitlocker';
  /** the account the rights go to (UPN) */
  identity: string;
  ous: OuRights[];
}

const wp = (cls: string, ...attributes: string[]): ModelRight[] => attributes.map((a) => ({ right: 'WP', objectType: a, inheritedObjectType: cls, inheritance: 'CIIO' }));
const create = (cls: string): ModelRight => ({ right: 'CC', objectType: cls, inheritance: 'CI' });
// Delete is granted on the objects (inherited by that class), never as Delete child on the OU
const deleteOn = (cls: string): ModelRight => ({ right: 'SD', inheritedObjectType: cls, inheritance: 'CIIO' });

/**
 * The write account's rights per delegable action (console spec, "Directory rights for the write
 * account"); the older actions' rights are the ones the local directory grants (local/directory/dc.sh).
 */
export const WRITE_RIGHTS: Partial<Record<Permission, ModelRight[]>> = {
  'users.attributes.write': wp('user', 'description', 'displayName', 'givenName', 'sn', 'mail', 'telephoneNumber'),
  'users.unlock': wp('user', 'lockoutTime'),
  'users.disable': wp('user', 'userAccountControl'),
  'users.enable': wp('user', 'userAccountControl'),
  'groups.members.write': wp('group', 'member'),
  'users.move': [create('user'), deleteOn('user'), ...wp('user', 'cn', 'name')],
  'users.rename': wp('user', 'cn', 'name', 'displayName', 'givenName', 'sn'),
  'users.rename.login': wp('user', 'sAMAccountName', 'userPrincipalName'),
  'groups.create': [create('group')],
  'groups.delete': [deleteOn('group')],
  'groups.attributes.write': wp('group', 'description', 'managedBy', 'mail', 'info'),
  'groups.owned.members.write': wp('group', 'member'),
};

export const rightKey = (r: ModelRight) => `${r.right}|${r.objectType ?? ''}|${r.inheritedObjectType ?? ''}|${r.inheritance}`.toLowerCase();

function mergeRights(perms: Iterable<Permission>, table: Partial<Record<Permission, ModelRight[]>>): { permissions: Permission[]; rights: ModelRight[] } {
  const held = new Set(perms);
  const permissions = PERMISSIONS.filter((p) => held.has(p) && table[p]);
  const rights = new Map<string, ModelRight>();
  for (const p of permissions) for (const r of table[p]!) rights.set(rightKey(r), r);
  return { permissions, rights: [...rights.values()] };
}

/** Permissions per scope OU (by GUID): every delegation's role on its scope; the Super administrator's on every managed OU. */
function permissionsPerOu(settings: InstanceSettings, roles: Role[], delegations: Delegation[]): Map<string, { ou: ManagedOu; perms: Set<Permission> }> {
  const out = new Map<string, { ou: ManagedOu; perms: Set<Permission> }>();
  const add = (ou: ManagedOu, perms: Iterable<Permission>) => {
    const k = ou.guid.toLowerCase();
    const e = out.get(k) ?? { ou, perms: new Set<Permission>() };
    for (const p of perms) e.perms.add(p);
    out.set(k, e);
  };
  const byId = new Map(roles.map((r) => [r.id, r]));
  if (settings.superAdministrators.length) for (const ou of settings.managedOus) add(ou, PERMISSIONS);
  for (const d of delegations) {
    const role = byId.get(d.roleId);
    if (role) for (const ou of d.scope) add(ou, role.permissions);
  }
  return out;
}

const byDn = (a: OuRights, b: OuRights) => a.ou.dn.toLowerCase().localeCompare(b.ou.dn.toLowerCase());

/** The write account's rights model: on every scope OU, the rights of the write actions delegated there. */
export function writeRightsModel(settings: InstanceSettings, roles: Role[], delegations: Delegation[]): RightsModel {
  const ous: OuRights[] = [];
  for (const { ou, perms } of permissionsPerOu(settings, roles, delegations).values()) {
    const { permissions, rights } = mergeRights(perms, WRITE_RIGHTS);
    if (rights.length) ous.push({ ou, permissions, rights });
  }
  return { kind: 'write', identity: settings.writeAccount.user, ous: ous.sort(byDn) };
}

// ---- LAPS (console spec, "LAPS directory rights"): the LAPS account, computer objects only

export const LAPS_PASSWORD_ATTRIBUTES = { windows: 'msLAPS-Password', legacy: 'ms-Mcs-AdmPwd' } as const;
export const LAPS_EXPIRY_ATTRIBUTES = { windows: 'msLAPS-PasswordExpirationTime', legacy: 'ms-Mcs-AdmPwdExpirationTime' } as const;

/**
 * The only LAPS rights the export ever grants: Read property + Control access on the clear-text
 * password attributes, Write property on the expiration times, inherited by computer objects.
 * Anything else (another account, another class, `msLAPS-EncryptedPassword`, another attribute or
 * right) is refused: `laps_right_refused`.
 */
export function assertLapsRight(r: ModelRight, identity: string, lapsUpn: string | undefined, otherAccounts: string[]): void {
  const refuse = (why: string) => {
    throw badRequest('laps_right_refused', { reason: why, right: r });
  };
  if (!lapsUpn || identity.toLowerCase() !== lapsUpn.toLowerCase()) refuse('not_the_laps_account');
  if (otherAccounts.some((a) => a.toLowerCase() === identity.toLowerCase())) refuse('technical_account_reused');
  if (r.inheritedObjectType !== 'computer' || r.inheritance !== 'CIIO') refuse('computer_objects_only');
  const passwords: string[] = Object.values(LAPS_PASSWORD_ATTRIBUTES);
  const expiries: string[] = Object.values(LAPS_EXPIRY_ATTRIBUTES);
  if (r.right === 'RPCR' && passwords.includes(r.objectType ?? '')) return;
  if (r.right === 'WP' && expiries.includes(r.objectType ?? '')) return;
  refuse(r.objectType === 'msLAPS-EncryptedPassword' ? 'encrypted_password_never_granted' : 'attribute_not_allowed');
}

const LAPS_ACTIONS: Permission[] = ['computers.laps.read', 'computers.laps.expire'];

/**
 * The LAPS account's rights model: on every scope OU of a delegation holding a LAPS action, Read
 * property + Control access on `msLAPS-Password` (and `ms-Mcs-AdmPwd` when the legacy schema
 * exists); for `computers.laps.expire` also Write property on the expiration time(s).
 */
export function lapsRightsModel(
  settings: InstanceSettings,
  roles: Role[],
  delegations: Delegation[],
  opts: { legacySchema: boolean; otherAccounts: string[] },
): RightsModel {
  const identity = settings.lapsIdentityUpn;
  if (!identity) throw badRequest('laps_identity_upn_missing');
  const schemas: Array<'windows' | 'legacy'> = opts.legacySchema ? ['windows', 'legacy'] : ['windows'];
  const table: Partial<Record<Permission, ModelRight[]>> = {
    'computers.laps.read': schemas.map((s) => ({ right: 'RPCR', objectType: LAPS_PASSWORD_ATTRIBUTES[s], inheritedObjectType: 'computer', inheritance: 'CIIO' })),
    'computers.laps.expire': schemas.map((s) => ({ right: 'WP', objectType: LAPS_EXPIRY_ATTRIBUTES[s], inheritedObjectType: 'computer', inheritance: 'CIIO' })),
  };
  const ous: OuRights[] = [];
  for (const { ou, perms } of permissionsPerOu(settings, roles, delegations).values()) {
    const { permissions, rights } = mergeRights([...perms].filter((p) => LAPS_ACTIONS.includes(p)), table);
    for (const r of rights) assertLapsRight(r, identity, identity, opts.otherAccounts);
    if (rights.length) ous.push({ ou, permissions, rights });
  }
  return { kind: 'laps', identity, ous: ous.sort(byDn) };
}

// ---- BitLocker (issue 33): the BitLocker account, msFVE-RecoveryInformation objects only

export const BITLOCKER_CLASS = 'msFVE-RecoveryInformation';
export const BITLOCKER_PASSWORD_ATTRIBUTE = 'msFVE-RecoveryPassword';
const BITLOCKER_RIGHTS: ModelRight[] = [
  { right: 'RPLCLORC', inheritedObjectType: BITLOCKER_CLASS, inheritance: 'CIIO' },
  { right: 'RPCR', objectType: BITLOCKER_PASSWORD_ATTRIBUTE, inheritedObjectType: BITLOCKER_CLASS, inheritance: 'CIIO' },
];

/**
 * The only BitLocker rights the export grants: read the recovery entries and Read property +
 * Control access on msFVE-RecoveryPassword, inherited by msFVE-RecoveryInformation objects, to the
 * BitLocker account; never msFVE-KeyPackage, never another account: `bitlocker_right_refused`.
 */
export function assertBitlockerRight(r: ModelRight, identity: string, otherAccounts: string[]): void {
  const refuse = (why: string) => {
    throw badRequest('bitlocker_right_refused', { reason: why, right: r });
  };
  if (otherAccounts.some((a) => a.toLowerCase() === identity.toLowerCase())) refuse('technical_account_reused');
  if (r.inheritedObjectType !== BITLOCKER_CLASS || r.inheritance !== 'CIIO') refuse('recovery_objects_only');
  if (r.right === 'RPLCLORC' && !r.objectType) return;
  if (r.right === 'RPCR' && r.objectType === BITLOCKER_PASSWORD_ATTRIBUTE) return;
  refuse(r.objectType === 'msFVE-KeyPackage' ? 'key_package_never_granted' : 'attribute_not_allowed');
}

/**
 * The BitLocker account's rights model: on every scope OU of a delegation holding
 * `computers.bitlocker.read`, the two rights above. (The console's read account lists the entries
 * with Read on the objects, never Control Access: granted with it, outside this account's model.)
 */
export function bitlockerRightsModel(settings: InstanceSettings, roles: Role[], delegations: Delegation[], opts: { identity: string; otherAccounts: string[] }): RightsModel {
  const ous: OuRights[] = [];
  for (const { ou, perms } of permissionsPerOu(settings, roles, delegations).values()) {
    if (!perms.has('computers.bitlocker.read')) continue;
    for (const r of BITLOCKER_RIGHTS) assertBitlockerRight(r, opts.identity, opts.otherAccounts);
    ous.push({ ou, permissions: ['computers.bitlocker.read'], rights: BITLOCKER_RIGHTS.map((r) => ({ ...r })) });
  }
  return { kind: 'bitlocker', identity: opts.identity, ous: ous.sort(byDn) };
}
