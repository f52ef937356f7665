import { memoryDynamoStore } from '../support/memory-store';
import { expireTemporaryMemberships, overdueTemporaryMemberships } from '../../lib/approvals/temporary';
import type { ApprovalRequest } from '../../lib/approvals/record';
import { putRecord, getRecord } from '../../lib/store/records';
import { ApiError } from '../../lib/errors';

// The end of temporary group memberships (lib/approvals/temporary.ts) on the store's conditional
// writes: two runs at once remove and audit a membership once; a run before the expiry leaves it;
// a failed removal stays active, is counted and named for the diagnostics, and the next run ends
// it. The directory is a stand-in here; tests/integration/jit-membership.test.ts runs the real one.

const GROUP = '00000000-0000-4000-8000-000000000001';
const MEMBER = '00000000-0000-4000-8000-000000000002';
const GROUP_DN = 'CN=g,OU=Groups,DC=x';
const MEMBER_DN = 'CN=m,OU=Staff,DC=x';

function setup(opts: { failing?: () => boolean } = {}) {
  const store = memoryDynamoStore();
  const rows: Array<{ event: string; outcome: string; reason: string; details?: Record<string, unknown> }> = [];
  const member = new Set([MEMBER_DN.toLowerCase()]);
  const dir = {
    dnOfGuid: async (g: string) => (g === GROUP ? GROUP_DN : g === MEMBER ? MEMBER_DN : undefined),
    readObject: async () => ({ dn: MEMBER_DN, guid: MEMBER, objectClasses: ['user'], attributes: {}, memberOf: member.has(MEMBER_DN.toLowerCase()) ? [GROUP_DN] : [] }),
    modify: async (_dn: string, changes: Array<{ values: string[] }>) => {
      await new Promise((r) => setImmediate(r));
      if (opts.failing?.()) throw new ApiError(503, 'directory_unavailable');
      member.delete(changes[0].values[0].toLowerCase());
    },
  };
  const rt = { store, audit: { append: async (r: any) => rows.push(r) }, writeCreds: async () => ({ user: 'w', password: 'x' }), config: { Directory: { MaxResults: 200 } } } as any;
  return { store, rt, dc: { dir } as any, rows, member };
}

async function active(store: ReturnType<typeof memoryDynamoStore>, id: string, expiresAt: number) {
  const r: ApprovalRequest = {
    id,
    kind: 'action',
    action: 'groups.members.add.temporary',
    state: 'executed',
    reason: 'r',
    target: { id: GROUP, kind: 'group', name: 'g', dn: GROUP_DN },
    parameters: { action: 'groups.members.add.temporary', member: MEMBER, durationMinutes: 30 },
    requester: { guid: MEMBER, username: 'm', provider: 'ad' },
    source: { kind: 'always' },
    approvers: { roles: ['super-administrator'], operators: [] },
    approvalsNeeded: 1,
    approvals: [],
    createdAt: new Date(0).toISOString(),
    expiresAt: new Date(0).toISOString(),
    correlationId: 'c',
    temporary: { group: { id: GROUP, name: 'g', dn: GROUP_DN }, member: { id: MEMBER, name: 'm', dn: MEMBER_DN }, durationMinutes: 30, addedAt: new Date(0).toISOString(), expiresAt: new Date(expiresAt).toISOString(), state: 'active' },
  };
  expect(await putRecord(store, 'APPROVAL', id, r, { expectVersion: 0 })).toBe(true);
}
const stored = async (store: ReturnType<typeof memoryDynamoStore>, id: string) => (await getRecord<ApprovalRequest>(store, 'APPROVAL', id))!.data.temporary!;

