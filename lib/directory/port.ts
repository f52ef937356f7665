import type { DirectoryEntry, ObjectFacts } from './objects';
import type { DirectoryCredentials } from './pool';
import type { Principal } from './principals';

// The directory as the domain sees it (the port): what it reads and writes, by GUID and DN. Its
// one adapter is LdapDirectory (./index.ts), over the pool of LDAPS connections (./pool.ts).

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

/** One attribute change (replace, add or delete values). */
export interface DirectoryChange {
  operation: 'replace' | 'add' | 'delete';
  attribute: string;
  values: Array<string | Buffer>;
}

/** Options of a write: which technical account makes it (default: the directory's own). */
export interface WriteOptions {
  as?: DirectoryCredentials;
}

/** A scoped search: LDAP pages of Directory:PageSize, at most `max` (≤ Directory:SearchMaxResults), then `incomplete`. */
export interface SearchRequest {
  base: string;
  filter: string;
  attributes: string[];
  scope?: 'base' | 'one' | 'sub';
  max?: number;
}

/** A computer's LAPS values (password service only: the LAPS account is the only reader). */
export interface LapsValues {
  facts: ObjectFacts;
  /** msLAPS-Password (Windows LAPS, cleartext JSON) */
  windows?: string;
  /** ms-Mcs-AdmPwd (legacy LAPS) */
  legacy?: string;
}

/**
 * The directory as domain code sees it: domain operations on fresh facts (read by GUID or DN),
 * one error type (DirectoryError, mapped once in ./errors), no LDAP client in sight. The one
 * implementation talks to the domain controllers over LDAPS (LdapDirectory).
 */
export interface Directory {
  readonly baseDn: string;
  /** The directory's own technical account (sign-in's stand-in account). */
  readCreds(): Promise<DirectoryCredentials>;
  /** Check credentials by a bind on a connection of their own. */
  verifyCredentials(creds: DirectoryCredentials): Promise<boolean>;

  findUserDn(login: string): Promise<string | undefined>;
  principalFacts(dn: string): Promise<PrincipalFacts | undefined>;
  dnOfGuid(guid: string): Promise<string | undefined>;
  resolveOu(dnOrGuid: string): Promise<{ dn: string; guid: string }>;
  filterOuDn(ref: string): Promise<string | undefined>;
  resolveGroup(dn: string): Promise<{ dn: string; guid: string; sid: string }>;
  resolvePrincipal(ref: string, kinds?: Array<'user' | 'group'>): Promise<Principal | undefined>;

  /** The object with this GUID, with `attributes` and its transitive group SIDs (tokenGroups). */
  readObject(guid: string, attributes?: string[]): Promise<ObjectFacts | undefined>;
  /** A group by GUID with the SIDs of the groups it is nested in (its classification needs them). */
  readGroup(guid: string): Promise<(ObjectFacts & { parentSids: string[] }) | undefined>;
  /** An object by DN (base read) as facts; undefined when the directory has none there. */
  readFactsByDn(dn: string, attributes: string[]): Promise<ObjectFacts | undefined>;
  /** Attribute values of the object at `dn` (base read); undefined when none there. */
  readAttributes(dn: string, attributes: string[], opts?: { binary?: string[] }): Promise<DirectoryEntry | undefined>;
  /**
   * Attribute values of the object at `dn` with the name of the DC that answered: for the
   * attributes each DC keeps for itself (badPwdCount, badPasswordTime are never replicated).
   */
  readAttributesWithDc?(dn: string, attributes: string[]): Promise<{ dc: string; entry: DirectoryEntry | undefined }>;
  /** Names of the attributes the directory lets this account read on `dn` (values never fetched). */
  readableAttributeNames(dn: string): Promise<Set<string>>;
  /** SIDs of every group `dn` is nested in, transitively. */
  parentGroupSids(dn: string): Promise<string[]>;
  /** The same facts with their transitive group SIDs (tokenGroups: one base read each). */
  withTokenGroups(facts: ObjectFacts[]): Promise<ObjectFacts[]>;
  /** Paged search; every entry carries its GUID (and SID where it has one). */
  search(req: SearchRequest): Promise<{ entries: ObjectFacts[]; incomplete: boolean }>;
  /** lDAPDisplayNames of the schema (lowercased) among `names` the directory defines. */
  schemaAttributes(names: string[]): Promise<string[]>;
  /** schemaIDGUID of a schema attribute. */
  schemaIdGuid(ldapDisplayName: string): Promise<string | undefined>;
  /** The DACL-only security descriptor of the object at `dn` (SD flags control). */
  readSecurityDescriptor(dn: string): Promise<Buffer | undefined>;
  /** SIDs a token of the account `upn` carries (its own, its groups', Everyone, Authenticated Users). */
  accountSids(upn: string): Promise<Set<string>>;
  /** A computer by GUID with its LAPS values (read with the directory's own account: the LAPS account). */
  readLaps(guid: string): Promise<LapsValues | undefined>;

  /** A change sent once (never replayed: a lost answer is `directory_outcome_unknown`). */
  modify(dn: string, changes: DirectoryChange[], opts?: WriteOptions): Promise<void>;
  /** Set an account's password (unicodePwd), and pwdLastSet / lockoutTime with it in one change. */
  setPassword(dn: string, password: string, opts: WriteOptions & { mustChange: boolean; unlock: boolean }): Promise<void>;
  /** Rename and/or move an object (modifyDN): `newRdn` (`CN=...`, escaped) under `newParentDn` (default: where it is). Sent once. */
  moveObject(dn: string, newRdn: string, newParentDn: string | undefined, opts?: WriteOptions): Promise<void>;
  /** Create an object at `dn` with these attribute values. Sent once. */
  addObject(dn: string, attributes: Record<string, string | string[]>, opts?: WriteOptions): Promise<void>;
  /** Delete the (leaf) object at `dn`. Sent once. */
  deleteObject(dn: string, opts?: WriteOptions): Promise<void>;
  /** Replace the DACL of the object at `dn` (a DACL-only security descriptor, SD flags control). Sent once. */
  writeSecurityDescriptor(dn: string, sd: Buffer, opts?: WriteOptions): Promise<void>;

  stop(): void;
}
