import type { Directory } from '../../lib/directory';
import { isoToFileTime } from '../../lib/directory/objects';
import { signInFacts, userGroups } from '../../lib/users';

// A user's page (issue 29, helpdesk context): the lockout time, the bad-password count and time as
// kept by the DC that answered (named), and the groups by name.
const at = Date.parse('2026-11-27T21:00:00.000Z');
const dirAnswering = (entry: Record<string, string> | undefined, asked: string[][] = []) =>
  ({
    readAttributesWithDc: async (_dn: string, attributes: string[]) => {
      asked.push(attributes);
      return { dc: 'dc2', entry: entry && { dn: 'CN=Ben Fox,OU=Staff,DC=corp,DC=example', ...entry } };
    },
  }) as unknown as Directory;

describe('signInFacts', () => {
  it('says when the account locked out, its bad passwords and the DC that counted them', async () => {
    const asked: string[][] = [];
    const f = await signInFacts(dirAnswering({ lockoutTime: isoToFileTime(at), badPwdCount: '5', badPasswordTime: isoToFileTime(at - 1000) }, asked), 'CN=Ben Fox,OU=Staff,DC=corp,DC=example', true);
    expect(f).toEqual({ lockedOutAt: '2026-11-27T21:00:00.000Z', badPasswordCount: 5, lastBadPassword: '2026-11-27T20:59:59.000Z', dc: 'dc2' });
    expect(asked).toEqual([['lockoutTime', 'badPwdCount', 'badPasswordTime']]);
  });

  it('gives no lockout time for an account no longer locked out (an old lockoutTime past its duration)', async () => {
    const f = await signInFacts(dirAnswering({ lockoutTime: isoToFileTime(at), badPwdCount: '0', badPasswordTime: '0' }), 'CN=x,DC=corp,DC=example', false);
    expect(f).toEqual({ lockedOutAt: null, badPasswordCount: 0, lastBadPassword: null, dc: 'dc2' });
  });

  it('answers nulls when the attributes are not readable or the object is gone', async () => {
    expect(await signInFacts(dirAnswering({}), 'CN=x,DC=corp,DC=example', true)).toEqual({ lockedOutAt: null, badPasswordCount: null, lastBadPassword: null, dc: 'dc2' });
    expect(await signInFacts(dirAnswering(undefined), 'CN=x,DC=corp,DC=example', false)).toEqual({ lockedOutAt: null, badPasswordCount: null, lastBadPassword: null, dc: null });
  });
});

describe('userGroups', () => {
  it('names each group by its CN (escapes undone), sorted, with its DN', () => {
    expect(userGroups(['CN=VPN Users,OU=Groups,DC=corp,DC=example', 'CN=Accounting\\, Paris,OU=Groups,DC=corp,DC=example'])).toEqual([
      { name: 'Accounting, Paris', dn: 'CN=Accounting\\, Paris,OU=Groups,DC=corp,DC=example' },
      { name: 'VPN Users', dn: 'CN=VPN Users,OU=Groups,DC=corp,DC=example' },
    ]);
    expect(userGroups(undefined)).toEqual([]);
  });
});
