import { ResultCodeError, type Entry } from 'ldapts';
import { ApiError } from '../errors';
import { escapeFilterValue, guidEqualityFilter, guidFromBuffer, isGuid, sidFromBuffer } from './guid';
import { DirectoryPool, type DirectoryCredentials } from './pool';

export { DirectoryPool, DirectoryInvalidCredentials, type DirectoryCredentials, type DcEndpoint } from './pool';
export * from './guid';

export const UAC = {
  ACCOUNTDISABLE: 0x2,
  LOCKOUT: 0x10,
  WORKSTATION_TRUST_ACCOUNT: 0x1000,
  SERVER_TRUST_ACCOUNT: 0x2000,
  TRUSTED_FOR_DELEGATION: 0x80000,
  TRUSTED_TO_AUTH_FOR_DELEGATION: 0x1000000,
  PARTIAL_SECRETS_ACCOUNT: 0x4000000,
} as const;

const BINARY = ['objectGUID', 'objectSid', 'tokenGroups'];

const one = (v: unknown): string | undefined => (Array.isArray(v) ? (v[0] as string | undefined) : (v as string | undefined));
const buf = (v: unknown): Buffer | undefined => (Array.isArray(v) ? (v[0] as Buffer | undefined) : (v as Buffer | undefined));
const bufs = (v: unknown): Buffer[] => (v === undefined ? [] : Array.isArray(v) ? (v as Buffer[]) : [v as Buffer]);

export interface PrincipalFacts {
  dn: string;
  guid: string;
  sid: string;
  samAccountName: string;
  upn?: string;
  displayName?: string;
  userAccountControl: number;
  adminCount: number;
  /** SIDs of every group the principal is in: direct, nested and primary group (tokenGroups) */
  groupSids: string[];
}

/** Directory reads made with the console's read account. Every fact is read fresh, by DN or GUID. */
export class Directory {
  constructor(
    readonly pool: DirectoryPool,
    readonly baseDn: string,
    private readonly readCredentials: () => Promise<DirectoryCredentials>,
  ) {}

  async readCreds() {
    return this.readCredentials();
  }

  /** Find a user by sAMAccountName, DOMAIN\\name or UPN; undefined when none or ambiguous. */
  async findUserDn(login: string): Promise<string | undefined> {
    const bare = login.includes('\\') ? login.split('\\').pop()! : login;
    const v = escapeFilterValue(bare);
    const filter = `(&(objectCategory=person)(objectClass=user)(|(sAMAccountName=${v})(userPrincipalName=${v})))`;
    const page = await this.pool.search(await this.readCreds(), this.baseDn, { scope: 'sub', filter, attributes: ['distinguishedName'], max: 2 });
    return page.entries.length === 1 ? page.entries[0].dn : undefined;
  }

  /** Facts about a user or computer, with its transitive group SIDs (tokenGroups needs a base search). */
  async principalFacts(dn: string): Promise<PrincipalFacts | undefined> {
    const creds = await this.readCreds();
    const page = await this.pool.search(creds, dn, {
      scope: 'base',
      attributes: ['objectGUID', 'objectSid', 'sAMAccountName', 'userPrincipalName', 'displayName', 'userAccountControl', 'adminCount', 'tokenGroups'],
      explicitBufferAttributes: BINARY,
    });
    const e = page.entries[0];
    if (!e) return undefined;
    return toFacts(e);
  }

  async dnOfGuid(guid: string): Promise<string | undefined> {
    const page = await this.pool.search(await this.readCreds(), this.baseDn, {
      scope: 'sub',
      filter: guidEqualityFilter(guid),
      attributes: ['distinguishedName'],
      max: 1,
    });
    return page.entries[0]?.dn;
  }

