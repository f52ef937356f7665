import type { Client } from 'ldapts';
import type { DcRoster } from './dc-roster';
import type { DcEndpoint, DirectoryCredentials } from './endpoints';
import { isConnectionError } from './failures';
import type { SharedHealthView } from './shared-health';

/**
 * The directory pool's health probe (DirectoryPool.startHealthProbe): every `intervalMs`, a bind
 * on each DC untouched for that long or failed in the shared health (0 = off). A failing DC goes
 * to the end of the order; a recovered one gets its place back and its shared finding is cleared.
 * Probes take no connection slot.
 */
export class HealthProbe {
  private timer?: NodeJS.Timeout;
  private probing = false;

  constructor(
    private readonly deps: {
      dcs: DcEndpoint[];
      intervalMs: number;
      roster: DcRoster;
      sharedHealth: SharedHealthView;
      newClient: (dc: DcEndpoint) => Client;
      markFailed: (dc: DcEndpoint, e: unknown) => void;
      now: () => number;
    },
  ) {}

  start(creds: () => Promise<DirectoryCredentials>): () => void {
    if (this.deps.intervalMs <= 0) return () => undefined;
    this.timer = setInterval(() => void this.round(creds).catch(() => undefined), this.deps.intervalMs);
    this.timer.unref();
    return () => this.stop();
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
  }

  /** One round: every due DC at once (a frozen one costs the round its connect timeout). */
  async round(creds: () => Promise<DirectoryCredentials>): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    const { dcs, intervalMs, roster, sharedHealth } = this.deps;
    try {
      await sharedHealth.refresh();
      const c = await creds();
      const now = this.deps.now();
      const due = dcs.filter((dc) => now - roster.lastUsed(dc) >= intervalMs || sharedHealth.failed(dc));
      await Promise.all(
        due.map(async (dc) => {
          const client = this.deps.newClient(dc);
          try {
            await client.bind(c.user, c.password);
            roster.ok(dc);
            sharedHealth.clear(dc);
          } catch (e) {
            if (isConnectionError(e)) this.deps.markFailed(dc, e);
          } finally {
            await client.unbind().catch(() => undefined);
          }
        }),
      );
    } finally {
      this.probing = false;
    }
  }
}
