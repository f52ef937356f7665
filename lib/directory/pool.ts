import { createHash } from 'node:crypto';
import { Client, InvalidCredentialsError, type Entry, type SearchOptions } from 'ldapts';
import { ApiError } from '../errors';
import { requestDeadline } from '../request-scope';
import { hedgedRead } from './hedged-read';
import { deadlineRefusal, withinDeadline, type Cut } from './read-deadline';
import { DirectoryInvalidCredentials } from './errors';
import { ConnectionSlots } from './connection-slots';
import { DcRoster } from './dc-roster';
import { HealthProbe } from './health-probe';
import { HedgeDelay } from './hedge-delay';
import { KeptConnections } from './kept-connections';
import { SharedHealthView } from './shared-health';
import { logger } from '../log';
import { asAnswer, DirectoryNoAnswer, isConnectionError, isUnanswered, problemOf } from './failures';

import type { DcEndpoint, DirectoryCredentials } from './endpoints';
export type { DcEndpoint, DirectoryCredentials } from './endpoints';
export { poolOptions, type PoolOptions } from './pool-options';
import type { PoolOptions } from './pool-options';


export { DirectoryInvalidCredentials };


// a kept read connection idle this long is closed rather than reused
const KEEP_IDLE_MS = 15_000;
const HEDGE_FLOOR_MS = 100;
const HEDGE_CAP_MS = 1000;
const MAX_CONNECTIONS = 16;
const CONNECTION_WAIT_MS = 1000;


export interface SearchPage {
  entries: Entry[];
  incomplete: boolean;
}

/**
 * LDAPS connections to the domain controllers, in failover order (console spec, High availability):
 * - DCs are tried in order; one whose connection fails is tried last for the cooldown, then one
 *   request retries it (a success restores its place);
 * - a wrong password never fails over;
 * - a read unanswered after the hedge delay (about the recent p95 of reads, within a floor and a
 *   cap) goes to the next DC as well and the first answer wins (issue 28); a read whose DC fails
 *   goes to the next at once. The slower try runs on until it answers or times out, so a frozen
 *   DC is still found (and shared) while its requests are answered elsewhere; meanwhile the DC
 *   that lost the hedge is tried after the others (here, and shared as `slow`), so a freezing DC
 *   costs an instance one hedge delay, not one per read;
 * - a change (and a credential check) is never hedged: failover happens only when its connection
 *   is opened, and a change that was sent is never replayed (unknown outcome); a wrong password
 *   tried on two DCs would count twice towards the account's lockout;
 * - a DC that does not answer (connect, or any one LDAP message) within the connect timeout is
 *   failed like one whose connection breaks: a frozen DC (TCP accepted, no answers) costs at most
 *   the connect timeout, then sits in cooldown; one operation is bounded by the operation timeout;
 * - a finding is written to the shared health (the store, expiring with the cooldown) and every
 *   instance reads it before choosing a DC: the other instances skip that DC without a timeout;
 * - at most `maxConnections` connections are open at once; a request that cannot get one within
 *   `connectionWaitMs` is refused 503 `overloaded` rather than queued without bound;
 * - a read of a request with a deadline (Concurrency:ReadBudget, lib/request-scope) is answered
 *   503 `overloaded` (reason `deadline`) once it passes (`directory_unavailable` when every DC is
 *   known down): no new try starts and no slot is waited
 *   for after it. The tries already sent run on to their own timeouts, unheard: a DC slow because
 *   the machine is overloaded is not failed for missing a request's deadline, and a frozen one is
 *   still found by the connect timeout.
 * Per-instance state here is a cache that may be lost (a new instance starts in configured order,
 * then the shared health).
 */
export class DirectoryPool {
  readonly now: () => number;

