import { overloaded } from '../errors';

/**
 * At most `max` directory connections open at once in an instance (issue 28): a request that gets
 * no slot within `waitMs` is refused 503 `overloaded` (reason `directory_connections`) rather than
 * queueing without bound behind a frozen DC.
 */
export class ConnectionSlots {
  private open = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly max: number,
    private readonly waitMs: number,
  ) {}

  /** Connections open now, and requests waiting for one (tests, diagnostics). */
  stats() {
    return { open: this.open, waiting: this.waiters.length, max: this.max };
  }

  /**
   * A slot, or 503 `overloaded` when none frees within the wait (or `waitMs`, when shorter: what
   * is left of a read's deadline). Returns its release (idempotent).
   */
  async take(waitMs = this.waitMs): Promise<() => void> {
    if (this.open >= this.max) {
      await new Promise<void>((resolve, reject) => {
        const waiter = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(overloaded('directory_connections', Math.max(1, Math.ceil(this.waitMs / 1000))));
        }, Math.min(waitMs, this.waitMs));
        this.waiters.push(waiter);
      });
    }
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      // a freed slot goes to the longest waiter (counted as open again by its take)
      this.waiters.shift()?.();
    };
  }
}
