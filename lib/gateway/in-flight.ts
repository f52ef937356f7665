// In-flight requests per function (issue 28), the way Lambda's reserved concurrency caps a
// function's instances: at most `limit` run at once; the others wait their turn, in arrival order,
// for at most the start budget. A request whose turn cannot come within the budget is refused at
// once (its expected wait, from the recent run time, is longer than what is left) or when the
// budget runs out: the caller answers 503 `overloaded` with Retry-After. Used by the container
// gateway and by the local serverless-offline gateway (local/offline-gateway.cjs).

export interface InFlightStats {
  running: number;
  waiting: number;
  limit: number;
  admitted: number;
  refused: number;
}

interface Waiter {
  grant: () => void;
  deadline: number;
}

export class InFlightLimit {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** recent run time of one request (ms, moving average): the expected wait of a queue position */
  private runMs = 0;
  private admitted = 0;
  private refused = 0;

  constructor(
    readonly limit: number,
    /** the start budget: the longest a request may wait for its turn (ms) */
    readonly budgetMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A turn for a request that arrived at `arrivedAt` (epoch ms): its release (call once when the
   * request is answered), or undefined when it is refused (no turn within the budget).
   */
  async acquire(arrivedAt: number = this.now()): Promise<(() => void) | undefined> {
    const deadline = arrivedAt + this.budgetMs;
    if (this.running < this.limit && this.waiting.length === 0) return this.grant();
    // refused at once when the queue ahead of it already takes longer than what is left
    const rounds = Math.floor(this.waiting.length / this.limit) + 1;
    if (this.runMs > 0 && this.now() + rounds * this.runMs > deadline) return this.refuse();
    const granted = await new Promise<boolean>((resolve) => {
      const waiter: Waiter = { grant: () => resolve(true), deadline };
      this.waiting.push(waiter);
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(waiter);
        if (i < 0) return; // granted meanwhile
        this.waiting.splice(i, 1);
        resolve(false);
      }, Math.max(0, deadline - this.now()));
      waiter.grant = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    return granted ? this.grant(true) : this.refuse();
  }

  stats(): InFlightStats {
    return { running: this.running, waiting: this.waiting.length, limit: this.limit, admitted: this.admitted, refused: this.refused };
  }

  private refuse(): undefined {
    this.refused++;
    return undefined;
  }

  /** `handedOver`: the slot was passed on by a release (already counted as running). */
  private grant(handedOver = false): () => void {
    if (!handedOver) this.running++;
    this.admitted++;
    const started = this.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const ms = this.now() - started;
      this.runMs = this.runMs === 0 ? ms : 0.8 * this.runMs + 0.2 * ms;
      // the slot goes straight to the oldest waiter still within its budget
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.running--;
    };
  }
}
