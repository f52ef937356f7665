const LATENCY_SAMPLES = 200;
const LATENCY_MIN_SAMPLES = 20;

/**
 * The hedge delay of an instance's reads (issue 28): about the p95 of its last 200 successful
 * reads, held within the floor and the cap; the cap until 20 reads are known.
 */
export class HedgeDelay {
  private readonly latencies: number[] = [];
  private at = 0;
  private p95?: number;

  constructor(
    private readonly floorMs: number,
    private readonly capMs: number,
  ) {}

  note(ms: number) {
    if (this.latencies.length < LATENCY_SAMPLES) this.latencies.push(ms);
    else this.latencies[this.at] = ms;
    this.at = (this.at + 1) % LATENCY_SAMPLES;
    if (this.at % 10 === 0) this.p95 = undefined; // computed again now and then, not per read
  }

  /** The hedge delay now (ms). */
  delay(): number {
    const cap = Math.max(this.floorMs, this.capMs);
    if (this.latencies.length < LATENCY_MIN_SAMPLES) return cap;
    if (this.p95 === undefined) {
      const sorted = [...this.latencies].sort((a, b) => a - b);
      this.p95 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
    }
    return Math.round(Math.min(cap, Math.max(this.floorMs, this.p95)));
  }
}
