// In-flight requests per function (issue 28), the way Lambda's reserved concurrency caps a
// function's instances: at most `limit` run at once; the others wait their turn, in arrival order,
// for at most the start budget. A request whose turn cannot come within the budget is refused at
// once (its expected wait, from the recent run time, is longer than what is left) or when the
// budget runs out: the caller answers 503 `overloaded` with Retry-After. Used by the container
// gateway and by the local serverless-offline gateway (local/offline-gateway.cjs).
//
// A read with a deadline for its work (the console's: two thirds of Concurrency:ReadBudget after its
// arrival, readWorkMs) is also refused, at once or when its turn comes, once a run as long as the
// longest of the function's last 32 would end past that deadline. bench/load's overload found
// reads given a turn within the start budget, on an estimate made before the burst, that then ran
// past their budget: a turn a read cannot use in time is better given to the next in line, and
// the refusal answered at once. A run still in
// progress counts as long as it has lasted so far: at a burst's start the finished runs are those
// of before it, and the slower ones under way are the first sign (bench/load, the container
// gateway's overload: reads given a turn at the burst's start were served at 3.2–3.6 s).

export interface InFlightStats {
  running: number;
  waiting: number;
  limit: number;
  admitted: number;
  refused: number;
}

interface Waiter {
  grant: () => void;
  refuse: () => void;
  /** epoch ms by which its run must end, when it has such a deadline */
  doneBy?: number;
}

/** run times kept for the long-run estimate */
const RECENT_RUNS = 32;

export class InFlightLimit {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** recent run time of one request (ms, moving average): the expected wait of a queue position */
  private runMs = 0;
  /** the last RECENT_RUNS run times (ms), oldest first */
  private readonly recent: number[] = [];
  /** the longest of them: how long a run may be expected to take at worst (0 before any) */
  private longRunMs = 0;
  private admitted = 0;
  private refused = 0;
  /** when each run in progress started (epoch ms) */
  private readonly startedAt = new Set<{ at: number }>();

  constructor(
    readonly limit: number,
    /** the start budget: the longest a request may wait for its turn (ms) */
    readonly budgetMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A turn for a request that arrived at `arrivedAt` (epoch ms) and, if it has one, must have
   * done its work by `doneBy` (epoch ms): its release (call once when the request is answered), or
   * undefined when it is refused (no turn within the budget, or none that leaves time to run).
   */
  async acquire(arrivedAt: number = this.now(), doneBy?: number): Promise<(() => void) | undefined> {
    const deadline = arrivedAt + this.budgetMs;
    if (this.running < this.limit && this.waiting.length === 0) return this.grant();
    // refused at once when the queue ahead of it already takes longer than what is left
    const rounds = Math.floor(this.waiting.length / this.limit) + 1;
    const turnAt = this.now() + rounds * this.runMs;
    if (this.runMs > 0 && (turnAt > deadline || !this.inTime(doneBy, turnAt))) return this.refuse();
    const granted = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(waiter);
        if (i < 0) return; // granted meanwhile
        this.waiting.splice(i, 1);
        resolve(false);
      }, Math.max(0, deadline - this.now()));
      const waiter: Waiter = {
        doneBy,
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
        refuse: () => {
          clearTimeout(timer);
          resolve(false);
        },
      };
      this.waiting.push(waiter);
    });
    return granted ? this.grant(true) : this.refuse();
  }

  stats(): InFlightStats {
    return { running: this.running, waiting: this.waiting.length, limit: this.limit, admitted: this.admitted, refused: this.refused };
  }

  /** Whether a run starting at `startAt` and taking as long as the longest recent one ends by `doneBy`. */
  private inTime(doneBy: number | undefined, startAt: number): boolean {
    return doneBy === undefined || startAt + this.longRun() <= doneBy;
  }

  /** The longest recent run, or the longest run in progress so far if longer. */
  private longRun(): number {
    let longest = this.longRunMs;
    const now = this.now();
    for (const run of this.startedAt) longest = Math.max(longest, now - run.at);
    return longest;
  }

  private refuse(): undefined {
    this.refused++;
    return undefined;
  }

  /** `handedOver`: the slot was passed on by a release (already counted as running). */
  private grant(handedOver = false): () => void {
    if (!handedOver) this.running++;
    this.admitted++;
    const run = { at: this.now() };
    this.startedAt.add(run);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.startedAt.delete(run);
      this.learn(this.now() - run.at);
      // the slot goes straight to the oldest waiter still within its budget and able to use it in time
      for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
        if (this.inTime(next.doneBy, this.now())) return next.grant();
        next.refuse();
      }
      this.running--;
    };
  }

  private learn(ms: number): void {
    this.runMs = this.runMs === 0 ? ms : 0.8 * this.runMs + 0.2 * ms;
    this.recent.push(ms);
    if (this.recent.length > RECENT_RUNS) this.recent.shift();
    // the longest, not a percentile: bench/load's overload still found reads given a turn by the
    // 90th percentile ending past their budget (runs on two overcommitted cores vary that much)
    this.longRunMs = Math.max(...this.recent);
  }
}
