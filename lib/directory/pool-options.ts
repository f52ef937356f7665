import type { SharedDcHealth } from './shared-health';

// The directory pool's options (DirectoryPool), and their one mapping from the Directory
// configuration section.

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
  /** hedged reads: the delay is the recent p95 of reads, at least this (default 100 ms)... */
  hedgeFloorMs?: number;
  /** ...and at most this (default 1 s); a new pool (no history yet) waits this long */
  hedgeCapMs?: number;
  /** open connections of this pool at most (kept and own; default 16); a new one waits for a slot */
  maxConnections?: number;
  /** how long a new connection may wait for a slot before the request is refused 503 `overloaded` (default 1 s) */
  connectionWaitMs?: number;
  /** DC health shared with the other instances (the store): read before a DC is chosen, written on a finding */
  sharedHealth?: SharedDcHealth;
  now?: () => number;
}

/** Pool options from the Directory configuration section (one place for the mapping). */
export function poolOptions(
  d: {
    ConnectTimeout: number;
    OperationTimeout: number;
    FailedDcCooldown: number;
    HealthProbeInterval: number;
    PageSize: number;
    SearchMaxResults: number;
    HedgeDelayFloor?: number;
    HedgeDelayCap?: number;
    MaxConnections?: number;
  },
  caPem: string,
  opts: { healthProbe?: boolean; cooldown?: boolean; sharedHealth?: SharedDcHealth; startBudget?: number } = {},
): PoolOptions {
  return {
    caPem,
    connectTimeoutMs: d.ConnectTimeout * 1000,
    operationTimeoutMs: d.OperationTimeout * 1000,
    cooldownMs: opts.cooldown === false ? 0 : d.FailedDcCooldown * 1000,
    probeIntervalMs: opts.healthProbe ? d.HealthProbeInterval * 1000 : 0,
    pageSize: d.PageSize,
    searchMaxResults: d.SearchMaxResults,
    ...(d.HedgeDelayFloor !== undefined ? { hedgeFloorMs: d.HedgeDelayFloor * 1000 } : {}),
    ...(d.HedgeDelayCap !== undefined ? { hedgeCapMs: d.HedgeDelayCap * 1000 } : {}),
    ...(d.MaxConnections !== undefined ? { maxConnections: d.MaxConnections } : {}),
    // a connection slot is waited for within the start budget, and never past the connect timeout
    ...(opts.startBudget !== undefined ? { connectionWaitMs: Math.min(opts.startBudget, d.ConnectTimeout) * 1000 } : {}),
    ...(opts.sharedHealth && opts.cooldown !== false ? { sharedHealth: opts.sharedHealth } : {}),
  };
}
