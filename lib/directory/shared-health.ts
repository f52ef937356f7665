import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';
import { logger } from '../log';

// DC health shared by every instance of one application (issue 28): one instance's finding (a DC
// that left a message unanswered, refused or dropped the connection) is a record in the store
// with an expiry (the cooldown), read by every instance before it chooses a DC. So a frozen DC
// costs the fleet of instances one timeout, not one timeout each. A probe that binds again clears
// it; otherwise it expires with the cooldown and the DC gets its place back.

export interface DcFinding {
  /** the DC's URL (its identity; the name is a label) */
  url: string;
  name: string;
  /** what the DC did (lib/directory/probe's DcProblem): no_answer, unreachable, ... */
  reason: string;
  /** epoch ms */
  failedAt: number;
  /** epoch ms: the DC is tried last until then */
  until: number;
}

export interface SharedDcHealth {
  /** Live findings of these DCs, by URL. */
  read(dcs: Array<{ url: string }>): Promise<Map<string, DcFinding>>;
  markFailed(finding: DcFinding): Promise<void>;
  /** The DC answered a probe: its finding no longer holds. */
  clear(dc: { url: string }): Promise<void>;
}

/** The partition of one application's findings (each application's role may write only its own: serverless.password-service.yml). */
export const dcHealthPartition = (scope: 'console' | 'password-service') => `DCHEALTH#${scope}`;
const skOf = (url: string) => url.toLowerCase();

/**
 * Shared DC health as records of the store (one per DC, expiring with the cooldown), under the
 * application's own partition. Only single-item reads and puts (a clear is a put that has already
 * expired): what the password service's role may do on its own items.
 */
export function storeDcHealth(store: Store, scope: 'console' | 'password-service'): SharedDcHealth {
  const pk = dcHealthPartition(scope);
  return {
    async read(dcs) {
      const out = new Map<string, DcFinding>();
      const recs = await Promise.all(dcs.map((d) => getRecord<DcFinding>(store, pk, skOf(d.url))));
      const now = Date.now();
      recs.forEach((rec, i) => {
        const f = rec?.data;
        if (f && typeof f.until === 'number' && f.until > now) out.set(dcs[i].url, f);
      });
      return out;
    },
    async markFailed(finding) {
      await putRecord(store, pk, skOf(finding.url), finding, { ttl: Math.ceil(finding.until / 1000) });
    },
    async clear(dc) {
      const now = Date.now();
      await putRecord(store, pk, skOf(dc.url), { url: dc.url, cleared: now, until: now }, { ttl: Math.floor(now / 1000) });
    },
  };
}

// the shared health is read again when older than this (one read serves the requests meanwhile)
const MAX_AGE_MS = 250;

/**
 * An instance's view of the shared health (DirectoryPool): the findings as last read, read again
 * when older than a moment, and this instance's own findings written (at most one a second per
 * DC: no write storm when many reads fail at once). Without a store (`health` undefined) it
 * holds nothing and writes nothing.
 */
export class SharedHealthView {
  /** live findings, by DC name, as last read */
  private findings = new Map<string, DcFinding>();
  private readAt = -Infinity;
  private reading?: Promise<void>;
  /** the last finding this instance wrote per DC */
  private written = new Map<string, number>();

  constructor(
    private readonly health: SharedDcHealth | undefined,
    private readonly dcs: Array<{ name: string; url: string }>,
    private readonly cooldownMs: number,
  ) {}

  /** Read the shared health when the last read is older than a moment (one read at a time). */
  async refresh(): Promise<void> {
    const health = this.health;
    if (!health || Date.now() - this.readAt < MAX_AGE_MS) return;
    this.reading ??= health
      .read(this.dcs)
      .then((byUrl) => {
        const next = new Map<string, DcFinding>();
        for (const dc of this.dcs) {
          const f = byUrl.get(dc.url);
          if (f) next.set(dc.name, f);
        }
        this.findings = next;
        this.readAt = Date.now();
      })
      .catch((e: unknown) => {
        // the store is the shared health's only source: without it each instance finds for itself
        logger.warn('shared DC health not read', { error: (e as Error)?.name });
        this.readAt = Date.now();
      })
      .finally(() => {
        this.reading = undefined;
      });
    await this.reading;
  }

  /** The finding known for this DC (live or not). */
  finding(dc: { name: string }): DcFinding | undefined {
    return this.findings.get(dc.name);
  }

  /** Failed by another instance's finding (or ours), still within its expiry. */
  failed(dc: { name: string }): boolean {
    const f = this.findings.get(dc.name);
    return f !== undefined && f.until > Date.now();
  }

  /** Share a finding: a failure (until the cooldown ends) or a lost hedge (`slow`, for a moment). */
  share(dc: { name: string; url: string }, reason: string, forMs: number) {
    const health = this.health;
    if (!health || this.cooldownMs <= 0) return;
    const now = Date.now();
    const known = this.findings.get(dc.name);
    // never shorten a finding known to last longer (a failure outlives a lost hedge)
    if (known && known.until >= now + forMs && (reason === 'slow' || known.reason !== 'slow')) return;
    const written = this.written.get(dc.name);
    if (written !== undefined && now - written < Math.min(1000, this.cooldownMs / 2) && !(known?.reason === 'slow' && reason !== 'slow')) return;
    this.written.set(dc.name, now);
    const finding: DcFinding = { url: dc.url, name: dc.name, reason, failedAt: now, until: now + forMs };
    this.findings.set(dc.name, finding);
    health.markFailed(finding).catch((err: unknown) => logger.warn('shared DC health not written', { dc: dc.name, error: (err as Error)?.name }));
  }

  /** The DC answered: its finding no longer holds, here and for everyone. */
  clear(dc: { name: string; url: string }) {
    const health = this.health;
    if (!health || !this.findings.has(dc.name)) return;
    this.findings.delete(dc.name);
    this.written.delete(dc.name);
    health.clear(dc).catch((err: unknown) => logger.warn('shared DC health not cleared', { dc: dc.name, error: (err as Error)?.name }));
  }
}
