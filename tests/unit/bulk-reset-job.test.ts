import { memoryDynamoStore } from '../support/memory-store';

// The bulk password reset's job (lib/approvals/jobs.ts, lib/approvals/bulk-reset.ts; issue 31):
// each step's generated password is handed to the download as it comes (`deliver`) and is in no
// record; a job that must not be resumed is ended (`abandonJob`): steps not started failed, a step
// found running unknown. Also: the administrators' notices of GET /api/auth/me, and generated
// passwords that a spreadsheet never reads as a formula. The directory and the action are stand-ins.

let n = 0;
jest.mock('../../lib/actions', () => ({
  performAction: async () => {
    await new Promise((r) => setImmediate(r));
    n++;
    return { outcome: 'succeeded', password: `Secret-Pw-${n}-xyzzy` };
  },
}));

import { abandonJob, createJob, readJob, readSteps, runJob, type JobContext } from '../../lib/approvals/jobs';
import { adminNotices } from '../../lib/diagnostics/notices';
import { generatePassword } from '../../lib/password-service/service-side/reset';
import { putRecord } from '../../lib/store/records';

const guid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

function context(store: ReturnType<typeof memoryDynamoStore>): JobContext {
  const dir = { readObject: async (g: string) => ({ dn: `CN=${g}`, guid: g, objectClasses: ['user'], attributes: {}, memberOf: [], userAccountControl: 512 }) };
  return { rt: { store } as any, dc: { dir } as any, actor: { identity: { guid: 'approver', username: 'approver', provider: 'ad' }, rights: {} as any, ip: 'job' } };
}
async function newJob(store: ReturnType<typeof memoryDynamoStore>, id: string, count: number) {
  const steps = Array.from({ length: count }, (_, i) => ({ target: { id: guid(i + 1), kind: 'user' as const, name: `u${i + 1}` }, params: { action: 'users.password.reset' as const, mustChange: true, unlock: false } }));
  expect(await createJob({ store } as any, { requestId: id, kind: 'bulk', action: 'users.password.reset', executor: { guid: 'approver', username: 'approver', provider: 'ad' }, correlationId: 'c', ticket: 'T-1' }, steps)).toBe(true);
}

describe('bulk reset job', () => {
  it('hands each password to the download as it runs; no record holds one', async () => {
    const store = memoryDynamoStore();
    await newJob(store, 'r1', 5);
    const got = new Map<number, string>();
    await runJob(context(store), 'r1', { deliver: (s, r) => r.password && got.set(s.i, r.password) });
    expect([...got.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    const steps = await readSteps({ store } as any, 'r1');
    expect(steps.map((s) => s.state)).toEqual(Array(5).fill('succeeded'));
    const everything = JSON.stringify([steps, await readJob({ store } as any, 'r1')]);
    for (const p of got.values()) expect(everything).not.toContain(p);
    expect(everything).not.toContain('xyzzy');
    expect((await readJob({ store } as any, 'r1'))!.data).toMatchObject({ state: 'done', counts: { succeeded: 5 } });
  });

  it('abandonJob: what the budget left fails, a step found running is unknown, the job is done; never run again', async () => {
    const store = memoryDynamoStore();
    await newJob(store, 'r2', 4);
    // a budget that runs out at once: nothing acted
    await runJob(context(store), 'r2', { budgetMs: -1 });
    // one step was running when its runner died
    const [first] = await readSteps({ store } as any, 'r2');
    const { version, ...s } = first;
    expect(await putRecord(store, 'JOB#r2', 'S#00000', { ...s, state: 'running' }, { expectVersion: version })).toBe(true);
    const done = await abandonJob({ store } as any, 'r2', 'download_interrupted');
    expect(done).toMatchObject({ state: 'done', counts: { unknown: 1, failed: 3 } });
    const steps = await readSteps({ store } as any, 'r2');
    expect(steps.map((x) => [x.state, x.code])).toEqual([
      ['unknown', 'download_interrupted'],
      ['failed', 'download_interrupted'],
      ['failed', 'download_interrupted'],
      ['failed', 'download_interrupted'],
    ]);
    const before = n;
    await runJob(context(store), 'r2');
    expect(n).toBe(before); // a done job acts no more
  });
});

describe("administrators' notices (GET /api/auth/me)", () => {
  const admin = { permissions: new Set(['settings.manage']) } as any;
  const helpdesk = { permissions: new Set(['users.read']) } as any;
  const dcs = (k: number) => ({ dcs: Array.from({ length: k }, (_, i) => ({ name: `dc${i}`, url: `ldaps://dc${i}` })) });
  it('fewer than two DCs: a warning for administrators only', () => {
    expect(adminNotices(admin, dcs(1))).toEqual([{ code: 'dc_fewer_than_two', severity: 'warning', count: 1 }]);
    expect(adminNotices(admin, dcs(0))).toEqual([{ code: 'dc_fewer_than_two', severity: 'warning', count: 0 }]);
    expect(adminNotices(admin, dcs(2))).toEqual([]);
    expect(adminNotices(helpdesk, dcs(1))).toEqual([]);
    expect(adminNotices(admin, undefined)).toEqual([]);
  });
});

describe('generated passwords in a CSV', () => {
  it('never start with a character a spreadsheet reads as a formula', () => {
    for (let i = 0; i < 2000; i++) {
      const p = generatePassword();
      expect(p).toHaveLength(20);
      expect(p).not.toMatch(/^[=+\-@]/);
      expect(p).toMatch(/[!#%+\-=?@_]/);
    }
  });
});
