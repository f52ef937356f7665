import { LdapDirectory, type DirectoryPool } from '../../lib/directory';
import { ApiError } from '../../lib/errors';

// resolveOu accepts an OU only strictly below the base DN by a real comma (the containment check
// of isBelow, lib/directory/dn.ts): a DN whose text merely ends with `,<base>` behind an escaped
// comma names an object outside the domain's tree and is refused like any OU outside it.
const BASE = 'DC=corp,DC=example,DC=test';
const GUID = Buffer.from('00112233445566778899aabbccddeeff', 'hex');

function directoryAnswering(dn: string) {
  const pool = { search: async () => ({ entries: [{ dn, objectClass: ['top', 'organizationalUnit'], objectGUID: [GUID] }] }) } as unknown as DirectoryPool;
  return new LdapDirectory(pool, BASE, async () => ({ user: 'svc', password: 'x' }));
}

async function codeOf(dn: string): Promise<string> {
  try {
    await directoryAnswering(dn).resolveOu(dn);
    return 'ok';
  } catch (e) {
    if (e instanceof ApiError) return e.code;
    throw e;
  }
}

describe('resolveOu: the OU must sit below the base DN', () => {
  it('accepts an OU below the base DN, in any case', async () => {
    expect(await codeOf(`OU=Managed,${BASE}`)).toBe('ok');
    expect(await codeOf(`OU=Desk,OU=Managed,${BASE.toLowerCase()}`)).toBe('ok');
  });

  it('refuses the base DN itself and a DN outside it', async () => {
    expect(await codeOf(BASE)).toBe('ou_not_below_domain_root');
    expect(await codeOf('OU=Managed,DC=other,DC=test')).toBe('ou_not_below_domain_root');
    expect(await codeOf(`OU=Managed,DC=xcorp,DC=example,DC=test`)).toBe('ou_not_below_domain_root');
  });

  it('refuses a DN whose text ends with ",<base>" behind an escaped comma (the endsWith trap)', async () => {
    expect(await codeOf(`OU=x\\,${BASE}`)).toBe('ou_not_below_domain_root');
    // an escaped backslash, then a real comma: below the base
    expect(await codeOf(`OU=x\\\\,${BASE}`)).toBe('ok');
  });
});
