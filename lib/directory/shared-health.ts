import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';

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
