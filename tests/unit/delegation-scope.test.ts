import { resolveScope } from '../../lib/authz/admin';
import type { Directory } from '../../lib/directory';
import type { InstanceSettings } from '../../lib/setup/settings';

// A delegation's scope is checked against the managed and Tier OUs where the decisions find them
// (by GUID, lib/authz/classify currentClassification): a managed OU that cannot be found manages
// nothing (an OU made again at its old DN is not it), a Tier OU that cannot be found still
// protects its recorded DN.

const BASE = 'DC=corp,DC=example,DC=test';
const G = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** A directory of OUs by DN (current GUIDs), and the configured GUIDs it still knows. */
function directory(ous: Record<string, string>): Directory {
  const byGuid = new Map(Object.entries(ous).map(([dn, guid]) => [guid, dn]));
  return {
    dnOfGuid: async (guid: string) => byGuid.get(guid),
    resolveOu: async (ref: string) => {
      const dn = byGuid.get(ref) ?? Object.keys(ous).find((d) => d.toLowerCase() === ref.toLowerCase());
      if (!dn) throw Object.assign(new Error('ou_not_found'), { status: 400, code: 'ou_not_found' });
      return { dn, guid: ous[dn] };
    },
  } as unknown as Directory;
}
const settings = (managed: Array<[string, string]>, tiers: Array<[string, string]> = []) =>
  ({ managedOus: managed.map(([dn, guid]) => ({ dn, guid })), tierOus: tiers.map(([dn, guid]) => ({ dn, guid })) }) as unknown as InstanceSettings;

describe('delegation scope against the managed and Tier OUs as found now', () => {
  it('a managed OU deleted and made again at the same DN (a new GUID) manages nothing: ou_not_managed', async () => {
    const dir = directory({ [`OU=Staff,${BASE}`]: G(9), [`OU=Desk,OU=Staff,${BASE}`]: G(10) });
    await expect(resolveScope(dir, settings([[`OU=Staff,${BASE}`, G(1)]]), [`OU=Desk,OU=Staff,${BASE}`])).rejects.toMatchObject({ code: 'ou_not_managed' });
  });

  it('a managed OU renamed is followed by its GUID; a scope given by GUID resolves; duplicates dropped', async () => {
    const dir = directory({ [`OU=People,${BASE}`]: G(1), [`OU=Desk,OU=People,${BASE}`]: G(2) });
    const scope = await resolveScope(dir, settings([[`OU=Staff,${BASE}`, G(1)]]), [G(2), `ou=desk,ou=people,${BASE.toLowerCase()}`]);
    expect(scope).toEqual([{ dn: `OU=Desk,OU=People,${BASE}`, guid: G(2) }]);
  });

  it('a Tier OU that cannot be found still protects its recorded DN: ou_in_tier', async () => {
    const dir = directory({ [`OU=Corp,${BASE}`]: G(1), [`OU=Servers,OU=T0,OU=Corp,${BASE}`]: G(3) });
    await expect(resolveScope(dir, settings([[`OU=Corp,${BASE}`, G(1)]], [[`OU=T0,OU=Corp,${BASE}`, G(2)]]), [`OU=Servers,OU=T0,OU=Corp,${BASE}`])).rejects.toMatchObject({ code: 'ou_in_tier' });
  });

  it('an empty reference is not the root DSE: ou_not_found', async () => {
    const dir = directory({ [`OU=Corp,${BASE}`]: G(1) });
    await expect(resolveScope(dir, settings([[`OU=Corp,${BASE}`, G(1)]]), ['  '])).rejects.toMatchObject({ code: 'ou_not_found' });
  });
});
