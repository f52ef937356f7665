import { UAC } from '../directory';

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
  | 'signal_missing';

export type ComputerClass = { kind: 'standard' } | { kind: 'vip' } | { kind: 'never'; why: NeverManageableKind } | { kind: 'unmanaged' };

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

// Builtin groups that administer the domain or its DCs.
const BUILTIN_SENSITIVE = ['S-1-5-32-544', 'S-1-5-32-548', 'S-1-5-32-549', 'S-1-5-32-550', 'S-1-5-32-551', 'S-1-5-32-552', 'S-1-5-32-569'];
// Domain RIDs: 498 Enterprise RODCs, 512 Domain Admins, 516 DCs, 517 Cert Publishers, 518 Schema Admins,
// 519 Enterprise Admins, 520 Group Policy Creator Owners, 521 RODCs, 526/527 Key Admins.
export const SENSITIVE_RIDS = [498, 512, 516, 517, 518, 519, 520, 521, 526, 527];

export const domainSidOf = (sid: string) => sid.replace(/-\d+$/, '');

export function sensitiveSids(domainSid: string): Set<string> {
  return new Set([...BUILTIN_SENSITIVE, ...SENSITIVE_RIDS.map((r) => `${domainSid}-${r}`)]);
}

export const isBelow = (dn: string, ouDn: string) => dn.toLowerCase().endsWith(`,${ouDn.toLowerCase()}`);

/** The never-manageable checks shared by computers and accounts (returns the first that applies). */
export function neverManageable(f: ClassificationFacts, ctx: ClassificationContext): NeverManageableKind | undefined {
  if (f.userAccountControl === undefined || f.tokenGroups === undefined || f.tokenGroups.length === 0 || !f.sid) return 'signal_missing';
  const uac = f.userAccountControl;
  if (uac & UAC.SERVER_TRUST_ACCOUNT || f.primaryGroupId === 516) return 'dc';
  if (uac & UAC.PARTIAL_SECRETS_ACCOUNT || f.primaryGroupId === 521) return 'rodc';
  if (uac & UAC.TRUSTED_FOR_DELEGATION) return 'unconstrained_delegation';
  if (uac & UAC.TRUSTED_TO_AUTH_FOR_DELEGATION) return 'protocol_transition';
  if (f.adminCount === 1) return 'admin_count';
  if (ctx.tierOuDns.some((t) => isBelow(f.dn, t) || f.dn.toLowerCase() === t.toLowerCase())) return 'tier0_ou';
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
