import { DEFAULT_APPROVAL_SETTINGS, type ApprovalSettings } from '../../lib/approvals/settings';
import type { ScopedGrant } from '../../lib/authz/engine';
import type { Permission } from '../../lib/authz/permissions';
import { uncoveredGrants } from '../../lib/authz/widening';

// Self-widening (decision 26): which grants after a change no grant before covers.
const MANAGED = 'OU=Managed,DC=corp,DC=example,DC=test';
const USERS = `OU=Users,${MANAGED}`;
const BRANCH = 'OU=Branch,DC=corp,DC=example,DC=test';
const grant = (delegationId: string, permissions: Permission[], scopeDns: string[]): ScopedGrant => ({ delegationId, permissions: new Set(permissions), scopeDns });
const none = DEFAULT_APPROVAL_SETTINGS;

describe('uncoveredGrants', () => {
  it('the same grant under another delegation, or narrower (fewer permissions, a sub-OU), is covered', () => {
    const before = [grant('d1', ['users.read', 'users.unlock'], [MANAGED])];
    expect(uncoveredGrants(before, [grant('d2', ['users.read', 'users.unlock'], [MANAGED])], none)).toEqual([]);
    expect(uncoveredGrants(before, [grant('d2', ['users.read'], [USERS])], none)).toEqual([]);
  });

  it('a new permission, or the same permission on another OU or a parent OU, is new', () => {
    const before = [grant('d1', ['users.read'], [USERS])];
    expect(uncoveredGrants(before, [grant('d2', ['users.read', 'users.disable'], [USERS])], none)).toEqual([{ delegation: 'd2', permissions: ['users.disable'], scope: [USERS] }]);
    expect(uncoveredGrants(before, [grant('d2', ['users.read'], [BRANCH])], none)).toEqual([{ delegation: 'd2', permissions: ['users.read'], scope: [BRANCH] }]);
    expect(uncoveredGrants(before, [grant('d2', ['users.read'], [MANAGED])], none)).toHaveLength(1);
  });

  it('two grants never combine into one (read and unlock in one delegation is more than in two)', () => {
    const before = [grant('d1', ['users.read'], [MANAGED]), grant('d2', ['users.unlock'], [MANAGED])];
    expect(uncoveredGrants(before, [grant('d3', ['users.read', 'users.unlock'], [MANAGED])], none)).toEqual([{ delegation: 'd3', permissions: ['users.read', 'users.unlock'], scope: [MANAGED] }]);
  });

  it('an action held only with approval does not cover the same action held directly', () => {
    const approvals: ApprovalSettings = { ...none, delegations: { d1: { requiresApproval: ['users.unlock'], approvers: { roles: [], operators: [] }, approvalsNeeded: 1 } } };
    const before = [grant('d1', ['users.read', 'users.unlock'], [MANAGED])];
    expect(uncoveredGrants(before, [grant('d2', ['users.read', 'users.unlock'], [MANAGED])], approvals)).toEqual([{ delegation: 'd2', permissions: ['users.unlock'], scope: [MANAGED] }]);
    // the same delegation re-saved keeps its approval requirement: covered
    expect(uncoveredGrants(before, [grant('d1', ['users.read', 'users.unlock'], [MANAGED])], approvals)).toEqual([]);
  });

  it('a grant whose scope reaches no managed OU adds nothing', () => {
    expect(uncoveredGrants([], [grant('d1', ['users.read'], [])], none)).toEqual([]);
  });

  it('DNs compare case-insensitively; a sibling OU with a common suffix is not below', () => {
    expect(uncoveredGrants([grant('d1', ['users.read'], [MANAGED.toUpperCase()])], [grant('d2', ['users.read'], [USERS])], none)).toEqual([]);
    expect(uncoveredGrants([grant('d1', ['users.read'], [`OU=Sers,${MANAGED}`])], [grant('d2', ['users.read'], [USERS])], none)).toHaveLength(1);
  });
});
