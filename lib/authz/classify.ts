import { UAC } from '../directory';
import { isAtOrBelow, isBelow } from '../directory/dn';

// Computer (and account) classification of the console spec. Every signal must be present:
// a missing or unreadable one classifies as never manageable (fail closed).

export type NeverManageableKind =
  | 'dc'
  | 'rodc'
  | 'unconstrained_delegation'
  | 'protocol_transition'
  | 'sensitive_group_direct'
  | 'sensitive_group_nested'
  | 'sensitive_group_primary'
  | 'admin_count'
  | 'tier0_ou'
  | 'not_a_computer'
  | 'not_a_user'
  | 'not_a_group'
  | 'builtin_account'
  | 'critical_system_object'
  | 'signal_missing';

export type ComputerClass = { kind: 'standard' } | { kind: 'vip' } | { kind: 'never'; why: NeverManageableKind } | { kind: 'unmanaged' };
/** The classes of every target kind (computers, users, groups) share one shape. */
export type TargetClass = ComputerClass;

export interface ClassificationFacts {
  dn: string;
  objectClasses: string[];
  userAccountControl?: number;
  adminCount?: number;
  primaryGroupId?: number;
  /** SIDs of every group (transitive, primary included); undefined when unreadable */
  tokenGroups?: string[];
  /** DNs of direct memberships (memberOf) */
  memberOf: string[];
  /** the object's own SID (its domain part names the domain's well-known groups) */
  sid?: string;
}

export interface ClassificationContext {
  managedOuDns: string[];
  tierOuDns: string[];
  protectedGroupSids: string[];
}

interface ConfiguredOu {
  guid: string;
  dn: string;
}

/**
 * The classification input as the directory stands now: the managed and Tier OUs at their current
 * DN (followed by GUID, every read at once). A managed OU that cannot be found manages nothing; a
 * Tier OU that cannot be found still protects what sits at its recorded DN. Console and password
 * service both decide on it, each with its own reads.
 */
export async function currentClassification(
  ous: { managedOus: ConfiguredOu[]; tierOus: ConfiguredOu[] },
  protectedGroupSids: string[],
  dnOf: (ou: ConfiguredOu) => Promise<string | undefined>,
): Promise<ClassificationContext> {
  const [managed, tiers] = await Promise.all([Promise.all(ous.managedOus.map(dnOf)), Promise.all(ous.tierOus.map(dnOf))]);
  return {
    managedOuDns: managed.filter((d): d is string => !!d),
    tierOuDns: ous.tierOus.map((o, i) => tiers[i] ?? o.dn),
    protectedGroupSids,
  };
}

// Builtin groups that administer the domain or its DCs.
const BUILTIN_SENSITIVE = ['S-1-5-32-544', 'S-1-5-32-548', 'S-1-5-32-549', 'S-1-5-32-550', 'S-1-5-32-551', 'S-1-5-32-552', 'S-1-5-32-569'];
// Domain RIDs: 498 Enterprise RODCs, 512 Domain Admins, 516 DCs, 517 Cert Publishers, 518 Schema Admins,
// 519 Enterprise Admins, 520 Group Policy Creator Owners, 521 RODCs, 526/527 Key Admins.
export const SENSITIVE_RIDS = [498, 512, 516, 517, 518, 519, 520, 521, 526, 527];

export const domainSidOf = (sid: string) => sid.replace(/-\d+$/, '');

export function sensitiveSids(domainSid: string): Set<string> {
  return new Set([...BUILTIN_SENSITIVE, ...SENSITIVE_RIDS.map((r) => `${domainSid}-${r}`)]);
}

// isBelow lives in lib/directory/dn.ts (the directory port uses it too); re-exported for lib/authz.
export { isAtOrBelow, isBelow } from '../directory/dn';

/** The never-manageable checks shared by computers and accounts (returns the first that applies). */
export function neverManageable(f: ClassificationFacts, ctx: ClassificationContext): NeverManageableKind | undefined {
  if (f.userAccountControl === undefined || f.tokenGroups === undefined || f.tokenGroups.length === 0 || !f.sid) return 'signal_missing';
  const uac = f.userAccountControl;
  if (uac & UAC.SERVER_TRUST_ACCOUNT || f.primaryGroupId === 516) return 'dc';
  if (uac & UAC.PARTIAL_SECRETS_ACCOUNT || f.primaryGroupId === 521) return 'rodc';
  if (uac & UAC.TRUSTED_FOR_DELEGATION) return 'unconstrained_delegation';
  if (uac & UAC.TRUSTED_TO_AUTH_FOR_DELEGATION) return 'protocol_transition';
  if (f.adminCount === 1) return 'admin_count';
  if (ctx.tierOuDns.some((t) => isAtOrBelow(f.dn, t))) return 'tier0_ou';
  const sensitive = sensitiveSids(domainSidOf(f.sid));
  if (f.primaryGroupId !== undefined && sensitive.has(`${domainSidOf(f.sid)}-${f.primaryGroupId}`)) return 'sensitive_group_primary';
  if (f.tokenGroups.some((s) => sensitive.has(s))) {
    const directSensitive = f.memberOf.some((dn) => /^CN=(Domain Admins|Enterprise Admins|Schema Admins|Administrators|Account Operators|Server Operators|Print Operators|Backup Operators|Replicator|Domain Controllers|Read-only Domain Controllers|Enterprise Read-only Domain Controllers|Cert Publishers|Group Policy Creator Owners|Key Admins|Enterprise Key Admins|Cryptographic Operators),/i.test(dn));
    return directSensitive ? 'sensitive_group_direct' : 'sensitive_group_nested';
  }
  return undefined;
}