  constructor(
    readonly dcs: DcEndpoint[],
    private readonly opts: PoolOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.sharedHealth = new SharedHealthView(opts.sharedHealth, dcs, opts.cooldownMs);
    this.slots = new ConnectionSlots(opts.maxConnections ?? MAX_CONNECTIONS, opts.connectionWaitMs ?? CONNECTION_WAIT_MS);
    this.hedge = new HedgeDelay(opts.hedgeFloorMs ?? HEDGE_FLOOR_MS, opts.hedgeCapMs ?? HEDGE_CAP_MS);
    this.roster = new DcRoster(dcs, this.sharedHealth, opts.cooldownMs, opts.connectTimeoutMs, this.now);
    this.kept = new KeptConnections(opts.keepIdleMs ?? KEEP_IDLE_MS, (client, release) => this.close(client, release));
    this.probe = new HealthProbe({ dcs, intervalMs: opts.probeIntervalMs, roster: this.roster, sharedHealth: this.sharedHealth, newClient: (dc) => this.newClient(dc), markFailed: (dc, e) => this.markFailed(dc, e), now: this.now });
  }

  private readonly probe: HealthProbe;

  /** failed, cooling down, retried, lost a hedge: what this instance knows of its DCs */
  private readonly roster: DcRoster;
  /** bound read connections kept per technical account and DC */
  private readonly kept: KeptConnections;

  /** the shared health as this instance knows it */
  private readonly sharedHealth: SharedHealthView;
  /** at most maxConnections open at once */
  private readonly slots: ConnectionSlots;
  /** about the recent p95 of reads, within the floor and the cap */
  private readonly hedge: HedgeDelay;

  /** Connections open now, and requests waiting for one (tests, diagnostics). */
  connectionStats() {
    return this.slots.stats();
  }

  /** The hedge delay now (ms). */
  hedgeDelay(): number {
    return this.hedge.delay();
  }

  // ---- order and state (./dc-roster)

  /** The order this request will try: healthy DCs in configured order, cooling-down ones last. */
  connectionOrder(): DcEndpoint[] {
    return this.roster.order();
  }

  dcState() {
    return this.roster.view();
  }

  private markFailed(dc: DcEndpoint, e: unknown) {
    this.roster.failed(dc, problemOf(e), (e as Error)?.message);
  }

  // ---- connections

  private newClient(dc: DcEndpoint): Client {
    return new Client({
      url: dc.url,
      connectTimeout: this.opts.connectTimeoutMs,
      // every message (bind, each search page, modify, unbind): a DC that stays silent this long is
      // treated as down; this bounds what a frozen DC costs (the whole operation: withinBudget)
      timeout: this.opts.connectTimeoutMs,
      // the configured CA is the only trust anchor; the host name (or IP SAN) is verified by TLS
      tlsOptions: { ca: [this.opts.caPem], minVersion: 'TLSv1.2', rejectUnauthorized: true },
    });
  }

  /**
   * A bound connection to this one DC (a slot taken: `release` gives it back once the client is
   * closed). A wrong password: DirectoryInvalidCredentials (the DC answered, it is not failed); a
   * DC that cannot serve: marked failed, the error thrown for the caller to fail over.
   */
  private async openBound(creds: DirectoryCredentials, dc: DcEndpoint, cut?: Cut): Promise<{ client: Client; release: () => void }> {
    const release = await this.slots.take(cut ? Math.max(0, cut.at - Date.now()) : undefined);
    if (cut?.expired) {
      release();
      throw deadlineRefusal(cut, false);
    }
    const client = this.newClient(dc);
    this.roster.connected(dc);
    try {
      await client.bind(creds.user, creds.password);
      this.roster.ok(dc);
      return { client, release };
    } catch (e) {
      await client.unbind().catch(() => undefined);
      release();
      if (e instanceof InvalidCredentialsError) {
        this.roster.ok(dc); // the DC answered; the credentials are wrong
        throw new DirectoryInvalidCredentials();
      }
      if (!isConnectionError(e)) throw asAnswer(e);
      this.markFailed(dc, e);
      throw e;
    }
  }

  private close(client: Client, release: () => void) {
    void client
      .unbind()
      .catch(() => undefined)
      .finally(release);
  }

