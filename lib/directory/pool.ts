import { createHash } from 'node:crypto';
import { Client, InvalidCredentialsError, ResultCodeError, type Entry, type SearchOptions } from 'ldapts';
import { ApiError } from '../errors';
import { DirectoryError, DirectoryInvalidCredentials } from './errors';
import { logger } from '../log';

export interface DcEndpoint {
  name: string;
  /** ldaps://host:636 only (validated where settings are saved) */
  url: string;
}
export interface DirectoryCredentials {
  /** a DN or a UPN */
  user: string;
  password: string;
}
export interface PoolOptions {
  caPem: string;
  /** TCP + TLS connect, and the answer to any one LDAP message (a DC silent that long is unresponsive) */
  connectTimeoutMs: number;
  /** one directory operation on one DC (every message of one `run` there) */
  operationTimeoutMs: number;
  cooldownMs: number;
  probeIntervalMs: number;
  pageSize: number;
  searchMaxResults: number;
  /** a kept read connection unused this long is closed (default 15 s) */
  keepIdleMs?: number;
  now?: () => number;
}

interface DcState {
  failedAt?: number;
  retryClaimed?: boolean;
  lastUsed: number;
  connects: number;
}

export { DirectoryInvalidCredentials };

/** A DC left a message (or the whole operation) unanswered: frozen, overloaded or cut off. */
class DirectoryNoAnswer extends Error {
  constructor(what: string) {
    super(`${what}: no answer in time`);
    this.name = 'DirectoryNoAnswer';
  }
}

// a kept read connection idle this long is closed rather than reused
const KEEP_IDLE_MS = 15_000;

interface KeptConnection {
  client: Client;
  dc: DcEndpoint;
  lastUsed: number;
  /** runs using it now: never closed as idle under them */
  inUse: number;
}

// Server-side conditions that mean "this DC cannot serve now" rather than "this request is wrong".
const DC_FAULT_CODES = new Set([51 /* busy */, 52 /* unavailable */, 80 /* other */]);

const isConnectionError = (e: unknown) =>
  !(e instanceof ResultCodeError) || DC_FAULT_CODES.has((e as ResultCodeError).code);

// ldapts 8: "Connection timeout" (TCP/TLS connect), "<Request>: Operation timed out" (client `timeout`)
const isUnanswered = (e: unknown) =>
  e instanceof DirectoryNoAnswer || (e instanceof Error && /Operation timed out|^Connection timeout$/.test(e.message));

export interface SearchPage {
  entries: Entry[];
  incomplete: boolean;
}

/**
 * LDAPS connections to the domain controllers, in failover order (console spec, High availability):
 * - DCs are tried in order; one whose connection fails is tried last for the cooldown, then one
 *   request retries it (a success restores its place);
 * - a wrong password never fails over;
 * - failover happens only when a connection is opened: a read that loses its connection is
 *   re-run on a new connection, a change that was sent is never replayed (unknown outcome);
 * - a DC that does not answer (connect, or any one LDAP message) within the connect timeout is
 *   failed like one whose connection breaks, so a frozen DC (TCP accepted, no answers) costs one
 *   request at most the connect timeout, then sits in cooldown; one operation (all its messages)
 *   is bounded by the operation timeout.
 * Per-instance state here is a cache that may be lost (a new instance starts in configured order).
 */
export class DirectoryPool {
  private readonly state = new Map<string, DcState>();
  private probeTimer?: NodeJS.Timeout;
  readonly now: () => number;

  constructor(
    readonly dcs: DcEndpoint[],
    private readonly opts: PoolOptions,
  ) {
    this.now = opts.now ?? Date.now;
    for (const dc of dcs) this.state.set(dc.name, { lastUsed: 0, connects: 0 });
  }

  /** The order this request will try: healthy DCs in configured order, cooling-down ones last. */
  connectionOrder(): DcEndpoint[] {
    const now = this.now();
    const ready: DcEndpoint[] = [];
    const cooling: DcEndpoint[] = [];
    for (const dc of this.dcs) {
      const st = this.state.get(dc.name)!;
      if (st.failedAt === undefined) ready.push(dc);
      else if (now - st.failedAt >= this.opts.cooldownMs && !st.retryClaimed) {
        st.retryClaimed = true; // exactly one request retries a DC whose cooldown elapsed
        ready.push(dc);
      } else cooling.push(dc);
    }
    // keep configured order among ready DCs (a retried DC goes back to its place)
    ready.sort((a, b) => this.dcs.indexOf(a) - this.dcs.indexOf(b));
    return [...ready, ...cooling];
  }

