import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from './canonical';

// The chain's state items (head, anchor, checkpoint, background walk) carry an HMAC under a key
// derived from the master key, which the console holds and the database does not: whoever can
// only write the table cannot move a checkpoint, re-anchor the chain or re-sign a rewritten head.

export type KeySource = () => Promise<Buffer>;

export class AuditSigner {
  private key?: Promise<Buffer>;

  constructor(
    private readonly source: KeySource | undefined,
    private readonly chain: string,
  ) {}

  /** Without a key source (the fleet plane's chain today) state items are neither signed nor checked. */
  get enabled(): boolean {
    return !!this.source;
  }

  private derived(): Promise<Buffer> {
    if (!this.key) {
      this.key = this.source!().then((master) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'hdc audit chain state v1', 32)));
      this.key.catch(() => (this.key = undefined)); // a failed load is retried on the next use
    }
    return this.key;
  }

  /** The MAC of a state item: bound to the chain and the item's kind, over its canonical data. */
  async sign(kind: string, data: unknown): Promise<string | undefined> {
    if (!this.source) return undefined;
    return createHmac('sha256', await this.derived()).update(`${this.chain}\n${kind}\n${canonicalJson(data)}`).digest('base64url');
  }

  /** True when the MAC is the one this key gives (always true without a key source). */
  async check(kind: string, data: unknown, mac: unknown): Promise<boolean> {
    if (!this.source) return true;
    if (typeof mac !== 'string') return false;
    const want = Buffer.from((await this.sign(kind, data))!);
    const got = Buffer.from(mac);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}
