// Per-hop durations of one request (milliseconds), logged beside its correlation id so the
// reveal's round trip can be broken down (bench/laps.ts reads them). Never a value, only times.
const ms = (x: number) => Number(x.toFixed(2));

export class HopTimes {
  private readonly started = performance.now();
  readonly hops: Record<string, number> = {};

  /** Time `fn` as `hop` (hops that run together are each timed on their own; a repeated hop adds up). */
  async time<T>(hop: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.hops[hop] = ms((this.hops[hop] ?? 0) + performance.now() - t0);
    }
  }

  total(): number {
    return ms(performance.now() - this.started);
  }
}
