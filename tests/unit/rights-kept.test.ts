import { changeAuthz, putDelegation, putRole, rightsInputsOncePerRequest, type Delegation } from '../../lib/authz/rights';
import { inRequestScope } from '../../lib/request-scope';
import { memoryDynamoStore, observe, type StoreOp } from '../support/memory-store';

const OLD_NAMES: Partial<Record<StoreOp, string>> = { get: 'GetCommand', query: 'QueryCommand', put: 'PutCommand', transactWrite: 'TransactWriteCommand' };

// Roles and delegations are kept between requests under the rights revision's commit id: each
// request reads the revision (consistent) and reads the roles and delegations again unless the
// revision is the one they were kept under. A revoked delegation must never outlive its commit.

const ou = { dn: 'OU=Helpdesk,DC=example,DC=test', guid: '11111111-1111-4111-8111-111111111111' };
const delegation = (id: string, sid: string): Delegation => ({ id, roleId: 'helpdesk', scope: [ou] as Delegation['scope'], assignees: [{ kind: 'user', guid: `g-${sid}`, sid, name: sid }] });

function counted() {
  const store = memoryDynamoStore();
  const asked: string[] = [];
  observe(store, (op, input) => {
    asked.push(`${OLD_NAMES[op] ?? op}:${input.Key?.pk ?? input.ExpressionAttributeValues?.[':pk'] ?? input.KeyConditionExpression ?? ''}`);
  });
  return { store, asked };
}
const request = <T>(work: () => Promise<T>) => inRequestScope(work);
const queries = (asked: string[]) => asked.filter((a) => a.startsWith('QueryCommand')).length;

describe('roles and delegations kept under the revision', () => {
  it('a second request reads only the revision; a change (here: a revocation) is seen by the very next request', async () => {
    const { store, asked } = counted();
    await putRole(store, { id: 'helpdesk', name: 'Helpdesk', permissions: ['computers.read'] });
    await putDelegation(store, delegation('d1', 'S-1-5-21-1-1001'));
    asked.length = 0;

    const [, first] = await request(() => rightsInputsOncePerRequest(store));
    expect(first.map((d) => d.id)).toEqual(['d1']);
    expect(queries(asked)).toBe(2);

    asked.length = 0;
    const [, second] = await request(() => rightsInputsOncePerRequest(store));
    expect(second.map((d) => d.id)).toEqual(['d1']);
    expect(asked).toEqual(['GetCommand:AUTHZ']); // the revision only

    // the delegation is revoked (a commit moves the revision): the next request no longer has it
    await changeAuthz(store, () => ({ writes: [{ delete: 'delegation', id: 'd1' }], result: undefined }));
    asked.length = 0;
    const [, third] = await request(() => rightsInputsOncePerRequest(store));
    expect(third).toEqual([]);
    expect(queries(asked)).toBe(2);
  });

  it('what one request is given is its own: changing it does not reach the next request', async () => {
    const { store } = counted();
    await putRole(store, { id: 'helpdesk', name: 'Helpdesk', permissions: ['computers.read'] });
    await putDelegation(store, delegation('d1', 'S-1-5-21-1-1001'));
    await request(() => rightsInputsOncePerRequest(store));
    await request(async () => {
      const [roles, delegations] = await rightsInputsOncePerRequest(store);
      roles[0].permissions.push('computers.laps.read');
      delegations[0].assignees.push({ kind: 'group', guid: 'x', sid: 'S-1-5-21-1-513', name: 'Domain Users' });
    });
    const [roles, delegations] = await request(() => rightsInputsOncePerRequest(store));
    expect(roles[0].permissions).toEqual(['computers.read']);
    expect(delegations[0].assignees).toHaveLength(1);
  });

  it('a revision without a commit id (written before ids existed) is never kept: every request reads', async () => {
    const { store, asked } = counted();
    await putRole(store, { id: 'helpdesk', name: 'Helpdesk', permissions: ['computers.read'] });
    const rev = store.items.get('AUTHZ')!.get('REVISION')!;
    await store.put({ Item: { ...rev, data: {} } });
    asked.length = 0;
    await request(() => rightsInputsOncePerRequest(store));
    await request(() => rightsInputsOncePerRequest(store));
    expect(queries(asked)).toBe(4);
  });
});
