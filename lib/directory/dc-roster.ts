import { logger } from '../log';
import type { DcEndpoint } from './endpoints';
import type { SharedHealthView } from './shared-health';

interface DcState {
  failedAt?: number;
  retryClaimed?: boolean;
  /** lost a hedge (another DC answered a read it has not answered yet): tried after the others until then */
  suspectUntil?: number;
  lastUsed: number;
  connects: number;
}

/**
 * What an instance knows of its DCs (DirectoryPool): failed ones cool down and are tried last,
 * exactly one request retries a DC whose cooldown elapsed, a DC that lost a hedge is tried after
 * the others for a moment; with the shared health's findings of the other instances on top.
 */
export class DcRoster {
  private readonly state = new Map<string, DcState>();

  constructor(
    private readonly dcs: DcEndpoint[],
    private readonly sharedHealth: SharedHealthView,
    private readonly cooldownMs: number,
    private readonly connectTimeoutMs: number,
    private readonly now: () => number,
  ) {
    for (const dc of dcs) this.state.set(dc.name, { lastUsed: 0, connects: 0 });
  }


  /** The order this request will try: healthy DCs in configured order, cooling-down ones last. */
  order(): DcEndpoint[] {
    const now = this.now();
    const ready: DcEndpoint[] = [];
    const cooling: DcEndpoint[] = [];
    const suspects: DcEndpoint[] = [];
    for (const dc of this.dcs) {
      const st = this.state.get(dc.name)!;
      if (this.sharedHealth.failed(dc)) cooling.push(dc);
      else if (st.failedAt === undefined && (st.suspectUntil ?? 0) > now) suspects.push(dc);
      else if (st.failedAt === undefined) ready.push(dc);
      else if (now - st.failedAt >= this.cooldownMs && !st.retryClaimed) {
        st.retryClaimed = true; // exactly one request retries a DC whose cooldown elapsed
        ready.push(dc);
      } else cooling.push(dc);
    }
    // keep configured order among ready DCs (a retried DC goes back to its place); a DC that lost a
    // hedge comes after them, a failed one last
    ready.sort((a, b) => this.dcs.indexOf(a) - this.dcs.indexOf(b));
    return [...ready, ...suspects, ...cooling];
  }

  /** Is this DC one a read may be hedged to (neither cooling down here nor failed in the shared health)? */
  ready(dc: DcEndpoint): boolean {
    const st = this.state.get(dc.name)!;
    return !this.sharedHealth.failed(dc) && (st.suspectUntil ?? 0) <= this.now() && (st.failedAt === undefined || st.retryClaimed === true);
  }

  view(): Array<{ name: string; url: string; healthy: boolean; failedAt?: string; lastUsed?: string; connects: number; shared?: { reason: string; until: string } }> {
    return this.dcs.map((dc) => {
      const st = this.state.get(dc.name)!;
      const f = this.sharedHealth.failed(dc) ? this.sharedHealth.finding(dc) : undefined;
      return {
        name: dc.name,
        url: dc.url,
        healthy: st.failedAt === undefined && !f,
        failedAt: st.failedAt ? new Date(st.failedAt).toISOString() : undefined,
        lastUsed: st.lastUsed ? new Date(st.lastUsed).toISOString() : undefined,
        connects: st.connects,
        ...(f ? { shared: { reason: f.reason, until: new Date(f.until).toISOString() } } : {}),
      };
    });
  }

  failed(dc: DcEndpoint, problem: string, error?: string) {
    const st = this.state.get(dc.name)!;
    st.failedAt = this.now();
    st.retryClaimed = false;
    st.suspectUntil = undefined;
    logger.warn('directory DC failed, tried last during cooldown', { dc: dc.name, problem, error });
    this.sharedHealth.share(dc, problem, this.cooldownMs);
  }

  ok(dc: DcEndpoint) {
    const st = this.state.get(dc.name)!;
    st.failedAt = undefined;
    st.retryClaimed = false;
    st.lastUsed = this.now();
    if (st.suspectUntil !== undefined) {
      // the DC answered the read it had lost: it was slow, not gone
      st.suspectUntil = undefined;
      if (this.sharedHealth.finding(dc)?.reason === 'slow') this.sharedHealth.clear(dc);
    }
  }

  /**
   * Another DC answered a read this one has not answered after the hedge delay: until this one
   * answers (ok) or fails (failed), and at most twice the connect timeout, reads go to the
   * others first, here and (shared as `slow`) in every instance. So a freezing DC costs an instance
   * one hedge delay, not one per read, while its first try waits out the connect timeout.
   */
  suspect(dc: DcEndpoint, hedgeDelayMs: number) {
    const st = this.state.get(dc.name)!;
    if (st.failedAt !== undefined) return;
    const forMs = 2 * this.connectTimeoutMs;
    const first = (st.suspectUntil ?? 0) <= this.now();
    st.suspectUntil = this.now() + forMs;
    if (first) logger.warn('directory DC slower than the hedge delay, tried after the others', { dc: dc.name, hedgeDelayMs });
    this.sharedHealth.share(dc, 'slow', forMs);
  }


  /** Has every DC failed (here, or as another instance found: not merely slow)? */
  allDown(): boolean {
    return this.dcs.every((dc) => this.state.get(dc.name)!.failedAt !== undefined || (this.sharedHealth.failed(dc) && this.sharedHealth.finding(dc)?.reason !== 'slow'));
  }

  /** These DCs were not tried after all: a retry they had claimed goes to the next request. */
  unclaim(dcs: Iterable<DcEndpoint>) {
    for (const dc of dcs) this.state.get(dc.name)!.retryClaimed = false;
  }

  /** A new connection to this DC (counted for tests and the probe). */
  connected(dc: DcEndpoint) {
    this.state.get(dc.name)!.connects++;
  }

  /** When this DC last answered (epoch ms; 0: never). */
  lastUsed(dc: DcEndpoint): number {
    return this.state.get(dc.name)!.lastUsed;
  }
}
