import type { Client } from 'ldapts';
import { classifyComputer, isBelow, type ClassificationContext } from '../authz/classify';
import { escapeFilterValue, guidFromBuffer, sidFromBuffer, type Directory, type DirectoryCredentials } from '../directory';
import { COMPUTER_ATTRIBUTES, withTokenGroups } from '../directory/objects';
import { daclAces, grantsControlAccess, SdFlagsDaclControl } from '../laps/security-descriptor';
import type { InstanceSettings } from '../setup/settings';

// The LAPS rights checks of the diagnostics (console spec, Diagnostics checks): computed with the
// LAPS account itself on one sample LAPS-managed standard computer per scope. The password is
// never fetched: the read check asks for attribute names only.

export interface ScopeDiagnosis {
  scope: string;
  sample?: string;
  checks: string[];
}

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

async function lapsAccountSids(client: Client, baseDn: string, upn: string): Promise<Set<string>> {
  const me = await client.search(baseDn, { scope: 'sub', filter: `(userPrincipalName=${escapeFilterValue(upn)})`, attributes: ['objectSid'], explicitBufferAttributes: ['objectSid'] });
  const dn = me.searchEntries[0]?.dn;
  const tg = dn ? (await client.search(dn, { scope: 'base', attributes: ['tokenGroups', 'objectSid'], explicitBufferAttributes: ['tokenGroups', 'objectSid'] })).searchEntries[0] : undefined;
  return new Set(['S-1-1-0', 'S-1-5-11', ...list(tg?.tokenGroups).map((b) => sidFromBuffer(b as Buffer)), ...list(tg?.objectSid).map((b) => sidFromBuffer(b as Buffer))]);
}

/** Does the LAPS account hold Control Access on msLAPS-Password on this object (from its DACL)? */
export async function holdsReadRight(client: Client, dn: string, baseDn: string, sids: Set<string>): Promise<boolean> {
  const schema = `CN=Schema,CN=Configuration,${baseDn}`;
  const attr = await client.search(schema, { scope: 'one', filter: '(lDAPDisplayName=msLAPS-Password)', attributes: ['schemaIDGUID'], explicitBufferAttributes: ['schemaIDGUID'] });
  const g = attr.searchEntries[0]?.schemaIDGUID as Buffer | undefined;
  if (!g) return false;
  const obj = await client.search(dn, { scope: 'base', attributes: ['nTSecurityDescriptor'], explicitBufferAttributes: ['nTSecurityDescriptor'] }, new SdFlagsDaclControl());
  const sd = obj.searchEntries[0]?.nTSecurityDescriptor as Buffer | undefined;
  return !!sd && grantsControlAccess(daclAces(sd), sids, guidFromBuffer(g));
}

export { lapsAccountSids };

export async function diagnoseLapsRights(
  dir: Directory,
  creds: DirectoryCredentials,
  s: InstanceSettings,
  scopeDns: string[],
  ctx: ClassificationContext,
): Promise<ScopeDiagnosis[]> {
  const out: ScopeDiagnosis[] = [];
  for (const scope of scopeDns) {
    // LAPS-managed: the device wrote an expiration time (not confidential)
    const found = await dir.pool.search(creds, scope, {
      scope: 'sub',
      filter: '(&(objectCategory=computer)(|(msLAPS-PasswordExpirationTime=*)(ms-Mcs-AdmPwdExpirationTime=*)))',
      attributes: COMPUTER_ATTRIBUTES,
      explicitBufferAttributes: ['objectGUID', 'objectSid'],
      max: 50,
    });
    // the first by name: the same sample on every run
    const cn = (e: Record<string, unknown>) => String(list(e.cn)[0] ?? '');
    const facts = await withTokenGroups(dir, [...found.entries].sort((a, b) => cn(a).localeCompare(cn(b))));
    const sample = facts.find((f) => classifyComputer(f, ctx).kind === 'standard' && ctx.managedOuDns.some((m) => isBelow(f.dn, m)));
    if (!sample) {
      out.push({ scope, checks: ['no_sample_computer'] });
      continue;
    }
    const checks = await dir.pool.run(creds, 'read', async (client) => {
      // names only, of every attribute the LAPS account may read ('*': absent and withheld ones are not named)
      const names = await client.search(sample.dn, { scope: 'base', attributes: ['*'], returnAttributeValues: false });
      const readable = new Set(Object.keys(names.searchEntries[0] ?? {}).map((k) => k.toLowerCase()));
      const result: string[] = [];
      if (readable.has('mslaps-password') || readable.has('ms-mcs-admpwd')) result.push('laps_read_rights_effective');
      else if (await holdsReadRight(client, sample.dn, s.baseDn, await lapsAccountSids(client, s.baseDn, creds.user))) result.push('laps_encrypted_only');
      else result.push('laps_read_rights_missing');
      const eff = await client.search(sample.dn, { scope: 'base', attributes: ['allowedAttributesEffective'] });
      const writable = list(eff.searchEntries[0]?.allowedAttributesEffective).map((a) => String(a).toLowerCase());
      result.push(writable.includes('mslaps-passwordexpirationtime') || writable.includes('ms-mcs-admpwdexpirationtime') ? 'laps_expire_rights_present' : 'laps_expire_rights_missing');
      return result;
    });
    out.push({ scope, sample: String(list(sample.attributes.cn)[0] ?? sample.dn), checks });
  }
  return out;
}
