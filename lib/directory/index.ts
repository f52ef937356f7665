import { Attribute, Change, ResultCodeError, type Entry, type Filter } from 'ldapts';
import { ApiError } from '../errors';
import { isAtOrBelow, isBelow } from './dn';
import { DirectoryError, isDirectoryError } from './errors';
import { escapeFilterValue, guidFromBuffer, isGuid, sidFromBuffer } from './guid';
import { COMPUTER_ATTRIBUTES, GROUP_ATTRIBUTES, toObjectFacts, type DirectoryEntry, type ObjectFacts } from './objects';
import { DirectoryPool, type DirectoryCredentials } from './pool';
import { resolvePrincipalOn, type Principal } from './principals';
import { SdFlagsDaclControl } from './sd-control';

export { DirectoryPool, type DirectoryCredentials, type DcEndpoint } from './pool';
export { DirectoryError, DirectoryInvalidCredentials, directoryApiError, directoryRefusalCode, isDirectoryError, type DirectoryErrorKind } from './errors';
export type { ObjectFacts, DirectoryEntry } from './objects';
export type { Principal } from './principals';
export * from './guid';
export type { Directory, DirectoryChange, LapsValues, PrincipalFacts, SearchRequest, WriteOptions } from './port';
import type { Directory, DirectoryChange, LapsValues, PrincipalFacts, SearchRequest, WriteOptions } from './port';

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
const TOKEN_GROUPS_IN_FLIGHT = 8;

const one = (v: unknown): string | undefined => (Array.isArray(v) ? (v[0] as string | undefined) : (v as string | undefined));
const buf = (v: unknown): Buffer | undefined => (Array.isArray(v) ? (v[0] as Buffer | undefined) : (v as Buffer | undefined));
const bufs = (v: unknown): Buffer[] => (v === undefined ? [] : Array.isArray(v) ? (v as Buffer[]) : [v as Buffer]);

const noSuchBase = (e: unknown) => isDirectoryError(e, 'no_such_object', 'invalid_dn');
const toChange = (c: DirectoryChange) => new Change({ operation: c.operation, modification: new Attribute({ type: c.attribute, values: c.values as string[] }) });

/** The Directory over LDAPS: a failover pool of kept connections, reads with the directory's own account. */
export class LdapDirectory implements Directory {
  constructor(
    readonly pool: DirectoryPool,
    readonly baseDn: string,
    private readonly readCredentials: () => Promise<DirectoryCredentials>,
  ) {}

  async readCreds() {
    return this.readCredentials();
  }

  verifyCredentials(creds: DirectoryCredentials) {
    return this.pool.verifyCredentials(creds);
  }

  stop() {
    this.pool.stop();
  }

  private async searchRaw(base: string, options: { scope: 'base' | 'one' | 'sub'; filter?: string | Filter; attributes: string[]; explicitBufferAttributes?: string[]; max?: number; returnAttributeValues?: boolean }) {
    return this.pool.search(await this.readCreds(), base, options);
  }

  /** Find a user by sAMAccountName, DOMAIN\\name or UPN; undefined when none or ambiguous. */
  async findUserDn(login: string): Promise<string | undefined> {
    const bare = login.includes('\\') ? login.split('\\').pop()! : login;
    const v = escapeFilterValue(bare);
    const filter = `(&(objectCategory=person)(objectClass=user)(|(sAMAccountName=${v})(userPrincipalName=${v})))`;
    const page = await this.searchRaw(this.baseDn, { scope: 'sub', filter, attributes: ['distinguishedName'], max: 2 });
    return page.entries.length === 1 ? page.entries[0].dn : undefined;
  }

  /** Facts about a user or computer, with its transitive group SIDs (tokenGroups needs a base search). */
  async principalFacts(dn: string): Promise<PrincipalFacts | undefined> {
    const page = await this.searchRaw(dn, {
      scope: 'base',
      attributes: ['objectGUID', 'objectSid', 'sAMAccountName', 'userPrincipalName', 'displayName', 'userAccountControl', 'adminCount', 'tokenGroups'],
      explicitBufferAttributes: BINARY,
    });
    const e = page.entries[0];
    if (!e) return undefined;
    return toFacts(e);
  }

