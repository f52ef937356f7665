import { runSlot, slotOf, startScheduler, takeSlot, type ScheduledJob } from '../../lib/gateway/scheduler';
import { memoryDynamoStore, observe } from '../support/memory-store';

// The container's job scheduler: one run per slot whatever the number of replicas (the lease is a
// conditional write in the store), a failing job logged and the next slot run again.

const RATE = 'rate(5 minutes)';
const SLOT = Date.parse('2026-11-25T10:05:00Z');

describe('the per-slot lease', () => {
  it('two replicas taking one slot at once: exactly one runs the job', async () => {
    const store = memoryDynamoStore();
    let runs = 0;
    const job: ScheduledJob = { name: 'hdc-console-approvalsExpiry', rate: RATE, run: async () => void runs++ };
    const outcomes = await Promise.all([runSlot(store, job, SLOT), runSlot(store, job, SLOT), runSlot(store, job, SLOT)]);
    expect(outcomes.sort()).toEqual(['ran', 'taken', 'taken']);
    expect(runs).toBe(1);
  });
  it('the next slot runs again; another job has its own lease', async () => {
    const store = memoryDynamoStore();
    expect(await takeSlot(store, 'a', SLOT, 300_000)).toBe(true);
    expect(await takeSlot(store, 'a', SLOT, 300_000)).toBe(false);
    expect(await takeSlot(store, 'a', SLOT + 300_000, 300_000)).toBe(true);
    expect(await takeSlot(store, 'b', SLOT, 300_000)).toBe(true);
  });
  it('a failing job is reported, not thrown, and its slot stays taken (no second run by another replica)', async () => {
    const store = memoryDynamoStore();
    const job: ScheduledJob = { name: 'x', rate: RATE, run: async () => Promise.reject(new Error('boom')) };
    expect(await runSlot(store, job, SLOT)).toBe('failed');
    expect(await runSlot(store, job, SLOT)).toBe('taken');
  });
  it('a store that cannot be written: the slot is skipped, the job not run', async () => {
    const store = memoryDynamoStore();
    observe(store, () => Promise.reject(Object.assign(new Error('down'), { name: 'NetworkingError' })));
    let runs = 0;
    expect(await runSlot(store, { name: 'x', rate: RATE, run: async () => void runs++ }, SLOT)).toBe('failed');
    expect(runs).toBe(0);
  });
});

describe('the timers', () => {
  afterEach(() => jest.useRealTimers());
  it('fire on clock boundaries (never at start), once per slot', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-25T10:03:10Z') });
    const store = memoryDynamoStore();
    const ran: string[] = [];
    const stop = startScheduler(store, [{ name: 'j', rate: RATE, run: async () => void ran.push(new Date(Date.now()).toISOString()) }]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(ran).toEqual([]); // 10:04:10: no boundary crossed yet
    await jest.advanceTimersByTimeAsync(10 * 60_000); // to 10:14:10
    expect(ran.map((t) => t.slice(0, 19))).toEqual(['2026-11-25T10:05:00', '2026-11-25T10:10:00']);
    stop();
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(ran).toHaveLength(2);
    expect(slotOf(Date.now(), 300_000) % 300_000).toBe(0);
  });
});
