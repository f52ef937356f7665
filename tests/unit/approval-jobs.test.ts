import { memoryDynamoStore } from '../support/memory-store';

// The bulk/leaver job runner (lib/approvals/jobs.ts) on the table's conditional writes: a runner
// killed mid-way is resumed and no step acts twice (an interrupted step whose result the directory
// already shows is recorded, not repeated); two runners at once share the work through the lease.
// The directory and the action are stand-ins here; the integration test runs the real ones.

const enabled = new Map<string, boolean>();
const acted: string[] = [];
jest.mock('../../lib/actions', () => ({
  performAction: async (_dc: unknown, _actor: unknown, guid: string) => {
    await new Promise((r) => setImmediate(r));
    if (guid.endsWith('-000000000007')) return { outcome: 'denied', error: { code: 'not_found' } };
    acted.push(guid);
    enabled.set(guid, false);
    return { outcome: 'succeeded' };
  },
}));

import { createJob, jobOutcome, progressOf, readJob, readSteps, runJob, JOB_LEASE_MS, type JobContext } from '../../lib/approvals/jobs';

const guid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const N = 20;

function context(store: ReturnType<typeof memoryDynamoStore>): JobContext {
  const dir = {
    readObject: async (g: string) => ({ dn: `CN=${g}`, guid: g, objectClasses: ['user'], attributes: {}, memberOf: [], userAccountControl: enabled.get(g) === false ? 514 : 512 }),
  };
  return { rt: { store } as any, dc: { dir } as any, actor: { identity: { guid: 'approver', username: 'approver', provider: 'ad' }, rights: {} as any, ip: 'job' } };
}

async function newJob(store: ReturnType<typeof memoryDynamoStore>, id: string) {
  for (let i = 1; i <= N; i++) enabled.set(guid(i), true);
  acted.length = 0;
  const steps = Array.from({ length: N }, (_, i) => ({ target: { id: guid(i + 1), kind: 'user' as const }, params: { action: 'users.disable' as const } }));
  expect(await createJob({ store } as any, { requestId: id, kind: 'bulk', action: 'users.disable', executor: { guid: 'approver', username: 'approver', provider: 'ad' }, correlationId: 'c' }, steps)).toBe(true);
  // a second start (another approver, a retry) creates nothing
  expect(await createJob({ store } as any, { requestId: id, kind: 'bulk', action: 'users.disable', executor: { guid: 'other', username: 'other', provider: 'ad' }, correlationId: 'c' }, steps)).toBe(false);
}

describe('bulk jobs', () => {
  it('a runner killed after 6 steps is resumed once its lease expired; every target acted on exactly once', async () => {
    const store = memoryDynamoStore();
    await newJob(store, 'r1');
    const c = context(store);
    await expect(runJob(c, 'r1', { crashAfter: 6 })).rejects.toThrow('injected crash');
    expect(acted).toHaveLength(6); // the 6th acted, its outcome not recorded
    let job = (await readJob({ store } as any, 'r1'))!.data;
    expect(progressOf(job)).toMatchObject({ state: 'running', total: N, done: 5 });
    expect((await readSteps({ store } as any, 'r1')).filter((s) => s.state === 'running').map((s) => s.i)).toEqual([5]);
    // the lease is alive: a runner now does nothing
    expect((await runJob(c, 'r1')).ran).toBe(false);
    // later, as a restarted function sees it
    const later = () => Date.now() + JOB_LEASE_MS + 1;
    const { job: done } = await runJob(c, 'r1', { now: later });
    expect(done).toMatchObject({ state: 'done', counts: { succeeded: N - 1, denied: 1 } });
    expect(jobOutcome(done)).toBe('partial');
    expect(new Set(acted).size).toBe(acted.length);
    expect(acted).toHaveLength(N - 1);
    const steps = await readSteps({ store } as any, 'r1');
    expect(steps.filter((s) => s.resumed).map((s) => s.i)).toEqual([5]);
    expect(steps[5]).toMatchObject({ state: 'succeeded', before: { enabled: true }, after: { enabled: false } });
    job = (await readJob({ store } as any, 'r1'))!.data;
    expect(job.lease).toBeUndefined();
    // a finished job runs nothing again
    expect((await runJob(c, 'r1', { now: later })).ran).toBe(false);
    expect(acted).toHaveLength(N - 1);
  });

  it('two runners started at once: one holds the job, each step acts once', async () => {
    const store = memoryDynamoStore();
    await newJob(store, 'r2');
    const c = context(store);
    const results = await Promise.all([runJob(c, 'r2'), runJob(c, 'r2'), runJob(c, 'r2')]);
    expect(results.filter((r) => r.ran)).toHaveLength(1);
    expect(acted).toHaveLength(N - 1);
    expect(new Set(acted).size).toBe(N - 1);
    expect((await readJob({ store } as any, 'r2'))!.data.state).toBe('done');
  });

  it('stops at its budget and leaves the rest to the next runner', async () => {
    const store = memoryDynamoStore();
    await newJob(store, 'r3');
    const c = context(store);
    const first = await runJob(c, 'r3', { budgetMs: -1 });
    expect(first.job.state).toBe('running');
    expect(acted).toHaveLength(0);
    const second = await runJob(c, 'r3');
    expect(second.job.state).toBe('done');
    expect(jobOutcome(second.job)).toBe('partial');
  });

  it('outcome: all succeeded, none, some', () => {
    const base = { total: 3 } as any;
    expect(jobOutcome({ ...base, counts: { succeeded: 3 } })).toBe('succeeded');
    expect(jobOutcome({ ...base, counts: { denied: 2, failed: 1 } })).toBe('failed');
    expect(jobOutcome({ ...base, counts: { succeeded: 1, failed: 2 } })).toBe('partial');
  });
});
