import type { Entry } from 'ldapts';
import { guidFromBuffer, sidFromBuffer } from './guid';

/** An entry as the directory returned it: its DN and attribute values (binary ones as Buffers). */
export type DirectoryEntry = Entry;

// Fresh facts about one directory object, read by GUID with the console's read account.
export const COMPUTER_ATTRIBUTES = [
  'objectGUID',
  'objectSid',
  'objectClass',
  'cn',
  'sAMAccountName',
  'dNSHostName',
  'operatingSystem',
  'lastLogonTimestamp',
  'userAccountControl',
  'adminCount',
  'primaryGroupID',
  'memberOf',
  'msLAPS-PasswordExpirationTime',
  'ms-Mcs-AdmPwdExpirationTime',
];
const BINARY = ['objectGUID', 'objectSid', 'tokenGroups'];

export interface ObjectFacts {
  dn: string;
  guid: string;
  sid?: string;
  objectClasses: string[];
  attributes: Record<string, string | string[] | undefined>;
  userAccountControl?: number;
  adminCount?: number;
  primaryGroupId?: number;
  memberOf: string[];
  tokenGroups?: string[];
}

const list = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);
const num = (v: unknown): number | undefined => {
  const s = list(v)[0];
  return s === undefined || s === '' ? undefined : Number(s);
};

export function toObjectFacts(e: Entry, tokenGroups?: Buffer[]): ObjectFacts {
  const attributes: Record<string, string | string[] | undefined> = {};
  // ldapts lists every requested attribute, absent ones as []: absent stays absent here
  for (const [k, v] of Object.entries(e)) {
    if (BINARY.includes(k) || k === 'dn' || (Array.isArray(v) && v.length === 0)) continue;
    attributes[k] = Array.isArray(v) ? v.map(String) : String(v);
  }
  // an object without a SID (an OU, a container) comes back with objectSid as [] when it was asked for
  const sidBuf = e.objectSid as Buffer | Buffer[] | undefined;
  const sidBytes = Array.isArray(sidBuf) ? sidBuf[0] : sidBuf;
  const sid = sidBytes ? sidFromBuffer(sidBytes) : undefined;
  const guidBuf = e.objectGUID as Buffer | Buffer[];
  return {
    dn: e.dn,
    guid: guidFromBuffer(Array.isArray(guidBuf) ? guidBuf[0] : guidBuf),
    sid,
    objectClasses: list(e.objectClass),
    attributes,
    userAccountControl: num(e.userAccountControl),
    adminCount: num(e.adminCount),
    primaryGroupId: num(e.primaryGroupID),
    memberOf: list(e.memberOf),
    tokenGroups: tokenGroups?.map(sidFromBuffer),
  };
}

/** FILETIME (100 ns since 1601) → ISO string; undefined for absent, 0 or "never". */
export function fileTimeToIso(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s || s === '0' || s === '9223372036854775807') return undefined;
  const ms = Number((BigInt(s) - 116444736000000000n) / 10000n);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

export const isoToFileTime = (ms: number) => String(BigInt(ms) * 10000n + 116444736000000000n);

// Users and groups: the attributes their read views and their classification need.
export const USER_ATTRIBUTES = [
  'objectGUID',
  'objectSid',
  'objectClass',
  'cn',
  'sAMAccountName',
  'userPrincipalName',
  'displayName',
  'givenName',
  'sn',
  'mail',
  'telephoneNumber',
  'description',
  'userAccountControl',
  'msDS-User-Account-Control-Computed',
  'lockoutTime',
  'pwdLastSet',
  'lastLogonTimestamp',
  'adminCount',
  'primaryGroupID',
  'memberOf',
  'isCriticalSystemObject',
];
export const GROUP_ATTRIBUTES = ['objectGUID', 'objectSid', 'objectClass', 'cn', 'sAMAccountName', 'description', 'mail', 'managedBy', 'info', 'groupType', 'adminCount', 'isCriticalSystemObject', 'memberOf'];

export const isTrue = (v: string | string[] | undefined) => String(Array.isArray(v) ? v[0] : (v ?? '')).toUpperCase() === 'TRUE';