  /** Open a bound connection on the first DC that answers, in order (no hedging); throws DirectoryInvalidCredentials without failover. */
  private async connect(creds: DirectoryCredentials, skip: Set<string>): Promise<{ client: Client; dc: DcEndpoint; release: () => void }> {
    let lastError: unknown;
    const order = this.connectionOrder();
    // a DC claimed for its one retry but not reached in this request gives the claim back
    const releaseUnreached = (from: number) => {
      this.roster.unclaim(order.slice(from));
    };
    for (const [i, dc] of order.entries()) {
      if (skip.has(dc.name)) continue;
      try {
        const { client, release } = await this.openBound(creds, dc);
        releaseUnreached(i + 1);
        return { client, dc, release };
      } catch (e) {
        if (!isConnectionError(e)) {
          releaseUnreached(i + 1);
          throw e;
        }
        lastError = e;
      }
    }
    logger.error('no domain controller reachable', { error: (lastError as Error)?.message });
    throw new ApiError(503, 'directory_unavailable');
  }

  /**
   * Run `fn` on a bound connection. `kind: 'read'` is hedged (see the class) and re-run on another
   * DC when its connection breaks or its DC stops answering; `kind: 'write'` never is: the outcome
   * is then reported unknown. `hedge: false` (a credential check) fails over without hedging. Each
   * try on a DC is bounded by the operation timeout.
   */
  async run<T>(
    creds: DirectoryCredentials,
    kind: 'read' | 'write',
    fn: (client: Client, dc: DcEndpoint) => Promise<T>,
    opts: { reuse?: boolean; hedge?: boolean } = {},
  ): Promise<T> {
    if (kind === 'write') {
      await this.sharedHealth.refresh();
      return this.runWrite(creds, fn);
    }
    // technical-account reads may keep their bound connection for the next read; a credential
    // check and a change always get a connection of their own
    const key = opts.reuse === true ? createHash('sha256').update(`${creds.user}\n${creds.password}`).digest('hex') : '';
    return withinDeadline(requestDeadline(), () => this.roster.allDown(), async (cut) => {
      await this.sharedHealth.refresh();
      return opts.hedge === false ? this.runInOrder(creds, fn, key, cut) : this.runHedged(creds, fn, key, cut);
    });
  }

  /** A change: one DC, chosen when its connection opens; sent once. */
  private async runWrite<T>(creds: DirectoryCredentials, fn: (client: Client, dc: DcEndpoint) => Promise<T>): Promise<T> {
    const { client, dc, release } = await this.connect(creds, new Set());
    try {
      const result = await this.withinBudget(client, () => fn(client, dc));
      this.roster.ok(dc);
      return result;
    } catch (e) {
      if (!isConnectionError(e)) throw asAnswer(e);
      this.markFailed(dc, e);
      logger.error('directory change sent and no answer: outcome unknown', { dc: dc.name });
      throw new ApiError(502, 'directory_outcome_unknown', { dc: dc.name });
    } finally {
      this.close(client, release);
    }
  }

  /** A read in order without hedging: the next DC only once one has failed. */
  private async runInOrder<T>(creds: DirectoryCredentials, fn: (client: Client, dc: DcEndpoint) => Promise<T>, key: string, cut?: Cut): Promise<T> {
    const tried = new Set<string>();
    for (;;) {
      if (cut?.expired) throw deadlineRefusal(cut, false);
      const order = this.connectionOrder().filter((dc) => !tried.has(dc.name));
      const dc = order[0];
      if (!dc) throw new ApiError(503, 'directory_unavailable');
      this.roster.unclaim(order.slice(1));
      try {
        return await this.attempt(creds, dc, fn, key, cut);
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        tried.add(dc.name);
        if (tried.size >= this.dcs.length) {
          logger.error('no domain controller reachable', { error: (e as Error)?.message });
          throw new ApiError(503, 'directory_unavailable');
        }
      }
    }
  }

