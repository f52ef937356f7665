import { conflict } from '../errors';
import { escapeFilterValue } from '../directory/guid';
import { isAtOrBelow } from '../directory/dn';
import type { ConsoleRuntime } from '../runtime';
import { currentClassification } from './classify';

// What the delegation editor picks from instead of typed DNs and GUIDs (issue 29): the OUs a
// scope may name (the managed OUs and the OUs below them, Tier 0/1 OUs and what is below them
// left out, exactly what resolveScope accepts) as a tree, and the users and security groups an
// assignment may name, found by a search of the domain. Administrators only (settings.manage).

export const OU_TREE_MAX = 500;
export const PRINCIPALS_MAX = 20;

export interface OuNode {
  guid: string;
  dn: string;
  name: string;
  /** names from the managed OU down, e.g. `Managed / Users / Sales` */
  path: string;
  /** 0 for a managed OU */
  depth: number;
}

const rdnValue = (dn: string) => (/^[^=]+=((?:\\.|[^,\\])*)/.exec(dn)?.[1] ?? dn).replace(/\\(.)/g, '$1');
/** The RDN values from `top` (included) down to `dn`. */
function namesBelow(dn: string, top: string): string[] {
  const parts = dn.split(/,(?=(?:OU|CN|DC)=)/i);
  const depth = parts.length - top.split(/,(?=(?:OU|CN|DC)=)/i).length;
  return parts.slice(0, depth + 1).map(rdnValue).reverse();
}

/** The managed OUs with every OU below them, Tier 0/1 OUs (and below) left out, in tree order. */
export async function managedOuTree(rt: ConsoleRuntime): Promise<{ ous: OuNode[]; truncated: boolean }> {
  const settings = await rt.settings();
  if (!settings) throw conflict('not_configured');
  const dir = await rt.directory();
  const { managedOuDns, tierOuDns } = await currentClassification(settings, [], (o) => dir.dnOfGuid(o.guid));
  const seen = new Map<string, OuNode>();
  let truncated = false;
  for (const top of managedOuDns) {
    const { entries, incomplete } = await dir.search({ base: top, filter: '(objectClass=organizationalUnit)', attributes: ['objectGUID', 'ou'], scope: 'sub', max: OU_TREE_MAX });
    truncated ||= incomplete || entries.length >= OU_TREE_MAX;
    for (const e of entries) {
      if (tierOuDns.some((t) => isAtOrBelow(e.dn, t))) continue;
      const names = namesBelow(e.dn, top);
      const key = e.guid.toLowerCase();
      if (!seen.has(key)) seen.set(key, { guid: e.guid, dn: e.dn, name: names.at(-1) ?? e.dn, path: names.join(' / '), depth: names.length - 1 });
    }
  }
  return { ous: [...seen.values()].sort((a, b) => a.path.localeCompare(b.path, undefined, { sensitivity: 'base' })), truncated };
}

export interface PrincipalHit {
  kind: 'user' | 'group';
  guid: string;
  /** sAMAccountName: what the delegation is saved with */
  name: string;
  displayName: string | null;
  /** where it lives, as OU names from the domain down */
  where: string;
}

const USER = '(&(objectCategory=person)(objectClass=user))';
/** security groups only: a distribution group is never in a sign-in token */
const SECURITY_GROUP = '(&(objectClass=group)(groupType:1.2.840.113556.1.4.803:=2147483648))';

/** Users and security groups of the domain whose login, name or display name starts with `q` (at least 2 characters). */
export async function searchPrincipals(rt: ConsoleRuntime, q: string): Promise<{ items: PrincipalHit[]; truncated: boolean }> {
  const text = q.trim();
  if (text.length < 2) return { items: [], truncated: false };
  const dir = await rt.directory();
  const v = escapeFilterValue(text);
  const filter = `(&(|${USER}${SECURITY_GROUP})(|(sAMAccountName=${v}*)(displayName=${v}*)(cn=${v}*)(userPrincipalName=${v}*)))`;
  const { entries } = await dir.search({ base: dir.baseDn, filter, attributes: ['objectGUID', 'objectClass', 'sAMAccountName', 'displayName', 'cn'], scope: 'sub', max: PRINCIPALS_MAX + 1 });
  const items = entries.slice(0, PRINCIPALS_MAX).map((e): PrincipalHit => {
    const at = (k: string) => {
      const x = e.attributes[k];
      return Array.isArray(x) ? x[0] : x;
    };
    const parent = e.dn.replace(/^(?:\\.|[^,\\])*,/, '');
    return {
      kind: e.objectClasses.map((c) => c.toLowerCase()).includes('group') ? 'group' : 'user',
      guid: e.guid,
      name: at('sAMAccountName') ?? at('cn') ?? e.guid,
      displayName: at('displayName') ?? null,
      where: namesBelow(parent, dir.baseDn).slice(1).join(' / ') || '(domain root)',
    };
  });
  return { items: items.sort((a, b) => a.name.localeCompare(b.name)), truncated: entries.length > PRINCIPALS_MAX };
}