/** classifyComputer: never manageable → unmanaged (outside every managed OU) → VIP → standard. */
export function classifyComputer(f: ClassificationFacts, ctx: ClassificationContext): ComputerClass {
  const classes = f.objectClasses.map((c) => c.toLowerCase());
  if (!classes.includes('computer')) return { kind: 'never', why: 'not_a_computer' };
  const never = neverManageable(f, ctx);
  if (never) return { kind: 'never', why: never };
  if (!ctx.managedOuDns.some((ou) => isBelow(f.dn, ou))) return { kind: 'unmanaged' };
  if (f.tokenGroups!.some((s) => ctx.protectedGroupSids.includes(s))) return { kind: 'vip' };
  return { kind: 'standard' };
}

// Well-known account names that are never touched whatever their RID (console spec, Moves, renames and groups).
const WELL_KNOWN_ACCOUNTS = new Set(['krbtgt', 'administrator', 'guest', 'defaultaccount', 'wdagutilityaccount']);
const ridOf = (sid: string) => Number(sid.split('-').pop());

export interface AccountExtraFacts {
  samAccountName?: string;
  /** isCriticalSystemObject; undefined = not set (FALSE) */
  criticalSystemObject?: boolean;
}

/**
 * classifyUser: the never-manageable account signals shared with computers, plus the user rules:
 * built-in and well-known accounts (RID below 1000, krbtgt, Administrator, Guest), critical system
 * objects; then unmanaged → VIP (member of a protected group) → standard.
 */
export function classifyUser(f: ClassificationFacts & AccountExtraFacts, ctx: ClassificationContext): TargetClass {
  const classes = f.objectClasses.map((c) => c.toLowerCase());
  if (!classes.includes('user') || classes.includes('computer')) return { kind: 'never', why: 'not_a_user' };
  if (!f.sid) return { kind: 'never', why: 'signal_missing' };
  if (f.criticalSystemObject) return { kind: 'never', why: 'critical_system_object' };
  if (ridOf(f.sid) < 1000 || WELL_KNOWN_ACCOUNTS.has((f.samAccountName ?? '').toLowerCase())) return { kind: 'never', why: 'builtin_account' };
  const never = neverManageable(f, ctx);
  if (never) return { kind: 'never', why: never };
  if (!ctx.managedOuDns.some((ou) => isBelow(f.dn, ou))) return { kind: 'unmanaged' };
  if (f.tokenGroups!.some((s) => ctx.protectedGroupSids.includes(s))) return { kind: 'vip' };
  return { kind: 'standard' };
}

export interface GroupFacts {
  dn: string;
  objectClasses: string[];
  sid?: string;
  adminCount?: number;
  criticalSystemObject?: boolean;
  /** SIDs of every group this group is nested in (transitively); undefined when unreadable */
  parentSids?: string[];
}

/**
 * classifyGroup: built-in and well-known groups (RID below 1000, the Builtin domain), critical
 * system objects, `adminCount=1`, a sensitive group itself or nested in one, below a Tier OU:
 * never manageable; then unmanaged → VIP (a protected group, or nested in one) → standard.
 */
export function classifyGroup(f: GroupFacts, ctx: ClassificationContext): TargetClass {
  if (!f.objectClasses.map((c) => c.toLowerCase()).includes('group')) return { kind: 'never', why: 'not_a_group' };
  if (!f.sid || f.parentSids === undefined) return { kind: 'never', why: 'signal_missing' };
  if (f.criticalSystemObject) return { kind: 'never', why: 'critical_system_object' };
  if (f.sid.startsWith('S-1-5-32-') || ridOf(f.sid) < 1000) return { kind: 'never', why: 'builtin_account' };
  if (f.adminCount === 1) return { kind: 'never', why: 'admin_count' };
  if (ctx.tierOuDns.some((t) => isBelow(f.dn, t) || f.dn.toLowerCase() === t.toLowerCase())) return { kind: 'never', why: 'tier0_ou' };
  const sensitive = sensitiveSids(domainSidOf(f.sid));
  if (sensitive.has(f.sid)) return { kind: 'never', why: 'sensitive_group_direct' };
  if (f.parentSids.some((s) => sensitive.has(s))) return { kind: 'never', why: 'sensitive_group_nested' };
  if (!ctx.managedOuDns.some((ou) => isBelow(f.dn, ou))) return { kind: 'unmanaged' };
  if ([f.sid, ...f.parentSids].some((s) => ctx.protectedGroupSids.includes(s))) return { kind: 'vip' };
  return { kind: 'standard' };
}