  /**
   * A hedged read: the first DC in order now; the next ready DC as well when no answer came within
   * the hedge delay, or at once when a try fails. The first answer wins (an answer is also the
   * directory refusing: DirectoryError, DirectoryInvalidCredentials); the others run on unheard.
   */
  private runHedged<T>(creds: DirectoryCredentials, fn: (client: Client, dc: DcEndpoint) => Promise<T>, key: string, cut?: Cut): Promise<T> {
    return hedgedRead(this.connectionOrder(), this.hedge, this.roster, (dc) => this.attempt(creds, dc, fn, key, cut), cut);
  }

  /**
   * One try of `fn` on one DC: on its kept connection (a technical-account read) or a new one. A
   * kept connection closed under us (idle, server restart, thawed instance) is replaced on the
   * same DC without blame; a DC that leaves it unanswered is failed.
   */
  private async attempt<T>(creds: DirectoryCredentials, dc: DcEndpoint, fn: (client: Client, dc: DcEndpoint) => Promise<T>, key: string, cut?: Cut): Promise<T> {
    for (;;) {
      const kept = key ? this.kept.take(key, dc) : undefined;
      const { client, release } = kept ?? (await this.openBound(creds, dc, cut));
      let keep = false;
      try {
        const result = await this.withinBudget(client, () => fn(client, dc));
        this.roster.ok(dc);
        keep = key !== '';
        return result;
      } catch (e) {
        if (!isConnectionError(e)) {
          keep = key !== '';
          throw asAnswer(e);
        }
        if (kept && !isUnanswered(e)) continue;
        this.markFailed(dc, e);
        throw e;
      } finally {
        if (kept) this.kept.give(key, kept, keep);
        else if (keep) this.kept.keep(key, client, dc, release);
        else this.close(client, release);
      }
    }
  }

  /** `op` on `client`, abandoned (connection closed, DirectoryNoAnswer) after the operation timeout. */
  private async withinBudget<T>(client: Client, op: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void client.unbind().catch(() => undefined);
        reject(new DirectoryNoAnswer('directory operation'));
      }, this.opts.operationTimeoutMs);
    });
    try {
      return await Promise.race([op(), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Check the credentials by a bind (sign-in, step-up by password, technical account tests): never hedged. */
  async verifyCredentials(creds: DirectoryCredentials): Promise<boolean> {
    try {
      await this.run(creds, 'read', async () => undefined, { hedge: false });
      return true;
    } catch (e) {
      if (e instanceof DirectoryInvalidCredentials) return false;
      throw e;
    }
  }

  /** Paged search: pages of `pageSize`, at most `searchMaxResults` entries, then `incomplete`. */
  async search(creds: DirectoryCredentials, base: string, options: SearchOptions & { max?: number }): Promise<SearchPage> {
    const max = Math.min(options.max ?? this.opts.searchMaxResults, this.opts.searchMaxResults);
    return this.run(
      creds,
      'read',
      async (client) => {
        const entries: Entry[] = [];
        let incomplete = false;
        const { max: _max, ...ldapOptions } = options;
        for await (const page of client.searchPaginated(base, { ...ldapOptions, paged: { pageSize: Math.min(this.opts.pageSize, max + 1) } })) {
          for (const entry of page.searchEntries) {
            if (entries.length >= max) {
              incomplete = true;
              break;
            }
            entries.push(entry);
          }
          if (incomplete) break;
        }
        return { entries, incomplete };
      },
      { reuse: true },
    );
  }

  /** The health probe (./health-probe): a bind on each idle or shared-failed DC every `probeIntervalMs` (0 = off). */
  startHealthProbe(creds: () => Promise<DirectoryCredentials>): () => void {
    return this.probe.start(creds);
  }

  /** One probe round now (tests, and the probe's timer). */
  probeIdle(creds: () => Promise<DirectoryCredentials>): Promise<void> {
    return this.probe.round(creds);
  }

  stop() {
    this.probe.stop();
    this.kept.closeAll();
  }
}