  dcState(): Array<{ name: string; url: string; healthy: boolean; failedAt?: string; lastUsed?: string; connects: number }> {
    return this.dcs.map((dc) => {
      const st = this.state.get(dc.name)!;
      return {
        name: dc.name,
        url: dc.url,
        healthy: st.failedAt === undefined,
        failedAt: st.failedAt ? new Date(st.failedAt).toISOString() : undefined,
        lastUsed: st.lastUsed ? new Date(st.lastUsed).toISOString() : undefined,
        connects: st.connects,
      };
    });
  }

  private markFailed(dc: DcEndpoint, e: unknown) {
    const st = this.state.get(dc.name)!;
    st.failedAt = this.now();
    st.retryClaimed = false;
    logger.warn('directory DC failed, tried last during cooldown', { dc: dc.name, error: (e as Error)?.message });
  }

  private markOk(dc: DcEndpoint) {
    const st = this.state.get(dc.name)!;
    st.failedAt = undefined;
    st.retryClaimed = false;
    st.lastUsed = this.now();
  }

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

  /** Open a bound connection on the first DC that answers; throws DirectoryInvalidCredentials without failover. */
  private async connect(creds: DirectoryCredentials, skip: Set<string>): Promise<{ client: Client; dc: DcEndpoint }> {
    let lastError: unknown;
    const order = this.connectionOrder();
    // a DC claimed for its one retry but not reached in this request gives the claim back
    const releaseUnreached = (from: number) => {
      for (const later of order.slice(from)) this.state.get(later.name)!.retryClaimed = false;
    };
    for (const [i, dc] of order.entries()) {
      if (skip.has(dc.name)) continue;
      const client = this.newClient(dc);
      this.state.get(dc.name)!.connects++;
      try {
        await client.bind(creds.user, creds.password);
        this.markOk(dc);
        releaseUnreached(i + 1);
        return { client, dc };
      } catch (e) {
        await client.unbind().catch(() => undefined);
        if (e instanceof InvalidCredentialsError) {
          this.markOk(dc); // the DC answered; the credentials are wrong
          releaseUnreached(i + 1);
          throw new DirectoryInvalidCredentials();
        }
        if (!isConnectionError(e)) {
          releaseUnreached(i + 1);
          throw e instanceof ResultCodeError ? new DirectoryError(e.code, e.message) : e;
        }
        this.markFailed(dc, e);
        lastError = e;
      }
    }
    logger.error('no domain controller reachable', { error: (lastError as Error)?.message });
    throw new ApiError(503, 'directory_unavailable');
  }

