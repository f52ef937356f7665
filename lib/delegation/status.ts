import type { Directory } from '../directory';
import { ACE_FLAG, ACE_TYPE, aceSddl, daclAces, RIGHT, type Ace } from '../directory/security-descriptor';
import { ApiError } from '../errors';
import type { ModelRight, RightsModel } from './model';

// The rights model against the directory: the concrete ACEs (schema GUIDs and the account's SID
// looked up in this forest), and whether each scope OU's DACL holds them now. Diagnostics report
// "delegation export out of date" when it does not (console spec, Versioning 4).

const MASK: Record<ModelRight['right'], number> = {
  CC: RIGHT.CREATE_CHILD,
  SD: RIGHT.DELETE,
  WP: RIGHT.WRITE_PROPERTY,
  RPCR: RIGHT.READ_PROPERTY | RIGHT.CONTROL_ACCESS,
  // read property, list children, list object, read control (0x4, 0x80, 0x20000)
  RPLCLORC: RIGHT.READ_PROPERTY | 0x4 | 0x80 | 0x20000,
};
const FLAGS: Record<ModelRight['inheritance'], number> = { CI: ACE_FLAG.CONTAINER_INHERIT, CIIO: ACE_FLAG.CONTAINER_INHERIT | ACE_FLAG.INHERIT_ONLY };

export interface ResolvedOu {
  dn: string;
  guid: string;
  aces: Array<{ right: ModelRight; ace: Ace }>;
}
export interface ResolvedModel {
  identity: string;
  sid: string;
  ous: ResolvedOu[];
  /** schema GUID → lDAPDisplayName, for readable SDDL */
  names: Map<string, string>;
}

/** The model's ACEs in this forest; OUs at their current DN (followed by GUID). */
export async function resolveRightsModel(dir: Directory, model: RightsModel): Promise<ResolvedModel> {
  const account = await dir.resolvePrincipal(model.identity, ['user']);
  if (!account) throw new ApiError(409, 'delegation_identity_not_found', { identity: model.identity });
  const names = new Set<string>();
  for (const o of model.ous) for (const r of o.rights) for (const n of [r.objectType, r.inheritedObjectType]) if (n) names.add(n);
  const guids = new Map<string, string>();
  await Promise.all(
    [...names].map(async (n) => {
      const g = await dir.schemaIdGuid(n);
      if (!g) throw new ApiError(409, 'schema_name_unknown', { name: n });
      guids.set(n, g);
    }),
  );
  const ous: ResolvedOu[] = [];
  for (const o of model.ous) {
    const dn = (await dir.dnOfGuid(o.ou.guid)) ?? o.ou.dn;
    ous.push({
      dn,
      guid: o.ou.guid,
      aces: o.rights.map((right) => ({
        right,
        ace: {
          type: ACE_TYPE.OBJECT_ALLOW,
          flags: FLAGS[right.inheritance],
          mask: MASK[right.right],
          objectType: right.objectType ? guids.get(right.objectType) : undefined,
          inheritedObjectType: right.inheritedObjectType ? guids.get(right.inheritedObjectType) : undefined,
          sid: account.sid,
        },
      })),
    });
  }
  return { identity: model.identity, sid: account.sid, ous, names: new Map([...guids].map(([n, g]) => [g.toLowerCase(), n])) };
}

const same = (a?: string, b?: string) => (a ?? '').toLowerCase() === (b ?? '').toLowerCase();
const INHERITANCE_FLAGS = ACE_FLAG.CONTAINER_INHERIT | ACE_FLAG.INHERIT_ONLY | ACE_FLAG.OBJECT_INHERIT | ACE_FLAG.NO_PROPAGATE;

/** Does the DACL hold an allow ACE giving at least `want` (explicit or inherited from a parent OU)? */
export function daclHolds(aces: Ace[], want: Ace): boolean {
  return aces.some(
    (a) =>
      (a.type === ACE_TYPE.OBJECT_ALLOW || a.type === ACE_TYPE.ALLOW) &&
      a.sid === want.sid &&
      (a.mask & want.mask) === want.mask &&
      (a.flags & INHERITANCE_FLAGS) === (want.flags & INHERITANCE_FLAGS) &&
      same(a.objectType, want.objectType) &&
      same(a.inheritedObjectType, want.inheritedObjectType),
  );
}

export interface DelegationExportStatus {
  kind: RightsModel['kind'];
  identity: string;
  /** every right of the model is in place on every OU */
  upToDate: boolean;
  /** the rights missing, per OU, in SDDL with names (`(OA;CIIO;WP;cn;user;S-1-5-...)`) */
  missing: Array<{ ou: string; ace: string }>;
}

/**
 * Whether the directory's current ACEs match the exported model: every ACE of the model present
 * on its OU (explicitly, or inherited from a parent OU with the same inheritance). Read with the
 * read account (the SD flags control reads the DACL only). Used by diagnostics for "delegation
 * export out of date".
 */
export async function delegationExportStatus(dir: Directory, model: RightsModel): Promise<DelegationExportStatus> {
  const resolved = await resolveRightsModel(dir, model);
  const missing: DelegationExportStatus['missing'] = [];
  for (const ou of resolved.ous) {
    const sd = await dir.readSecurityDescriptor(ou.dn);
    const aces = sd ? daclAces(sd) : [];
    for (const { ace } of ou.aces) if (!daclHolds(aces, ace)) missing.push({ ou: ou.dn, ace: aceSddl(ace, (g) => resolved.names.get(g.toLowerCase()) ?? g) });
  }
  return { kind: model.kind, identity: model.identity, upToDate: missing.length === 0, missing };
}