  /** Resolve an OU given as DN or GUID; it must be an organizationalUnit strictly below the domain root. */
  async resolveOu(dnOrGuid: string): Promise<{ dn: string; guid: string }> {
    const creds = await this.readCreds();
    const filter = isGuid(dnOrGuid) ? guidEqualityFilter(dnOrGuid) : '(objectClass=*)';
    const base = isGuid(dnOrGuid) ? this.baseDn : dnOrGuid;
    let entries: Entry[];
    try {
      entries = (
        await this.pool.search(creds, base, {
          scope: isGuid(dnOrGuid) ? 'sub' : 'base',
          filter,
          attributes: ['objectGUID', 'objectClass'],
          explicitBufferAttributes: ['objectGUID'],
          max: 1,
        })
      ).entries;
    } catch (e) {
      if ((e as { code?: number }).code === 32 || (e as { code?: number }).code === 34) entries = []; // noSuchObject / invalid DN
      else throw e;
    }
    const ou = entries[0];
    if (!ou) throw new ApiError(400, 'ou_not_found', { ou: dnOrGuid });
    const classes = ([] as string[]).concat(ou.objectClass as string[]).map((c) => c.toLowerCase());
    if (!classes.includes('organizationalunit')) throw new ApiError(400, 'not_an_ou', { ou: dnOrGuid });
    if (ou.dn.toLowerCase() === this.baseDn.toLowerCase() || !ou.dn.toLowerCase().endsWith(`,${this.baseDn.toLowerCase()}`)) {
      throw new ApiError(400, 'ou_not_below_domain_root', { ou: dnOrGuid });
    }
    return { dn: ou.dn, guid: guidFromBuffer(buf(ou.objectGUID)!) };
  }

  /**
   * The OU a list filter names (`?ou=`, a DN in any spelling or a GUID), at the DN the directory
   * writes; undefined when no organizationalUnit answers to it: unknown, malformed (invalid DN
   * syntax) or another kind of object. The caller answers all of these like an out-of-scope OU.
   */
  async filterOuDn(ref: string): Promise<string | undefined> {
    const byGuid = isGuid(ref);
    let entries: Entry[];
    try {
      entries = (
        await this.pool.search(await this.readCreds(), byGuid ? this.baseDn : ref, {
          scope: byGuid ? 'sub' : 'base',
          filter: byGuid ? guidEqualityFilter(ref) : '(objectClass=organizationalUnit)',
          attributes: ['objectClass'],
          max: 1,
        })
      ).entries;
    } catch (e) {
      // the directory refused this base (noSuchObject, invalidDNSyntax, a referral...): no such OU;
      // a DC that cannot answer is the pool's (503), never "no such OU"
      if (e instanceof ResultCodeError) return undefined;
      throw e;
    }
    const e = entries[0];
    const classes = ([] as string[]).concat((e?.objectClass as string[] | undefined) ?? []).map((c) => c.toLowerCase());
    return e && classes.includes('organizationalunit') ? e.dn : undefined;
  }

  /** Resolve a group by DN: its GUID and SID (protected groups, operator assignments). */
  async resolveGroup(dn: string): Promise<{ dn: string; guid: string; sid: string }> {
    const page = await this.pool
      .search(await this.readCreds(), dn, { scope: 'base', filter: '(objectClass=group)', attributes: ['objectGUID', 'objectSid'], explicitBufferAttributes: BINARY })
      .catch(() => ({ entries: [] as Entry[] }));
    const g = page.entries[0];
    if (!g) throw new ApiError(400, 'group_not_found', { group: dn });
    return { dn: g.dn, guid: guidFromBuffer(buf(g.objectGUID)!), sid: sidFromBuffer(buf(g.objectSid)!) };
  }
}

export function toFacts(e: Entry): PrincipalFacts {
  return {
    dn: e.dn,
    guid: guidFromBuffer(buf(e.objectGUID)!),
    sid: sidFromBuffer(buf(e.objectSid)!),
    samAccountName: String(one(e.sAMAccountName) ?? ''),
    upn: one(e.userPrincipalName),
    displayName: one(e.displayName),
    userAccountControl: Number(one(e.userAccountControl) ?? 0),
    adminCount: Number(one(e.adminCount) ?? 0),
    groupSids: bufs(e.tokenGroups).map(sidFromBuffer),
  };
}