  /**
   * Run `fn` on a bound connection. `kind: 'read'` may be re-run on a new connection (to another DC)
   * when the connection breaks or the DC stops answering; `kind: 'write'` never is: the outcome is
   * then reported unknown. Each try on a DC is bounded by the operation timeout.
   */
  async run<T>(
    creds: DirectoryCredentials,
    kind: 'read' | 'write',
    fn: (client: Client, dc: DcEndpoint) => Promise<T>,
    opts: { reuse?: boolean } = {},
  ): Promise<T> {
    const tried = new Set<string>();
    // technical-account reads may keep their bound connection for the next read; a credential
    // check and a change always get a connection of their own
    const reuse = kind === 'read' && opts.reuse === true;
    const key = reuse ? createHash('sha256').update(`${creds.user}\n${creds.password}`).digest('hex') : '';
    for (;;) {
      const kept = reuse ? this.keptConnection(key) : undefined;
      const { client, dc } = kept ?? (await this.connect(creds, tried));
      let keep = false;
      try {
        const result = await this.withinBudget(client, () => fn(client, dc));
        this.markOk(dc);
        keep = reuse;
        return result;
      } catch (e) {
        if (!isConnectionError(e)) {
          keep = reuse;
          // the directory answered and refused: the one directory error domain code sees
          throw e instanceof ResultCodeError ? new DirectoryError(e.code, e.message) : e;
        }
        // a kept connection closed under us (idle, server restart, thawed instance): open a new
        // one, the DC is not at fault; a kept connection left unanswered is the DC's fault
        if (kept && !isUnanswered(e)) continue;
        this.markFailed(dc, e);
        if (kind === 'write') {
          logger.error('directory change sent and no answer: outcome unknown', { dc: dc.name });
          throw new ApiError(502, 'directory_outcome_unknown', { dc: dc.name });
        }
        tried.add(dc.name);
        if (tried.size >= this.dcs.length) throw new ApiError(503, 'directory_unavailable');
      } finally {
        if (kept) {
          kept.inUse--;
          kept.lastUsed = Date.now();
          if (!keep) this.dropKept(key, kept);
        } else if (keep) this.keep(key, client, dc);
        else await client.unbind().catch(() => undefined);
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

  private readonly kept = new Map<string, KeptConnection>();
  private get keepIdleMs() {
    return this.opts.keepIdleMs ?? KEEP_IDLE_MS;
  }

  /**
   * A kept connection, if it is recent, still open (ldapts would otherwise reopen it unbound, i.e.
   * anonymous) and still on the DC a new connection would go to first.
   */
  private keptConnection(key: string) {
    const k = this.kept.get(key);
    if (!k) return undefined;
    if ((k.inUse === 0 && Date.now() - k.lastUsed > this.keepIdleMs) || !k.client.isConnected || this.firstInOrder()?.name !== k.dc.name) {
      this.dropKept(key, k);
      return undefined;
    }
    k.inUse++;
    return k;
  }

  private dropKept(key: string, k: KeptConnection) {
    if (this.kept.get(key) === k) this.kept.delete(key);
    void k.client.unbind().catch(() => undefined);
  }

  private keep(key: string, client: Client, dc: DcEndpoint) {
    if (this.kept.has(key)) {
      void client.unbind().catch(() => undefined); // a parallel read kept one already
      return;
    }
    const entry: KeptConnection = { client, dc, lastUsed: Date.now(), inUse: 0 };
    this.kept.set(key, entry);
    // close it once idle: a kept socket must not hold a process (or a test run) open; never under
    // a run still waiting on it (that run would see a closed connection, not a silent DC)
    const closeWhenIdle = () => {
      if (this.kept.get(key) !== entry) return;
      const idle = entry.inUse > 0 ? 0 : Date.now() - entry.lastUsed;
      if (idle < this.keepIdleMs) {
        setTimeout(closeWhenIdle, this.keepIdleMs - idle + 10).unref();
        return;
      }
      this.kept.delete(key);
      void client.unbind().catch(() => undefined);
    };
    setTimeout(closeWhenIdle, this.keepIdleMs + 10).unref();
  }

  /** The DC a new connection would try first, without claiming a retry. */
  private firstInOrder(): DcEndpoint | undefined {
    const now = this.now();
    return this.dcs.find((dc) => {
      const st = this.state.get(dc.name)!;
      return st.failedAt === undefined || (now - st.failedAt >= this.opts.cooldownMs && !st.retryClaimed);
    });
  }

  /** Check the credentials by a bind (sign-in, step-up by password, technical account tests). */
  async verifyCredentials(creds: DirectoryCredentials): Promise<boolean> {
    try {
      await this.run(creds, 'read', async () => undefined);
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

  /**
   * Health probe: every `probeIntervalMs`, bind on each DC untouched for that long (0 = off).
   * A failing DC goes to the end of the order; a recovered one gets its place back.
   */
  startHealthProbe(creds: () => Promise<DirectoryCredentials>): () => void {
    if (this.opts.probeIntervalMs <= 0) return () => undefined;
    this.probeTimer = setInterval(() => void this.probeIdle(creds).catch(() => undefined), this.opts.probeIntervalMs);
    this.probeTimer.unref();
    return () => clearInterval(this.probeTimer);
  }

  private probing = false;

  /** One probe round: every DC untouched for the interval at once (a frozen one costs the round its connect timeout). */
  async probeIdle(creds: () => Promise<DirectoryCredentials>): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      const c = await creds();
      const now = this.now();
      const idle = this.dcs.filter((dc) => now - this.state.get(dc.name)!.lastUsed >= this.opts.probeIntervalMs);
      await Promise.all(
        idle.map(async (dc) => {
          const client = this.newClient(dc);
          try {
            await client.bind(c.user, c.password);
            this.markOk(dc);
          } catch (e) {
            if (isConnectionError(e)) this.markFailed(dc, e);
          } finally {
            await client.unbind().catch(() => undefined);
          }
        }),
      );
    } finally {
      this.probing = false;
    }
  }

  stop() {
    if (this.probeTimer) clearInterval(this.probeTimer);
    for (const k of this.kept.values()) void k.client.unbind().catch(() => undefined);
    this.kept.clear();
  }
}

/** Pool options from the Directory configuration section (one place for the mapping). */
export function poolOptions(
  d: { ConnectTimeout: number; OperationTimeout: number; FailedDcCooldown: number; HealthProbeInterval: number; PageSize: number; SearchMaxResults: number },
  caPem: string,
  opts: { healthProbe?: boolean; cooldown?: boolean } = {},
): PoolOptions {
  return {
    caPem,
    connectTimeoutMs: d.ConnectTimeout * 1000,
    operationTimeoutMs: d.OperationTimeout * 1000,
    cooldownMs: opts.cooldown === false ? 0 : d.FailedDcCooldown * 1000,
    probeIntervalMs: opts.healthProbe ? d.HealthProbeInterval * 1000 : 0,
    pageSize: d.PageSize,
    searchMaxResults: d.SearchMaxResults,
  };
}