  /**
   * The object with this GUID in the domain's partition: one base read of `<GUID=…>` (AD's and
   * Samba's GUID binding). A subtree search on objectGUID answers the same at about ten times the
   * cost on Samba (bench/laps: 10 ms against 0.9), and tokenGroups needs a base read anyway.
   */
  private async entryByGuid(guid: string, attributes: string[], binary: string[] = []): Promise<Entry | undefined> {
    if (!isGuid(guid)) return undefined;
    let entries: Entry[];
    try {
      entries = (await this.searchRaw(`<GUID=${guid.toLowerCase()}>`, { scope: 'base', attributes, explicitBufferAttributes: binary })).entries;
    } catch (e) {
      if (noSuchBase(e)) return undefined;
      throw e;
    }
    const e = entries[0];
    // the binding reaches every partition the DC holds: only the domain's objects are ours
    return e && isAtOrBelow(e.dn, this.baseDn) ? e : undefined;
  }

  async dnOfGuid(guid: string): Promise<string | undefined> {
    return (await this.entryByGuid(guid, ['distinguishedName']))?.dn;
  }

  /** Resolve an OU given as DN or GUID; it must be an organizationalUnit strictly below the domain root. */
  async resolveOu(dnOrGuid: string): Promise<{ dn: string; guid: string }> {
    let ou: Entry | undefined;
    if (isGuid(dnOrGuid)) ou = await this.entryByGuid(dnOrGuid, ['objectGUID', 'objectClass'], ['objectGUID']);
    else {
      try {
        ou = (await this.searchRaw(dnOrGuid, { scope: 'base', filter: '(objectClass=*)', attributes: ['objectGUID', 'objectClass'], explicitBufferAttributes: ['objectGUID'], max: 1 })).entries[0];
      } catch (e) {
        if (!noSuchBase(e)) throw e;
      }
    }
    if (!ou) throw new ApiError(400, 'ou_not_found', { ou: dnOrGuid });
    const classes = ([] as string[]).concat(ou.objectClass as string[]).map((c) => c.toLowerCase());
    if (!classes.includes('organizationalunit')) throw new ApiError(400, 'not_an_ou', { ou: dnOrGuid });
    // strictly below the base DN, by a real (unescaped) comma: `OU=x\,DC=corp,DC=example` is no OU of the domain
    if (!isBelow(ou.dn, this.baseDn)) {
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
    let e: Entry | undefined;
    try {
      e = isGuid(ref)
        ? await this.entryByGuid(ref, ['objectClass'])
        : (await this.searchRaw(ref, { scope: 'base', filter: '(objectClass=organizationalUnit)', attributes: ['objectClass'], max: 1 })).entries[0];
    } catch (err) {
      // the directory refused this base (noSuchObject, invalidDNSyntax, a referral...): no such OU;
      // a DC that cannot answer is the pool's (503), never "no such OU"
      if (err instanceof DirectoryError) return undefined;
      throw err;
    }
    const classes = ([] as string[]).concat((e?.objectClass as string[] | undefined) ?? []).map((c) => c.toLowerCase());
    return e && classes.includes('organizationalunit') ? e.dn : undefined;
  }

  /** Resolve a group by DN: its GUID and SID (protected groups, operator assignments). */
  async resolveGroup(dn: string): Promise<{ dn: string; guid: string; sid: string }> {
    const page = await this.searchRaw(dn, { scope: 'base', filter: '(objectClass=group)', attributes: ['objectGUID', 'objectSid'], explicitBufferAttributes: BINARY }).catch(() => ({
      entries: [] as Entry[],
    }));
    const g = page.entries[0];
    if (!g) throw new ApiError(400, 'group_not_found', { group: dn });
    return { dn: g.dn, guid: guidFromBuffer(buf(g.objectGUID)!), sid: sidFromBuffer(buf(g.objectSid)!) };
  }

  async resolvePrincipal(ref: string, kinds: Array<'user' | 'group'> = ['user', 'group']): Promise<Principal | undefined> {
    return resolvePrincipalOn(this.baseDn, (base, o) => this.searchRaw(base, o), ref, kinds);
  }

  async readObject(guid: string, attributes: string[] = COMPUTER_ATTRIBUTES): Promise<ObjectFacts | undefined> {
    // one read: the attributes and the transitive groups (tokenGroups, returned on a base read)
    const e = await this.entryByGuid(guid, [...new Set([...attributes, 'tokenGroups'])], BINARY);
    if (!e) return undefined;
    return toObjectFacts(e, bufs(e.tokenGroups));
  }

  async readGroup(guid: string): Promise<(ObjectFacts & { parentSids: string[] }) | undefined> {
    const e = await this.entryByGuid(guid, GROUP_ATTRIBUTES, BINARY);
    if (!e) return undefined;
    return { ...toObjectFacts(e), parentSids: await this.parentGroupSids(e.dn) };
  }

  async readFactsByDn(dn: string, attributes: string[]): Promise<ObjectFacts | undefined> {
    const found = await this.searchRaw(dn, { scope: 'base', attributes: [...new Set(['objectGUID', 'objectSid', ...attributes])], explicitBufferAttributes: ['objectGUID', 'objectSid'] });
    const e = found.entries[0];
    return e ? toObjectFacts(e) : undefined;
  }

  async readAttributes(dn: string, attributes: string[], opts: { binary?: string[] } = {}): Promise<DirectoryEntry | undefined> {
    try {
      const found = await this.searchRaw(dn, { scope: 'base', attributes, explicitBufferAttributes: opts.binary });
      return found.entries[0];
    } catch (e) {
      if (isDirectoryError(e, 'no_such_object')) return undefined;
      throw e;
    }
  }

  async readAttributesWithDc(dn: string, attributes: string[]): Promise<{ dc: string; entry: DirectoryEntry | undefined }> {
    return this.pool.run(
      await this.readCreds(),
      'read',
      async (client, dc) => {
        try {
          return { dc: dc.name, entry: (await client.search(dn, { scope: 'base', attributes })).searchEntries[0] };
        } catch (e) {
          if (e instanceof ResultCodeError && e.code === 32) return { dc: dc.name, entry: undefined }; // noSuchObject
          throw e;
        }
      },
      { reuse: true },
    );
  }

  async readableAttributeNames(dn: string): Promise<Set<string>> {
    // '*' with names only: absent and withheld attributes are not named
    const found = await this.searchRaw(dn, { scope: 'base', attributes: ['*'], returnAttributeValues: false });
    return new Set(Object.keys(found.entries[0] ?? {}).map((k) => k.toLowerCase()));
  }

  /** SIDs of every group `dn` is nested in, transitively (LDAP_MATCHING_RULE_IN_CHAIN). */
  async parentGroupSids(dn: string): Promise<string[]> {
    const page = await this.searchRaw(this.baseDn, {
      scope: 'sub',
      filter: `(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=${escapeFilterValue(dn)}))`,
      attributes: ['objectSid'],
      explicitBufferAttributes: ['objectSid'],
    });
    return page.entries.map((e) => sidFromBuffer(buf(e.objectSid)!));
  }

  async withTokenGroups(facts: ObjectFacts[]): Promise<ObjectFacts[]> {
    if (!facts.length) return [];
    const creds = await this.readCreds();
    return this.pool.run(
      creds,
      'read',
      async (client) => {
        // one connection, the base reads pipelined a few at a time (ldapts matches answers by message id)
        const out: ObjectFacts[] = [];
        for (let i = 0; i < facts.length; i += TOKEN_GROUPS_IN_FLIGHT) {
          const chunk = facts.slice(i, i + TOKEN_GROUPS_IN_FLIGHT);
          const tgs = await Promise.all(chunk.map((f) => client.search(f.dn, { scope: 'base', attributes: ['tokenGroups'], explicitBufferAttributes: ['tokenGroups'] })));
          chunk.forEach((f, j) => out.push({ ...f, tokenGroups: bufs(tgs[j].searchEntries[0]?.tokenGroups).map(sidFromBuffer) }));
        }
        return out;
      },
      { reuse: true },
    );
  }

  async search(req: SearchRequest): Promise<{ entries: ObjectFacts[]; incomplete: boolean }> {
    const page = await this.searchRaw(req.base, { scope: req.scope ?? 'sub', filter: req.filter, attributes: req.attributes, explicitBufferAttributes: ['objectGUID', 'objectSid'], max: req.max });
    return { entries: page.entries.filter((e) => e.objectGUID !== undefined && bufs(e.objectGUID).length).map((e) => toObjectFacts(e)), incomplete: page.incomplete };
  }

  async schemaAttributes(names: string[]): Promise<string[]> {
    const found = await this.searchRaw(`CN=Schema,CN=Configuration,${this.baseDn}`, {
      scope: 'one',
      filter: `(|${names.map((n) => `(lDAPDisplayName=${escapeFilterValue(n)})`).join('')})`,
      attributes: ['lDAPDisplayName'],
    });
    return found.entries.map((e) => String(one(e.lDAPDisplayName)).toLowerCase());
  }

  async schemaIdGuid(ldapDisplayName: string): Promise<string | undefined> {
    const found = await this.searchRaw(`CN=Schema,CN=Configuration,${this.baseDn}`, {
      scope: 'one',
      filter: `(lDAPDisplayName=${escapeFilterValue(ldapDisplayName)})`,
      attributes: ['schemaIDGUID'],
      explicitBufferAttributes: ['schemaIDGUID'],
    });
    const g = buf(found.entries[0]?.schemaIDGUID);
    return g ? guidFromBuffer(g) : undefined;
  }

  async readSecurityDescriptor(dn: string): Promise<Buffer | undefined> {
    const creds = await this.readCreds();
    return this.pool.run(
      creds,
      'read',
      async (client) => {
        const obj = await client.search(dn, { scope: 'base', attributes: ['nTSecurityDescriptor'], explicitBufferAttributes: ['nTSecurityDescriptor'] }, new SdFlagsDaclControl());
        return buf(obj.searchEntries[0]?.nTSecurityDescriptor);
      },
      { reuse: true },
    );
  }

  async accountSids(upn: string): Promise<Set<string>> {
    const me = await this.searchRaw(this.baseDn, { scope: 'sub', filter: `(userPrincipalName=${escapeFilterValue(upn)})`, attributes: ['objectSid'], explicitBufferAttributes: ['objectSid'] });
    const dn = me.entries[0]?.dn;
    const tg = dn ? (await this.searchRaw(dn, { scope: 'base', attributes: ['tokenGroups', 'objectSid'], explicitBufferAttributes: ['tokenGroups', 'objectSid'] })).entries[0] : undefined;
    return new Set(['S-1-1-0', 'S-1-5-11', ...bufs(tg?.tokenGroups).map(sidFromBuffer), ...bufs(tg?.objectSid).map(sidFromBuffer)]);
  }

  async readLaps(guid: string): Promise<LapsValues | undefined> {
    const facts = await this.readObject(guid, [...COMPUTER_ATTRIBUTES, 'msLAPS-Password', 'ms-Mcs-AdmPwd']);
    if (!facts) return undefined;
    const windows = one(facts.attributes['msLAPS-Password']);
    const legacy = one(facts.attributes['ms-Mcs-AdmPwd']);
    // the values leave the facts: nothing downstream of a decision carries a password by accident
    delete facts.attributes['msLAPS-Password'];
    delete facts.attributes['ms-Mcs-AdmPwd'];
    return { facts, windows, legacy };
  }

  async modify(dn: string, changes: DirectoryChange[], opts: WriteOptions = {}): Promise<void> {
    const creds = opts.as ?? (await this.readCreds());
    await this.pool.run(creds, 'write', (client) => client.modify(dn, changes.map(toChange)));
  }

  async moveObject(dn: string, newRdn: string, newParentDn: string | undefined, opts: WriteOptions = {}): Promise<void> {
    const creds = opts.as ?? (await this.readCreds());
    // ldapts splits the new DN at its first unescaped comma: the RDN, then the new superior
    await this.pool.run(creds, 'write', (client) => client.modifyDN(dn, newParentDn ? `${newRdn},${newParentDn}` : newRdn));
  }

  async addObject(dn: string, attributes: Record<string, string | string[]>, opts: WriteOptions = {}): Promise<void> {
    const creds = opts.as ?? (await this.readCreds());
    await this.pool.run(creds, 'write', (client) => client.add(dn, attributes));
  }

  async deleteObject(dn: string, opts: WriteOptions = {}): Promise<void> {
    const creds = opts.as ?? (await this.readCreds());
    await this.pool.run(creds, 'write', (client) => client.del(dn));
  }

  async writeSecurityDescriptor(dn: string, sd: Buffer, opts: WriteOptions = {}): Promise<void> {
    const creds = opts.as ?? (await this.readCreds());
    await this.pool.run(creds, 'write', (client) =>
      client.modify(dn, [new Change({ operation: 'replace', modification: new Attribute({ type: 'nTSecurityDescriptor', values: [sd as unknown as string] }) })], new SdFlagsDaclControl()),
    );
  }

  async setPassword(dn: string, password: string, opts: WriteOptions & { mustChange: boolean; unlock: boolean }): Promise<void> {
    await this.modify(
      dn,
      [
        { operation: 'replace', attribute: 'unicodePwd', values: [Buffer.from(`"${password}"`, 'utf16le')] },
        { operation: 'replace', attribute: 'pwdLastSet', values: [opts.mustChange ? '0' : '-1'] },
        ...(opts.unlock ? [{ operation: 'replace' as const, attribute: 'lockoutTime', values: ['0'] }] : []),
      ],
      opts,
    );
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
