import { checkSignInPassword, resolveSignInAccount, type SignInDirectory } from '../../lib/auth/signin';
import { DirectoryInvalidCredentials, type PrincipalFacts } from '../../lib/directory';

// An unknown name must cost what an existing one costs (same 401, same time): the sign-in makes
// the same directory operations for both. bench/signin-timing.ts measures the times on the stack.

const BASE = 'DC=corp,DC=example,DC=test';
const ALICE = `CN=Alice Anders,OU=Users,OU=Managed,${BASE}`;
const READER = `CN=svc-hdc-read,CN=Users,${BASE}`;
const facts = (dn: string): PrincipalFacts => ({ dn, guid: '6f1c2a4e-0b7d-4e8a-9c3f-1a2b3c4d5e6f', sid: 'S-1-5-21-1-2-3-1105', samAccountName: 'alice', userAccountControl: 512, adminCount: 0, groupSids: ['S-1-5-21-1-2-3-513'] });

function recorder() {
  const ops: string[] = [];
  const binds: string[] = [];
  const dir: SignInDirectory = {
    baseDn: BASE,
    async findUserDn(login) {
      ops.push('findUserDn');
      const bare = login.toLowerCase().split('\\').pop()!;
      if (bare === 'alice' || bare === 'alice@corp.example.test') return ALICE;
      if (bare === 'svc-hdc-read@corp.example.test') return READER;
      return undefined;
    },
    async principalFacts(dn) {
      ops.push('principalFacts');
      return facts(dn);
    },
    async readCreds() {
      return { user: 'svc-hdc-read@corp.example.test' };
    },
    async verifyCredentials({ user }) {
      ops.push('bind');
      binds.push(user);
      throw new DirectoryInvalidCredentials();
    },
  };
  return { dir, ops, binds };
}

describe('sign-in directory work: an unknown name does what an existing one does', () => {
  it('existing name with a wrong password and unknown name: find, read facts, one bind each', async () => {
    const known = recorder();
    const account = await resolveSignInAccount(known.dir, 'CORP\\alice');
    expect(account?.dn).toBe(ALICE);
    expect(await checkSignInPassword(known.dir, account, 'wrong')).toBe(false);

    const unknown = recorder();
    const none = await resolveSignInAccount(unknown.dir, 'nobody-here');
    expect(none).toBeUndefined();
    expect(await checkSignInPassword(unknown.dir, none, 'wrong')).toBe(false);

    expect(unknown.ops).toEqual(known.ops);
    // (the first sign-in on an instance also finds the stand-in, whichever the name)
    expect(known.ops).toEqual(['findUserDn', 'findUserDn', 'principalFacts', 'bind']);
    known.ops.length = 0;
    await checkSignInPassword(known.dir, await resolveSignInAccount(known.dir, 'alice@corp.example.test'), 'wrong');
    unknown.ops.length = 0;
    await checkSignInPassword(unknown.dir, await resolveSignInAccount(unknown.dir, 'someone-else'), 'wrong');
    expect(known.ops).toEqual(['findUserDn', 'principalFacts', 'bind']);
    expect(unknown.ops).toEqual(known.ops);
    // the unknown name binds a DN that names no account, below the domain, never a real account
    expect(unknown.binds[0]).toMatch(new RegExp(`^CN=hdc-no-such-account-[0-9a-f]{16},${BASE}$`));
  });

  it('never reports success for the stand-in bind, even if a directory accepted it', async () => {
    const r = recorder();
    r.dir.verifyCredentials = async () => true;
    expect(await checkSignInPassword(r.dir, undefined, 'anything')).toBe(false);
  });

  it('takes as long as the recent refusals of real accounts: the stand-in bind is padded to one of their times', async () => {
    const slow = recorder();
    slow.dir.verifyCredentials = async () => {
      await new Promise((r) => setTimeout(r, 20));
      throw new DirectoryInvalidCredentials();
    };
    const alice = await resolveSignInAccount(slow.dir, 'alice');
    for (let i = 0; i < 33; i++) await checkSignInPassword(slow.dir, alice, 'wrong'); // fills the samples
    const fast = recorder();
    fast.dir.verifyCredentials = async () => {
      throw new DirectoryInvalidCredentials();
    };
    const t0 = performance.now();
    expect(await checkSignInPassword(fast.dir, undefined, 'wrong')).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(18);
  });
});
