import { isConditionFailed, type Store } from '../store';
import { GENESIS_HASH } from './canonical';
import { entriesOfLookup, groupLookups, type LookupEntry } from './lookup';
import { pad, storedBody, type AuditRow, type Head, type Point, type Signed, type StoredRow } from './rows';
import { AuditSigner } from './signing';
import type { AuditChainOptions } from './options';

const PAGE = 500;
/** rows per appendAll: each row brings its lookup items, a transaction holds 100 */
export const MAX_ROWS_PER_APPEND = 10;
/** verify reads the chain in segments of this many sequences, several at once (see `chainSegments`) */
const VERIFY_SEGMENT_ROWS = 1000;
const VERIFY_READ_AHEAD = 4;

/** One chain's items in the store: its signed state items, its rows and their lookup items. */
export class ChainReader {
  protected readonly pk: string;
  protected readonly metaPk: string;
  protected readonly signer: AuditSigner;
  protected readonly now: () => number;

  constructor(
    protected readonly store: Store,
    readonly chain: string = 'console',
    protected readonly opts: AuditChainOptions = {},
  ) {
    this.pk = `AUDIT#${chain}`;
    this.metaPk = `AUDITMETA#${chain}`;
    this.signer = new AuditSigner(opts.key, chain);
    this.now = opts.now ?? Date.now;
  }

  // ---- state items ----

  protected async getMeta(sk: string): Promise<Record<string, any> | undefined> {
    const { Item } = await this.store.get({ Key: { pk: this.metaPk, sk }, ConsistentRead: true });
    return Item;
  }

  protected async head(): Promise<Signed<Head>> {
    const it = await this.getMeta('HEAD');
    if (!it) return undefined;
    const value = { seq: it.seq, hash: it.hash, at: it.at ?? '' };
    return { value, valid: await this.signer.check('head', value, it.mac) };
  }

  protected async anchor(): Promise<{ value: Point; valid: boolean }> {
    const it = await this.getMeta('ANCHOR');
    if (!it) return { value: { seq: 0, hash: GENESIS_HASH }, valid: true };
    const value = { seq: it.seq, hash: it.hash };
    return { value, valid: await this.signer.check('anchor', value, it.mac) };
  }

  protected async readState<T>(sk: string, kind: string): Promise<{ value: T; valid: boolean; version: number } | undefined> {
    const it = await this.getMeta(sk);
    if (!it) return undefined;
    return { value: it.state as T, valid: await this.signer.check(kind, it.state, it.mac), version: it.version ?? 0 };
  }

  /** Write a signed state item unless another writer moved it since `version` (that one wins). */
  protected async writeState(sk: string, kind: string, state: unknown, version: number | undefined): Promise<boolean> {
    try {
      await this.store.put({
          TableName: this.store.tableName,
          Item: { pk: this.metaPk, sk, _et: 'AuditMeta', state, mac: await this.signer.sign(kind, state), version: (version ?? 0) + 1 },
          ConditionExpression: version === undefined ? 'attribute_not_exists(pk)' : 'version = :v',
          ExpressionAttributeValues: version === undefined ? undefined : { ':v': version },
        });
      return true;
    } catch (e) {
      if (isConditionFailed(e)) return false;
      throw e;
    }
  }

  /** The first sequence written with lookup items (older rows are found by the bounded scan). */
  async lookupsFrom(): Promise<number | undefined> {
    return (await this.getMeta('LOOKUPS'))?.fromSeq;
  }

  // ---- reading ----

