/**
 * The proxies of one buildProxies by id, in the order they were first listed (issue 28, bench/nodes).
 * A Map keyed by the CLI's ids hashed every id string of the desktops list in full (each a fresh
 * string of JSON.parse, its hash not yet computed): about 2 of the desktops loop's 4 ms. Here an id's
 * slot comes from its length, its first 8 characters and its last one (a host UUID's first 8 are
 * random), probed linearly and confirmed by comparing the whole id, so the answer is the Map's;
 * ids that find no free slot within a few probes (ids alike where the slot is taken, as hostile
 * input could make them) go to a Map instead, so no input costs more than a few probes and a Map.
 * Generic over the record (anything with an id), so this file imports nothing from nodes.ts.
 */
export class ProxyIndex<Proxy extends { readonly id: string }> {
  /** every proxy, in the order added */
  readonly list: Proxy[] = [];
  private slots: (Proxy | undefined)[] = [];
  private mask = 0;
  private overflow: Map<string, Proxy> | undefined;

  constructor(expected = 0) {
    this.resize(expected);
  }

  get(id: string): Proxy | undefined {
    const { slots, mask } = this;
    let i = slotOf(id, mask);
    for (let k = 0; k < PROBES; k++) {
      const p = slots[i];
      if (p === undefined) return undefined; // slots are never emptied: the id was never added
      if (p.id === id) return p;
      i = (i + 1) & mask;
    }
    return this.overflow?.get(id);
  }

  /** Add a proxy whose id get does not find. */
  add(p: Proxy): void {
    this.list.push(p);
    if (this.list.length * 2 > this.mask + 1) this.resize(this.list.length);
    else this.place(p);
  }

  private place(p: Proxy) {
    const { slots, mask } = this;
    let i = slotOf(p.id, mask);
    for (let k = 0; k < PROBES; k++) {
      if (slots[i] === undefined) {
        slots[i] = p;
        return;
      }
      i = (i + 1) & mask;
    }
    (this.overflow ??= new Map()).set(p.id, p);
  }

  /** Slots for at least twice `count` ids (at most half full), every proxy placed again. */
  private resize(count: number) {
    let size = 16;
    while (size < count * 2) size *= 2;
    this.slots = new Array<Proxy | undefined>(size).fill(undefined);
    this.mask = size - 1;
    this.overflow = undefined;
    for (const p of this.list) this.place(p);
  }
}

/** Probes before an id goes to the index's Map. */
const PROBES = 8;

/** An id's first slot: its length, first 8 characters and last one, mixed. */
function slotOf(id: string, mask: number): number {
  const n = id.length;
  let x = n;
  const m = n < 8 ? n : 8;
  for (let i = 0; i < m; i++) x = Math.imul(x ^ id.charCodeAt(i), 0x9e3779b1);
  if (n > 8) x = Math.imul(x ^ id.charCodeAt(n - 1), 0x85ebca6b);
  return (x ^ (x >>> 15)) & mask;
}
