import type { Store } from '../store';
import { putRecord } from '../store/records';
import { logger } from '../log';
import { rateToMs } from './service-map';

// The job scheduler of a container: each scheduled function runs once per slot of its rate
// (slots on clock boundaries, like EventBridge and serverless-offline), whatever the number of
// replicas: the first replica to write the slot's lease item in the store runs it, the others skip.

export interface ScheduledJob {
  name: string;
  rate: string;
  run(): Promise<unknown>;
}

export const slotOf = (now: number, rateMs: number) => Math.floor(now / rateMs) * rateMs;

/** Take the lease of one slot: true for exactly one caller per (job, slot), across processes. */
export async function takeSlot(store: Store, job: string, slotStart: number, rateMs: number): Promise<boolean> {
  const ttl = Math.ceil((slotStart + 2 * rateMs) / 1000);
  return putRecord(store, `SCHEDULE#${job}`, new Date(slotStart).toISOString(), { takenAt: new Date().toISOString() }, { expectVersion: 0, ttl });
}

/** Run one slot of a job if this process takes its lease; the outcome is logged, never thrown. */
export async function runSlot(store: Store, job: ScheduledJob, slotStart: number): Promise<'ran' | 'taken' | 'failed'> {
  const rateMs = rateToMs(job.rate);
  try {
    if (!(await takeSlot(store, job.name, slotStart, rateMs))) return 'taken';
  } catch (e) {
    logger.error('scheduler: lease not written, slot skipped', { job: job.name, error: (e as Error).name });
    return 'failed';
  }
  const started = Date.now();
  try {
    await job.run();
    logger.info('scheduled job ran', { job: job.name, slot: new Date(slotStart).toISOString(), ms: Date.now() - started });
    return 'ran';
  } catch (e) {
    logger.error('scheduled job failed', { job: job.name, slot: new Date(slotStart).toISOString(), error: (e as Error).name });
    return 'failed';
  }
}

/** Start every job's timer: each fires at its next slot boundary. Returns a stop function. */
export function startScheduler(store: Store, jobs: ScheduledJob[], clock: () => number = Date.now): () => void {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  for (const job of jobs) {
    const rateMs = rateToMs(job.rate);
    const arm = () => {
      if (stopped) return;
      const now = clock();
      const next = slotOf(now, rateMs) + rateMs;
      const t = setTimeout(() => {
        timers.delete(t);
        void runSlot(store, job, slotOf(clock(), rateMs)).finally(arm);
      }, next - now);
      t.unref();
      timers.add(t);
    };
    arm();
  }
  return () => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
  };
}
