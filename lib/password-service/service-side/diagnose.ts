import { classifyComputer, isBelow, type ClassificationContext } from '../../authz/classify';
import type { Directory, DirectoryCredentials } from '../../directory';
import { COMPUTER_ATTRIBUTES } from '../../directory/objects';
import { daclAces, grantsControlAccess } from '../../laps/security-descriptor';
import type { InstanceSettings } from '../../setup/settings';
import type { ScopeDiagnosis } from '../link';

// The LAPS rights checks of the diagnostics (console spec, Diagnostics checks): computed with the
// LAPS account itself on one sample LAPS-managed standard computer per scope. The password is
// never fetched: the read check asks for attribute names only.

export type { ScopeDiagnosis };

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Does the LAPS account (its token's SIDs) hold Control Access on msLAPS-Password on this object (from its DACL)? */
export async function holdsReadRight(dir: Directory, dn: string, sids: Set<string>): Promise<boolean> {
  const [attributeGuid, sd] = await Promise.all([dir.schemaIdGuid('msLAPS-Password'), dir.readSecurityDescriptor(dn)]);
  return !!attributeGuid && !!sd && grantsControlAccess(daclAces(sd), sids, attributeGuid);
}

export async function diagnoseLapsRights(
  dir: Directory,
  creds: DirectoryCredentials,
  _s: InstanceSettings,
  scopeDns: string[],
  ctx: ClassificationContext,
): Promise<ScopeDiagnosis[]> {
  const out: ScopeDiagnosis[] = [];
  for (const scope of scopeDns) {
    // LAPS-managed: the device wrote an expiration time (not confidential)
    const found = await dir.search({
      base: scope,
      filter: '(&(objectCategory=computer)(|(msLAPS-PasswordExpirationTime=*)(ms-Mcs-AdmPwdExpirationTime=*)))',
      attributes: COMPUTER_ATTRIBUTES,
      max: 50,
    });
    // the first by name: the same sample on every run
    const cn = (e: { attributes: Record<string, unknown> }) => String(list(e.attributes.cn)[0] ?? '');
    const facts = await dir.withTokenGroups([...found.entries].sort((a, b) => cn(a).localeCompare(cn(b))));
    const sample = facts.find((f) => classifyComputer(f, ctx).kind === 'standard' && ctx.managedOuDns.some((m) => isBelow(f.dn, m)));
    if (!sample) {
      out.push({ scope, checks: ['no_sample_computer'] });
      continue;
    }
    // names only, of every attribute the LAPS account may read (absent and withheld ones are not named)
    const readable = await dir.readableAttributeNames(sample.dn);
    const checks: string[] = [];
    if (readable.has('mslaps-password') || readable.has('ms-mcs-admpwd')) checks.push('laps_read_rights_effective');
    else if (await holdsReadRight(dir, sample.dn, await dir.accountSids(creds.user))) checks.push('laps_encrypted_only');
    else checks.push('laps_read_rights_missing');
    const eff = await dir.readAttributes(sample.dn, ['allowedAttributesEffective']);
    const writable = list(eff?.allowedAttributesEffective).map((a) => String(a).toLowerCase());
    checks.push(writable.includes('mslaps-passwordexpirationtime') || writable.includes('ms-mcs-admpwdexpirationtime') ? 'laps_expire_rights_present' : 'laps_expire_rights_missing');
    out.push({ scope, sample: String(list(sample.attributes.cn)[0] ?? sample.dn), checks });
  }
  return out;
}