  protected async *stored(fromSeq: number, toSeq: number, opts: { reverse?: boolean; pageSize?: number } = {}): AsyncGenerator<StoredRow> {
    if (fromSeq > toSeq) return;
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.store.query({
          TableName: this.store.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
          ExpressionAttributeValues: { ':pk': this.pk, ':a': pad(Math.max(0, fromSeq)), ':b': pad(toSeq) },
          ScanIndexForward: !opts.reverse,
          ConsistentRead: true,
          Limit: opts.pageSize ?? PAGE,
          ExclusiveStartKey: start,
        });
      for (const it of res.Items ?? []) yield it as StoredRow;
      start = res.LastEvaluatedKey;
    } while (start);
  }

  /**
   * The stored items with keys from `fromSeq` through `toSeq`, in key order, for a walk: read as
   * segments of VERIFY_SEGMENT_ROWS sequences, VERIFY_READ_AHEAD of them in flight at once, so the
   * walk re-hashes one segment while the next ones are read. Each segment's range reaches up to
   * and including the next segment's first key (that key itself is left to the next segment), so
   * the segments together return every item the one range `fromSeq`..`toSeq` returns, foreign
   * keys between two sequence numbers included: the walk sees exactly what a single read shows.
   * `rangeEnd`: the end of the range the walk is on, when it reads only up to `toSeq` of it.
   * Yields whole segments: the walk loops over each without an await per row.
   */
  protected async *chainSegments(fromSeq: number, toSeq: number, rangeEnd = toSeq): AsyncGenerator<StoredRow[]> {
    if (fromSeq > toSeq) return;
    const readSegment = async (a: number, b: number): Promise<StoredRow[]> => {
      const last = b < rangeEnd ? pad(b + 1) : pad(b);
      const out: StoredRow[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const res = await this.store.query({
            TableName: this.store.tableName,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
            ExpressionAttributeValues: { ':pk': this.pk, ':a': pad(a), ':b': last },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          });
        for (const it of res.Items ?? []) if (b >= rangeEnd || it.sk !== last) out.push(it as StoredRow);
        start = res.LastEvaluatedKey;
      } while (start);
      return out;
    };
    const inFlight: Array<Promise<StoredRow[]>> = [];
    let next = fromSeq;
    const schedule = () => {
      while (inFlight.length < VERIFY_READ_AHEAD && next <= toSeq) {
        const b = Math.min(toSeq, next + VERIFY_SEGMENT_ROWS - 1);
        const p = readSegment(next, b);
        p.catch(() => undefined); // awaited in order below; a failure surfaces there
        inFlight.push(p);
        next = b + 1;
      }
    };
    schedule();
    while (inFlight.length) {
      const rows = await inFlight.shift()!;
      schedule();
      yield rows;
    }
  }

  protected toRow(it: StoredRow): AuditRow {
    return { ...storedBody(it), seq: it.seq, prevHash: it.prevHash, hash: it.hash };
  }

  /** Read rows in order (ascending) or newest first. */
  async *rows(opts: { reverse?: boolean; afterSeq?: number; throughSeq?: number; pageSize?: number } = {}): AsyncGenerator<AuditRow> {
    for await (const it of this.stored((opts.afterSeq ?? 0) + 1, opts.throughSeq ?? 999_999_999_999, { reverse: opts.reverse, pageSize: opts.pageSize })) yield this.toRow(it);
  }

  /** One row by sequence number, as stored. */
  async row(seq: number): Promise<AuditRow | undefined> {
    const it = await this.storedRow(seq);
    return it ? this.toRow(it) : undefined;
  }

  protected async storedRow(seq: number): Promise<StoredRow | undefined> {
    const { Item } = await this.store.get({ Key: { pk: this.pk, sk: pad(seq) }, ConsistentRead: true });
    return Item as StoredRow | undefined;
  }

  /** The chain's extent: sequences after `anchorSeq` through `headSeq` exist (unless tampered). */
  async extent(): Promise<{ anchorSeq: number; headSeq: number }> {
    const anchor = (await this.anchor()).value;
    return { anchorSeq: anchor.seq, headSeq: (await this.head())?.value.seq ?? anchor.seq };
  }

  /** The stored lookup items of rows appended together (see `groupLookups`). */
  protected lookupItems(rows: LookupEntry[]): Array<Record<string, unknown> & { pk: string; sk: string }> {
    return groupLookups(this.chain, rows).map(({ pk, first, also }) => ({ pk, sk: pad(first.seq), _et: 'AuditLookup', seq: first.seq, f: first.f, ...(also.length ? { also } : {}) }));
  }

  /**
   * The rows one lookup partition points to between two sequences (inclusive), newest first, from
   * one page of its items. An item is keyed by the first row it points to, and rows appended
   * together are fewer than MAX_ROWS_PER_APPEND apart: the read starts that much lower and keeps
   * only the rows in range. An item's first row is in range when its key is, so an empty answer
   * means the partition has nothing more there.
   */
  async lookupPage(pk: string, fromSeq: number, toSeq: number, limit: number): Promise<LookupEntry[]> {
    if (fromSeq > toSeq) return [];
    const res = await this.store.query({
        TableName: this.store.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
        ExpressionAttributeValues: { ':pk': pk, ':a': pad(Math.max(0, fromSeq - (MAX_ROWS_PER_APPEND - 1))), ':b': pad(toSeq) },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
      });
    const entries = (res.Items ?? []).flatMap((it) => entriesOfLookup(it as { seq: number; f: LookupEntry['f']; also?: LookupEntry[] }));
    return entries.filter((e) => e.seq >= fromSeq && e.seq <= toSeq).sort((a, b) => b.seq - a.seq);
  }
}
