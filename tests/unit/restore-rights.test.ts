import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { restoreDatabase } from '../../lib/admin/database';
import type { AuditInput } from '../../lib/audit';
import { AUTHZ_REVISION_KEY, putDelegation, putRole, rightsInputsOncePerRequest, type Delegation } from '../../lib/authz/rights';
import { copyData, readCopy } from '../../lib/migrations';
import { inRequestScope } from '../../lib/request-scope';
import type { ConsoleRuntime } from '../../lib/runtime';
import { getRecord } from '../../lib/store/records';
import { memoryDynamoStore, observe } from '../support/memory-store';

// `restore-database` gives the rights revision a new commit id: a console keeps roles and
// delegations under the revision's commit id (decision 4d), and a copy taken while a change
// committed can pair that id with other lists (here: the revocation of d1 is in the copy, the
// revision from before it). Without the new id the revoked delegation would outlive the restore in
// every console that kept it.

const ou = { dn: 'OU=Helpdesk,DC=example,DC=test', guid: '11111111-1111-4111-8111-111111111111' };
const delegation = (id: string): Delegation => ({ id, roleId: 'helpdesk', scope: [ou] as Delegation['scope'], assignees: [{ kind: 'user', guid: 'g-1', sid: 'S-1-5-21-1-1001', name: 'op' }] });
const request = <T>(work: () => Promise<T>) => inRequestScope(work);

describe('restore-database and the kept rights', () => {
  let folder: string;
  beforeEach(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-restore-'));
  });
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  const runtime = (store: ReturnType<typeof memoryDynamoStore>) => {
    const rows: AuditInput[] = [];
    const rt = { store, audit: { append: async (row: AuditInput) => void rows.push(row) } } as unknown as ConsoleRuntime;
    return { rt, rows };
  };
  const actor = { name: 'admin', provider: 'cli' };

  it('a copy pairing the kept commit id with other delegations: after the restore the next request reads them again', async () => {
    const store = memoryDynamoStore();
    await putRole(store, { id: 'helpdesk', name: 'Helpdesk', permissions: ['computers.read'] });
    await putDelegation(store, delegation('d1'));
    const [, kept] = await request(() => rightsInputsOncePerRequest(store));
    expect(kept.map((d) => d.id)).toEqual(['d1']);
    const before = await getRecord<{ commit: string }>(store, AUTHZ_REVISION_KEY.pk, AUTHZ_REVISION_KEY.sk);

    // the copy as a scan running across a revocation wrote it: the revision from before, d1 gone
    const copy = readCopy((await copyData(store, { folder }, 'test')).location);
    const torn = copy.filter((it) => !(it.pk === 'DELEGATIONS' && it.sk === 'd1'));
    expect(torn.length).toBe(copy.length - 1);
    // written as JSON lines (the form a DynamoDB copy takes; restore reads both)
    const location = path.join(folder, 'torn.jsonl');
    fs.writeFileSync(location, torn.map((it) => `${JSON.stringify(it)}\n`).join(''));

    const { rt, rows } = runtime(store);
    const out = await restoreDatabase(rt, location, actor);
    expect(out.code).toBe(0);
    expect(rows.map((r) => `${r.event} ${r.outcome}`)).toEqual(['database.restored success']);
    expect(rows[0].details?.rightsRenewed).toBe(true);
    const after = await getRecord<{ commit: string }>(store, AUTHZ_REVISION_KEY.pk, AUTHZ_REVISION_KEY.sk);
    expect(after!.data.commit).not.toBe(before!.data.commit);
    expect(after!.version).toBe(before!.version + 1);

    const [, next] = await request(() => rightsInputsOncePerRequest(store));
    expect(next).toEqual([]); // not the kept [d1]
  });

  it('a file that is not a copy: exit 2, the revision and the delegations unchanged, nothing audited', async () => {
    const store = memoryDynamoStore();
    await putRole(store, { id: 'helpdesk', name: 'Helpdesk', permissions: ['computers.read'] });
    await putDelegation(store, delegation('d1'));
    const before = await getRecord<{ commit: string }>(store, AUTHZ_REVISION_KEY.pk, AUTHZ_REVISION_KEY.sk);
    const bad = path.join(folder, 'not-a-copy.jsonl');
    fs.writeFileSync(bad, '{"pk":"X"}\n');

    const { rt, rows } = runtime(store);
    const out = await restoreDatabase(rt, bad, actor);
    expect(out.code).toBe(2);
    expect(out.out).toContain('is not a database copy: nothing changed');
    expect(rows).toEqual([]);
    const after = await getRecord<{ commit: string }>(store, AUTHZ_REVISION_KEY.pk, AUTHZ_REVISION_KEY.sk);
    expect(after).toEqual(before);
    const [, delegations] = await request(() => rightsInputsOncePerRequest(store));
    expect(delegations.map((d) => d.id)).toEqual(['d1']);
  });

  it('the revision cannot be written (the store refuses it): the restore is still on record, exit 1 says to restart the consoles', async () => {
    const store = memoryDynamoStore();
    await putRole(store, { id: 'helpdesk', name: 'Helpdesk', permissions: ['computers.read'] });
    await putDelegation(store, delegation('d1'));
    const { location } = await copyData(store, { folder }, 'test');
    await putDelegation(store, delegation('d2'));
    observe(store, (op) => {
      if (op === 'transactWrite') throw new Error('store unavailable');
    });

    const { rt, rows } = runtime(store);
    const out = await restoreDatabase(rt, location, actor);
    expect(out.code).toBe(1);
    expect(out.out).toContain('restart every console');
    expect(out.out).toContain('store unavailable');
    expect(rows.map((r) => `${r.event} ${r.outcome}`)).toEqual(['database.restored success']);
    expect(rows[0].details?.rightsRenewed).toBe(false);
    // the copy is in place all the same: d2, added after it, is gone
    expect(store.items.get('DELEGATIONS')?.has('d2')).toBe(false);
    expect(store.items.get('DELEGATIONS')?.has('d1')).toBe(true);
  });
});
