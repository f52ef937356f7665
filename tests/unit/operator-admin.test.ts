import { missingRight } from '../../lib/auth/operator-admin';
import type { OperatorRights } from '../../lib/authz/rights';
import type { Permission } from '../../lib/authz/permissions';

// Console spec, Authentication 5: an administrator resets another operator's authenticator only
// when holding all of that operator's console rights; a Super administrator's only by another.

const BASE = 'DC=corp,DC=example,DC=test';
const MANAGED = { dn: `OU=Managed,${BASE}`, guid: 'aaaaaaaa-0000-4000-8000-000000000001' };
const BRANCH = { dn: `OU=Branch,${BASE}`, guid: 'aaaaaaaa-0000-4000-8000-000000000002' };
const USERS = { dn: `OU=Users,OU=Managed,${BASE}`, guid: 'aaaaaaaa-0000-4000-8000-000000000003' };

const rights = (grants: Array<[Permission[], Array<typeof MANAGED>]>, superAdministrator = false): OperatorRights => ({
  superAdministrator,
  permissions: new Set(grants.flatMap(([p]) => p)),
  grants: grants.map(([permissions, scope], i) => ({ role: { id: `r${i}`, name: `R${i}`, permissions }, delegation: { id: `d${i}`, roleId: `r${i}`, scope, assignees: [] } })),
});

describe('missingRight', () => {
  const helpdesk = rights([[['computers.read', 'computers.laps.read', 'users.read'], [MANAGED]]]);

  it('an administrator holding the same permissions on the same or a wider scope covers the operator', () => {
    expect(missingRight(rights([[['settings.manage', 'computers.read', 'computers.laps.read', 'users.read'], [MANAGED]]]), helpdesk)).toBeUndefined();
    expect(missingRight(rights([[['computers.read', 'computers.laps.read', 'users.read'], [MANAGED]], [['settings.manage'], [BRANCH]]]), rights([[['users.read'], [USERS]]]))).toBeUndefined();
  });
  it('a permission held nowhere, or only on another OU, is missing', () => {
    expect(missingRight(rights([[['settings.manage', 'computers.read', 'users.read'], [MANAGED]]]), helpdesk)).toEqual({ permission: 'computers.laps.read', ou: MANAGED.dn });
    expect(missingRight(rights([[['settings.manage', 'computers.read', 'computers.laps.read', 'users.read'], [BRANCH]]]), helpdesk)).toEqual({ permission: 'computers.read', ou: MANAGED.dn });
    // a narrower scope does not cover a wider one
    expect(missingRight(rights([[['computers.read', 'computers.laps.read', 'users.read'], [USERS]]]), helpdesk)).toEqual({ permission: 'computers.read', ou: MANAGED.dn });
  });
  it('a Super administrator covers everyone; a Super administrator is covered only by another', () => {
    expect(missingRight(rights([], true), helpdesk)).toBeUndefined();
    expect(missingRight(rights([], true), rights([], true))).toBeUndefined();
    expect(missingRight(rights([[['settings.manage', 'computers.read', 'computers.laps.read', 'users.read'], [MANAGED, BRANCH]]]), rights([], true))).toEqual({ permission: 'super-administrator', ou: '*' });
  });
});
