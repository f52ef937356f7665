import type { Entry } from 'ldapts';
import type { Directory } from './index';
import { escapeFilterValue, guidEqualityFilter, guidFromBuffer, sidFromBuffer } from './guid';

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
  const sidBuf = e.objectSid as Buffer | Buffer[] | undefined;
  const sid = sidBuf ? sidFromBuffer(Array.isArray(sidBuf) ? sidBuf[0] : sidBuf) : undefined;
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

/** The object with this GUID and its transitive group SIDs (tokenGroups needs a base search). */
export async function readObjectByGuid(dir: Directory, guid: string, attributes = COMPUTER_ATTRIBUTES): Promise<ObjectFacts | undefined> {
  const creds = await dir.readCreds();
  const found = await dir.pool.search(creds, dir.baseDn, {
    scope: 'sub',
    filter: guidEqualityFilter(guid),
    attributes,
    explicitBufferAttributes: BINARY,
    max: 1,
  });
  const e = found.entries[0];
  if (!e) return undefined;
  const tg = await dir.pool.search(creds, e.dn, { scope: 'base', attributes: ['tokenGroups'], explicitBufferAttributes: ['tokenGroups'] });
  const raw = tg.entries[0]?.tokenGroups as Buffer | Buffer[] | undefined;
  return toObjectFacts(e, raw === undefined ? undefined : Array.isArray(raw) ? raw : [raw]);
}

/** tokenGroups of many entries (one base read each); used by list views to classify. */
export async function withTokenGroups(dir: Directory, entries: Entry[]): Promise<ObjectFacts[]> {
  const creds = await dir.readCreds();
  return dir.pool.run(creds, 'read', async (client) => {
    const out: ObjectFacts[] = [];
    for (const e of entries) {
      const tg = await client.search(e.dn, { scope: 'base', attributes: ['tokenGroups'], explicitBufferAttributes: ['tokenGroups'] });
      const raw = tg.searchEntries[0]?.tokenGroups as Buffer | Buffer[] | undefined;
      out.push(toObjectFacts(e, raw === undefined ? undefined : Array.isArray(raw) ? raw : [raw]));
    }
    return out;
  }, { reuse: true });
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
export const GROUP_ATTRIBUTES = ['objectGUID', 'objectSid', 'objectClass', 'cn', 'sAMAccountName', 'description', 'mail', 'managedBy', 'groupType', 'adminCount', 'isCriticalSystemObject', 'memberOf'];

/** SIDs of every group `dn` is nested in, transitively (LDAP_MATCHING_RULE_IN_CHAIN). */
export async function parentGroupSids(dir: Directory, dn: string): Promise<string[]> {
  const page = await dir.pool.search(await dir.readCreds(), dir.baseDn, {
    scope: 'sub',
    filter: `(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=${escapeFilterValue(dn)}))`,
    attributes: ['objectSid'],
    explicitBufferAttributes: ['objectSid'],
  });
  return page.entries.map((e) => sidFromBuffer(Array.isArray(e.objectSid) ? (e.objectSid[0] as Buffer) : (e.objectSid as Buffer)));
}

/** A group by GUID with the SIDs of the groups it is nested in (its classification needs them). */
export async function readGroupByGuid(dir: Directory, guid: string): Promise<(ObjectFacts & { parentSids: string[] }) | undefined> {
  const found = await dir.pool.search(await dir.readCreds(), dir.baseDn, { scope: 'sub', filter: guidEqualityFilter(guid), attributes: GROUP_ATTRIBUTES, explicitBufferAttributes: BINARY, max: 1 });
  const e = found.entries[0];
  if (!e) return undefined;
  return { ...toObjectFacts(e), parentSids: await parentGroupSids(dir, e.dn) };
}

export const isTrue = (v: string | string[] | undefined) => String(Array.isArray(v) ? v[0] : (v ?? '')).toUpperCase() === 'TRUE';
