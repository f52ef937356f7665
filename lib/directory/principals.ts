import type { Entry, Filter } from 'ldapts';
import { isDirectoryError } from './errors';
import { isAtOrBelow } from './dn';
import { escapeFilterValue, guidFromBuffer, isGuid, sidFromBuffer } from './guid';

type RawSearch = (
  base: string,
  options: { scope: 'base' | 'sub'; filter: string | Filter; attributes: string[]; explicitBufferAttributes: string[]; max: number },
) => Promise<{ entries: Entry[] }>;

// Directory users and groups named by an administrator (delegation assignees, Super
// administrators): given by DN, sAMAccountName (or DOMAIN\name, or a UPN) or objectGUID.

export interface Principal {
  kind: 'user' | 'group';
  dn: string;
  guid: string;
  sid: string;
  /** sAMAccountName */
  name: string;
  /** groups only: a security group (a distribution group never appears in a token) */
  securityGroup?: boolean;
  userAccountControl?: number;
}

/**
 * The part of the Directory port (index.ts) the wrappers below use, spelled structurally so this
 * module does not import index.ts, which uses resolvePrincipalOn (no import cycle).
 */
export interface PrincipalLookup {
  resolvePrincipal(ref: string, kinds?: Array<'user' | 'group'>): Promise<Principal | undefined>;
  dnOfGuid(guid: string): Promise<string | undefined>;
}

const USER = '(&(objectCategory=person)(objectClass=user))';
const GROUP = '(objectClass=group)';
const GROUP_TYPE_SECURITY = 0x80000000;

const first = <T>(v: unknown): T | undefined => (Array.isArray(v) ? (v[0] as T) : (v as T | undefined));
const looksLikeDn = (s: string) => /^(cn|ou|dc|o)=/i.test(s.trim()) && s.includes('=');

/**
 * Resolve one reference to a user or a group (as `kinds` allow); undefined when nothing or more
 * than one object matches. Computers and other objects never resolve.
 */
export const resolvePrincipal = (dir: PrincipalLookup, ref: string, kinds: Array<'user' | 'group'> = ['user', 'group']) => dir.resolvePrincipal(ref, kinds);

export async function resolvePrincipalOn(baseDn: string, search: RawSearch, ref: string, kinds: Array<'user' | 'group'>): Promise<Principal | undefined> {
  const kindFilter = kinds.length === 2 ? `(|${USER}${GROUP})` : kinds[0] === 'user' ? USER : GROUP;
  const value = ref.trim();
  let base = baseDn;
  let scope: 'base' | 'sub' = 'sub';
  let filter: string | Filter;
  // a GUID: one base read of `<GUID=…>` (a subtree search on objectGUID costs ten times more)
  if (isGuid(value)) {
    base = `<GUID=${value.toLowerCase()}>`;
    scope = 'base';
    filter = kindFilter;
  }
  // a SID in its string form (AD accepts it in an objectSid filter)
  else if (/^S-1-5(-\d+){1,14}$/i.test(value)) filter = `(&${kindFilter}(objectSid=${value.toUpperCase()}))`;
  else if (looksLikeDn(value)) {
    base = value;
    scope = 'base';
    filter = kindFilter;
  } else {
    const bare = escapeFilterValue(value.includes('\\') ? value.split('\\').pop()! : value);
    const byUpn = value.includes('@') ? `(userPrincipalName=${bare})` : '';
    filter = `(&${kindFilter}(|(sAMAccountName=${bare})${byUpn}))`;
  }
  let entries: Entry[];
  try {
    entries = (
      await search(base, {
        scope,
        filter,
        attributes: ['objectGUID', 'objectSid', 'objectClass', 'objectCategory', 'sAMAccountName', 'groupType', 'userAccountControl'],
        explicitBufferAttributes: ['objectGUID', 'objectSid'],
        max: 2,
      })
    ).entries;
  } catch (e) {
    if (isDirectoryError(e, 'no_such_object', 'invalid_dn')) return undefined;
    throw e;
  }
  if (entries.length !== 1) return undefined;
  const e = entries[0];
  // a base read (GUID or DN) reaches every partition the DC holds: only the domain's objects resolve
  if (!isAtOrBelow(e.dn, baseDn)) return undefined;
  const classes = ([] as string[]).concat(e.objectClass as string[]).map((c) => c.toLowerCase());
  const person = /^cn=person,/i.test(String(first<string>(e.objectCategory) ?? ''));
  const kind = classes.includes('group') ? 'group' : classes.includes('user') && person ? 'user' : undefined;
  if (!kind || !kinds.includes(kind) || !e.objectSid) return undefined;
  const groupType = Number(first<string>(e.groupType) ?? 0);
  return {
    kind,
    dn: e.dn,
    guid: guidFromBuffer(first<Buffer>(e.objectGUID)!),
    sid: sidFromBuffer(first<Buffer>(e.objectSid)!),
    name: String(first<string>(e.sAMAccountName) ?? ''),
    ...(kind === 'group' ? { securityGroup: (groupType & GROUP_TYPE_SECURITY) !== 0 } : { userAccountControl: Number(first<string>(e.userAccountControl) ?? 0) }),
  };
}

/** The DN of the object with this objectGUID (one base read of `<GUID=…>`). */
export const dnOfObjectGuid = (dir: PrincipalLookup, guid: string) => dir.dnOfGuid(guid);
