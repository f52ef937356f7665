import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { ApprovalRequest } from '../../lib/approvals/requests';
import { getRecord, putRecord } from '../../lib/store/records';
import { RUN_DIR } from '../../local/processes';
import { auditMark, auditSince, profile, seedUser, stack, store } from '../support/stack';

// The running stack runs every scheduled function at the rate serverless.yml renders from the
// configuration: the test profile sets Approvals:CheckInterval=60, so serverless-offline's
// scheduler expires a pending request past its lifetime within the next minute boundary.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What serverless-offline scheduled in this run (its log is appended to across runs: the last start counts). */
function scheduled(): Record<string, string> {
  const log = fs.readFileSync(path.join(RUN_DIR, `${profile}-offline.log`), 'utf8');
  const run = log.slice(log.lastIndexOf('Starting Offline'));
  return Object.fromEntries([...run.matchAll(/Scheduling \[(\w+)\] cron: \[([^\]]+)\]/g)].map((m) => [m[1], m[2]]));
}

describe('scheduled functions in the local stack', () => {
  it('schedules approvalsExpiry every Approvals:CheckInterval (60 s in the test profile), auditRetention daily and auditVerify hourly', () => {
    expect(scheduled()).toEqual({ approvalsExpiry: '*/1 * * * *', auditRetention: '0 0 */1 * *', auditVerify: '0 */1 * * *' });
  });

  it('expires a pending request past its lifetime by itself, within the next run of the scheduler', async () => {
    const requester = seedUser('op-helpdesk');
    const target = seedUser('dave');
    const now = Date.now();
    const id = `${now.toString(36).padStart(9, '0')}-${randomBytes(8).toString('hex')}`;
    const request: ApprovalRequest = {
      id,
      kind: 'action',
      action: 'users.unlock',
      state: 'pending',
      reason: 'scheduler test',
      target: { id: target.guid, kind: 'user', name: target.username, dn: target.dn },
      parameters: { action: 'users.unlock' },
      requester: { guid: requester.guid, username: requester.username, provider: 'ad' },
      source: { kind: 'always' },
      approvers: { roles: ['super-administrator'], operators: [] },
      approvalsNeeded: 1,
      approvals: [],
      createdAt: new Date(now - 8 * 86_400_000).toISOString(),
      expiresAt: new Date(now - 1000).toISOString(),
      correlationId: randomUUID(),
    };
    const mark = await auditMark();
    expect(await putRecord(store, 'APPROVAL', id, request, { expectVersion: 0 })).toBe(true);
    // the next minute boundary, plus the run itself
    const deadline = now + 75_000;
    let state = 'pending';
    while (Date.now() < deadline) {
      state = (await getRecord<ApprovalRequest>(store, 'APPROVAL', id))!.data.state;
      if (state !== 'pending') break;
      await sleep(1000);
    }
    expect(state).toBe('expired');
    // the run writes the state, then its audit row: under load the row can come a moment later
    const expiredRows = async () => (await auditSince(mark)).filter((r) => r.event === 'request.expired' && (r.details as { request?: string })?.request === id);
    let rows = await expiredRows();
    for (let i = 0; i < 20 && rows.length === 0; i++) {
      await sleep(500);
      rows = await expiredRows();
    }
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'success', reason: 'lifetime_elapsed', actor: { name: 'approvals-expiry', provider: 'system' } });
  }, 100_000);
});
