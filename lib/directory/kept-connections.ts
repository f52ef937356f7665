import type { Client } from 'ldapts';
import type { DcEndpoint } from './endpoints';

/** A bound read connection kept for reuse: one per technical account and DC. */
export interface KeptConnection {
  client: Client;
  dc: DcEndpoint;
  lastUsed: number;
  /** runs using it now: never closed as idle under them */
  inUse: number;
  release: () => void;
}

/**
 * The pool's kept read connections (DirectoryPool): a technical account's bound connection to a DC,
 * reused by its next reads, closed once idle for `idleMs` (a kept socket must not hold a process,
 * or a test run, open). Never used for a credential check.
 */
export class KeptConnections {
  private readonly kept = new Map<string, KeptConnection>();

  constructor(
    private readonly idleMs: number,
    private readonly close: (client: Client, release: () => void) => void,
  ) {}

  private static id = (key: string, dc: DcEndpoint) => `${key}\n${dc.name}`;

  /**
   * The kept connection to this DC, if it is recent and still open (ldapts would otherwise reopen
   * it unbound, i.e. anonymous), counted as in use.
   */
  take(key: string, dc: DcEndpoint): KeptConnection | undefined {
    const k = this.kept.get(KeptConnections.id(key, dc));
    if (!k) return undefined;
    if ((k.inUse === 0 && Date.now() - k.lastUsed > this.idleMs) || !k.client.isConnected) {
      this.drop(key, k);
      return undefined;
    }
    k.inUse++;
    return k;
  }

  /** A run is done with it: kept for the next, or dropped (closed) when it failed. */
  give(key: string, k: KeptConnection, keep: boolean) {
    k.inUse--;
    k.lastUsed = Date.now();
    if (!keep) this.drop(key, k);
  }

  private drop(key: string, k: KeptConnection) {
    const id = KeptConnections.id(key, k.dc);
    if (this.kept.get(id) === k) this.kept.delete(id);
    this.close(k.client, k.release);
  }

  /** Keep a new connection (closed at once when a parallel read kept one already). */
  keep(key: string, client: Client, dc: DcEndpoint, release: () => void) {
    const id = KeptConnections.id(key, dc);
    if (this.kept.has(id)) {
      this.close(client, release);
      return;
    }
    const entry: KeptConnection = { client, dc, lastUsed: Date.now(), inUse: 0, release };
    this.kept.set(id, entry);
    // close it once idle, never under a run still waiting on it (that run would see a closed
    // connection, not a silent DC)
    const closeWhenIdle = () => {
      if (this.kept.get(id) !== entry) return;
      const idle = entry.inUse > 0 ? 0 : Date.now() - entry.lastUsed;
      if (idle < this.idleMs) {
        setTimeout(closeWhenIdle, this.idleMs - idle + 10).unref();
        return;
      }
      this.kept.delete(id);
      this.close(client, release);
    };
    setTimeout(closeWhenIdle, this.idleMs + 10).unref();
  }

  closeAll() {
    for (const k of this.kept.values()) this.close(k.client, k.release);
    this.kept.clear();
  }
}
