import { accountCandidates, mappingApplies } from '../../lib/auth/access-signin';

// How an access-platform JWT's claims name the directory account (Authentication:Access:AdAccountClaims)
// and which role/trait mappings apply to them.
const claims = { username: 'alice@platform', sub: 'u-123', roles: ['hdc-helpdesk', 'dev'], traits: { windows_logins: ['alice', 'ALICE', 'alice-adm'], team: ['sales'] } };

describe('accountCandidates', () => {
  it('follows AdAccountClaims in order, every value of a trait, without repeats (any case)', () => {
    expect(accountCandidates(claims, 'username,trait:windows_logins')).toEqual(['alice@platform', 'alice', 'alice-adm']);
    expect(accountCandidates(claims, 'trait:windows_logins, username')).toEqual(['alice', 'alice-adm', 'alice@platform']);
    expect(accountCandidates(claims, 'sub')).toEqual(['u-123']);
    expect(accountCandidates(claims, 'trait:missing')).toEqual([]);
  });
  it('skips empty and overlong values', () => {
    expect(accountCandidates({ ...claims, traits: { windows_logins: ['', 'x'.repeat(300), 'bob'] } }, 'trait:windows_logins')).toEqual(['bob']);
  });
});

describe('mappingApplies', () => {
  it('a role mapping applies when the platform roles include it; a trait mapping when the trait holds the value', () => {
    expect(mappingApplies({ role: 'hdc-helpdesk' }, claims)).toBe(true);
    expect(mappingApplies({ role: 'hdc-admin' }, claims)).toBe(false);
    expect(mappingApplies({ trait: 'team', value: 'sales' }, claims)).toBe(true);
    expect(mappingApplies({ trait: 'team', value: 'Sales' }, claims)).toBe(false);
    expect(mappingApplies({ trait: 'nope', value: 'sales' }, claims)).toBe(false);
  });
});
