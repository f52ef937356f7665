import type { Store } from '../store';
import { deleteRecord, getRecords, putRecord } from '../store/records';
import type { DcProblem } from './probe';

// DC health shared by every instance of one application (issue 28): one instance's finding (a DC
// that left a message unanswered, refused or dropped the connection) is a record in the store
// with an expiry (the cooldown), read by every instance before it chooses a DC. So a frozen DC
// costs the fleet of instances one timeout, not one timeout each. A probe that binds again clears
// it; otherwise it expires with the cooldown and the DC gets its place back.

export interface DcFinding {
  /** the DC's URL (its identity; the name is a label) */
  url: string;
  name: string;
  reason: DcProblem;
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

const PK = 'DCHEALTH';
const skOf = (url: string) => url.toLowerCase();

/** Shared DC health as records of the store (one per DC, expiring with the cooldown). */
export function storeDcHealth(store: Store): SharedDcHealth {
  return {
    async read(dcs) {
      const out = new Map<string, DcFinding>();
      if (!dcs.length) return out;
      const recs = await getRecords(
        store,
        dcs.map((d) => ({ pk: PK, sk: skOf(d.url) })),
      );
      const now = Date.now();
      recs.forEach((rec, i) => {
        const f = rec?.data as DcFinding | undefined;
        if (f && typeof f.until === 'number' && f.until > now) out.set(dcs[i].url, f);
      });
      return out;
    },
    async markFailed(finding) {
      await putRecord(store, PK, skOf(finding.url), finding, { ttl: Math.ceil(finding.until / 1000) });
    },
    async clear(dc) {
      await deleteRecord(store, PK, skOf(dc.url));
    },
  };
}