describe('temporary memberships: the scheduled run', () => {
  it('leaves one before its expiry; two runs at once after it remove and audit it once', async () => {
    const { store, rt, dc, rows, member } = setup();
    await active(store, '0000000a1-00000000000000a1', 1_000_000);
    expect(await expireTemporaryMemberships(rt, dc, 999_999)).toEqual({ removed: 0, removedByHand: 0, failed: 0 });
    const [a, b] = await Promise.all([expireTemporaryMemberships(rt, dc, 1_000_000), expireTemporaryMemberships(rt, dc, 1_000_000)]);
    // one of them claims it and acts; the other leaves it
    expect([a, b].map((x) => x.removed).sort()).toEqual([0, 1]);
    expect(a.removedByHand + b.removedByHand).toBe(0);
    expect(member.size).toBe(0);
    expect(rows.filter((r) => r.event === 'groups.members.removed').map((r) => [r.outcome, r.reason])).toEqual([['success', 'expired']]);
    expect(await stored(store, '0000000a1-00000000000000a1')).toMatchObject({ state: 'ended', ended: { how: 'expired', by: 'approvals-expiry' } });
    expect((await stored(store, '0000000a1-00000000000000a1')).removing).toBeUndefined();
    // one run alone: removed, reason expired
    const one = setup();
    await active(one.store, '0000000a4-00000000000000a4', 1000);
    expect(await expireTemporaryMemberships(one.rt, one.dc, 1000)).toEqual({ removed: 1, removedByHand: 0, failed: 0 });
    expect(one.rows.map((r) => [r.event, r.outcome, r.reason])).toEqual([['groups.members.removed', 'success', 'expired']]);
  });

  it('a failed removal stays active with its attempts, is named for the diagnostics, and the next run ends it', async () => {
    let down = true;
    const { store, rt, dc, rows } = setup({ failing: () => down });
    await active(store, '0000000a2-00000000000000a2', 1000);
    expect(await expireTemporaryMemberships(rt, dc, 2000)).toEqual({ removed: 0, removedByHand: 0, failed: 1 });
    expect(await expireTemporaryMemberships(rt, dc, 3000)).toEqual({ removed: 0, removedByHand: 0, failed: 1 });
    expect(await stored(store, '0000000a2-00000000000000a2')).toMatchObject({ state: 'active', removal: { attempts: 2, lastCode: 'directory_unavailable' } });
    expect(await overdueTemporaryMemberships(rt)).toMatchObject([{ request: '0000000a2-00000000000000a2', group: 'g', member: 'm', attempts: 2, lastCode: 'directory_unavailable' }]);
    down = false;
    expect(await expireTemporaryMemberships(rt, dc, 4000)).toEqual({ removed: 1, removedByHand: 0, failed: 0 });
    expect(await overdueTemporaryMemberships(rt)).toEqual([]);
    expect(rows.filter((r) => r.event === 'groups.members.removed').map((r) => [r.outcome, r.reason])).toEqual([
      ['failed', 'directory_unavailable'],
      ['failed', 'directory_unavailable'],
      ['success', 'expired'],
    ]);
  });

  it('a claim left by a run that died holds the membership for 2 minutes, then the next run removes it', async () => {
    const { store, rt, dc, rows } = setup();
    await active(store, '0000000a5-00000000000000a5', 1000);
    const rec = (await getRecord<ApprovalRequest>(store, 'APPROVAL', '0000000a5-00000000000000a5'))!;
    await putRecord(store, 'APPROVAL', rec.data.id, { ...rec.data, temporary: { ...rec.data.temporary!, removing: { by: 'approvals-expiry', until: new Date(2000 + 120_000).toISOString() } } }, { expectVersion: rec.version });
    expect(await expireTemporaryMemberships(rt, dc, 2000)).toEqual({ removed: 0, removedByHand: 0, failed: 0 });
    expect(rows).toEqual([]);
    expect(await expireTemporaryMemberships(rt, dc, 2000 + 120_001)).toEqual({ removed: 1, removedByHand: 0, failed: 0 });
  });

  it('one removed by hand is recorded removed_by_hand (outcome unchanged), nothing fails', async () => {
    const { store, rt, dc, rows, member } = setup();
    member.clear();
    await active(store, '0000000a3-00000000000000a3', 1000);
    expect(await expireTemporaryMemberships(rt, dc, 2000)).toEqual({ removed: 0, removedByHand: 1, failed: 0 });
    expect(rows.map((r) => [r.event, r.outcome, r.reason])).toEqual([['groups.members.removed', 'unchanged', 'removed_by_hand']]);
  });
});
