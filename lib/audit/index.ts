import { randomUUID } from 'node:crypto';
import { auditLogger, logger } from '../log';
import { cancellationReasons, isConditionFailed, type CancellationReason, type Store, type TransactItem } from '../store';
import { canonicalJson, chainHash, chainHashOfText, GENESIS_HASH } from './canonical';
import { entriesOfLookup, groupLookups, lookupFacts, type LookupEntry } from './lookup';
import { AuditSigner, type KeySource } from './signing';

// The tamper-evident audit log: one hash chain per application ('console', 'fleet').
// Row N stores hash(prevHash of row N-1 ‖ canonical body of row N). Appends from concurrent
// instances race on a transaction: put row N (must not exist) + move the head from N-1 to N,
// so the chain never forks, and deleting the newest rows is detected against the head.
//
// With a key (the console: derived from its master key) the chain's state items are signed: the
// head (moved by every append), the anchor (moved by a purge), the checkpoint of the last
// verified row and the background walk's state. A consistent rewrite of rows then ends at a head
// hash nobody can sign, so it shows at the next check; an edit of an older row that leaves its
// own hash stale shows when a walk re-hashes that row: the rolling sample of every check
// (`sampleRows` rows per call) and the background full walk. See docs/decisions.md.

export type AuditOutcome = 'success' | 'failure' | 'denied' | 'error' | 'unknown' | string;

export interface AuditActor {
  id?: string;
  name?: string;
  provider?: string;
  ip?: string;
}
export interface AuditInput {
  event: string;
  outcome: AuditOutcome;
  actor?: AuditActor;
  target?: { id?: string; name?: string; dn?: string; kind?: string };
  reason?: string;
  ticket?: string;
  correlationId?: string;
  /** Fleet plane: the client the row concerns; inside the hash when present. */
  client?: string;
  details?: Record<string, unknown>;
}
export interface AuditRow extends AuditInput {
  seq: number;
  at: string;
  id: string;
  prevHash: string;
  hash: string;
}

const SENSITIVE_KEY = /pass(word)?|secret|token|otp|totp|key$/i;

/** Defence in depth: a details key that names a secret never reaches the chain or stdout. */
export function scrubDetails(details?: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!details) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    out[k] = SENSITIVE_KEY.test(k) ? '[redacted]' : v && typeof v === 'object' && !Array.isArray(v) ? scrubDetails(v as Record<string, unknown>) : v;
  }
  return out;
}

export const pad = (n: number) => String(n).padStart(12, '0');

export type VerifyProblem =
  | 'hash_mismatch' // a row's content no longer gives its hash
  | 'link_broken' // a row does not name its predecessor's hash
  | 'missing_row' // a sequence number is missing (deleted or moved rows)
  | 'head_mismatch' // the newest rows were deleted or rewritten
  | 'checkpoint_mismatch' // the chain no longer holds a hash a signed checkpoint recorded (rewritten rows)
  | 'signature_invalid'; // a state item (head, anchor, checkpoint, walk) lacks its MAC or carries a forged one

export interface VerifyResult {
  ok: boolean;
  checked: number;
  firstBadSeq?: number;
  problem?: VerifyProblem;
}

/** What one incremental check did (the fleet status poll, GET /api/audit/verify). */
export interface IncrementalResult extends VerifyResult {
  /** the newest row verified so far (the signed checkpoint) */
  verifiedThroughSeq: number;
  headSeq: number;
  /** rows newer than the checkpoint left for the next check (more than `maxNewRows` were new) */
  pending: number;
  /** the rolling sample: where its lap stands, and the last lap that re-hashed every row up to the checkpoint */
  sample?: { atSeq: number; lapStartedAt: string; lastLapStartedAt?: string; lastLapCompletedAt?: string };
}

/** The result of the last completed full walk (the background job, `verify-audit`). */
export interface FullWalkResult extends VerifyResult {
  startedAt: string;
  completedAt: string;
  throughSeq?: number;
}
export interface FullWalkProgress {
  startedAt: string;
  seq: number;
  untilSeq: number;
  checked: number;
}
export interface FullWalkState {
  last?: FullWalkResult;
  running?: FullWalkProgress;
}

interface Point {
  seq: number;
  hash: string;
}
interface Head extends Point {
  at: string;
}
interface CheckpointState extends Point {
  verifiedAt: string;
  sampleSeq: number;
  sampleHash: string;
  lapStartedAt: string;
  lastLapStartedAt?: string;
  lastLapCompletedAt?: string;
}
interface WalkState {
  current?: FullWalkProgress & { hash: string; untilHash: string; expect?: Point };
  last?: FullWalkResult;
}
interface StoredRow {
  pk: string;
  sk: string;
  seq: number;
  body: AuditInput & { at: string; id: string; seq: number };
  prevHash: string;
  hash: string;
  /** the first of the rows appended with this one (they share lookup items); absent: alone */
  lk?: number;
}

type WalkOutcome = { ok: true; last: Point; checked: number; complete: boolean } | { ok: false; checked: number; firstBadSeq: number; problem: VerifyProblem };

type Signed<T> = { value: T; valid: boolean } | undefined;

export interface AuditChainOptions {
  now?: () => number;
  /** the master key: signs and checks the chain's state items */
  key?: KeySource;
  /** write the viewer's lookup items beside each row (the console) */
  lookups?: boolean;
  /** rows of the rolling sample re-hashed by each incremental check */
  sampleRows?: number;
  /** new rows verified by one incremental check at most (the rest waits for the next) */
  maxNewRows?: number;
}

export const SAMPLE_ROWS_PER_CHECK = 2000;
export const MAX_NEW_ROWS_PER_CHECK = 10_000;
/**
 * Appends to one chain of one store from this process, one at a time: they would otherwise race
 * each other for the head and back off (measured: 20 writers of one process fell to 40-80 rows/s,
 * under the sequential rate). Writers of other processes still meet the head's condition.
 */
const appendQueues = new WeakMap<Store, Map<string, Promise<unknown>>>();
const knownHeads = new WeakMap<Store, Map<string, { head?: Head; lostAt: number }>>();
function inProcessTurn<T>(store: Store, chain: string, fn: () => Promise<T>): Promise<T> {
  let queues = appendQueues.get(store);
  if (!queues) appendQueues.set(store, (queues = new Map()));
  const before = queues.get(chain) ?? Promise.resolve();
  const mine = before.then(fn, fn);
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  queues.set(chain, settled);
  void settled.then(() => {
    if (queues.get(chain) === settled) queues.delete(chain);
  });
  return mine;
}

const PAGE = 500;
/** rows per appendAll: each row brings its lookup items, a transaction holds 100 */
export const MAX_ROWS_PER_APPEND = 10;
/** verify reads the chain in segments of this many sequences, several at once (see `chainRows`) */
const VERIFY_SEGMENT_ROWS = 1000;
const VERIFY_READ_AHEAD = 4;
/** after a lost race, `refreshHeadIfContended` reads the head for this long */
export const CONTENDED_MS = 60_000;

/** The head a cancelled append returned (its head item's condition failed: ReturnValuesOnConditionCheckFailure), if any. */
function headOfCancellation(reason: { Item?: Record<string, any> } | undefined): Head | undefined {
  const it = reason?.Item;
  if (!it) return undefined;
  const v = (a: any) => (a && typeof a === 'object' ? (a.N !== undefined ? Number(a.N) : a.S) : a); // marshalled or not
  const seq = v(it.seq);
  const hash = v(it.hash);
  const at = v(it.at);
  return typeof seq === 'number' && Number.isSafeInteger(seq) && typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash) ? { seq, hash, at: typeof at === 'string' ? at : '' } : undefined;
}

/**
 * An append as the items of a transaction, at the head as last known: `appendAll` writes them
 * alone; the password service writes them with its admission (nonce, pin, rate window: one
 * write). After the write, `written()`; after a cancellation, `lost(reasons of these items)`
 * learns the head that won, and a new draft is made.
 */
export interface AuditDraft {
  items: TransactItem[];
  rows: AuditRow[];
  written(): void;
  lost(reasons: CancellationReason[]): void;
}

/** Rows ready to append (see `AuditChain.prepare`). */
export interface PreparedRows {
  bases: Array<AuditInput & { id: string }>;
}

export class AuditChain {
  private readonly pk: string;
  private readonly metaPk: string;
  private readonly signer: AuditSigner;
  private readonly now: () => number;
  /** what this process last knew of the chain's head (shared by its instances of the chain over one store): a cache that may be lost */
  private get known(): { head?: Head; lostAt: number } {
    let byChain = knownHeads.get(this.store);
    if (!byChain) knownHeads.set(this.store, (byChain = new Map()));
    let k = byChain.get(this.chain);
    if (!k) byChain.set(this.chain, (k = { lostAt: -Infinity }));
    return k;
  }
  private get lastKnown(): Head | undefined {
    return this.known.head;
  }
  private set lastKnown(h: Head | undefined) {
    this.known.head = h;
  }
  /** when an append last found another writer's head */
  private get lostAt(): number {
    return this.known.lostAt;
  }
  private set lostAt(t: number) {
    this.known.lostAt = t;
  }
  private lookupMarked = false;

  constructor(
    private readonly store: Store,
    readonly chain: string = 'console',
    private readonly opts: AuditChainOptions = {},
  ) {
    this.pk = `AUDIT#${chain}`;
    this.metaPk = `AUDITMETA#${chain}`;
    this.signer = new AuditSigner(opts.key, chain);
    this.now = opts.now ?? Date.now;
  }

  // ---- state items ----

  private async getMeta(sk: string): Promise<Record<string, any> | undefined> {
    const { Item } = await this.store.get({ Key: { pk: this.metaPk, sk }, ConsistentRead: true });
    return Item;
  }

  private async head(): Promise<Signed<Head>> {
    const it = await this.getMeta('HEAD');
    if (!it) return undefined;
    const value = { seq: it.seq, hash: it.hash, at: it.at ?? '' };
    return { value, valid: await this.signer.check('head', value, it.mac) };
  }

  private async anchor(): Promise<{ value: Point; valid: boolean }> {
    const it = await this.getMeta('ANCHOR');
    if (!it) return { value: { seq: 0, hash: GENESIS_HASH }, valid: true };
    const value = { seq: it.seq, hash: it.hash };
    return { value, valid: await this.signer.check('anchor', value, it.mac) };
  }

  private async readState<T>(sk: string, kind: string): Promise<{ value: T; valid: boolean; version: number } | undefined> {
    const it = await this.getMeta(sk);
    if (!it) return undefined;
    return { value: it.state as T, valid: await this.signer.check(kind, it.state, it.mac), version: it.version ?? 0 };
  }

  /** Write a signed state item unless another writer moved it since `version` (that one wins). */
  private async writeState(sk: string, kind: string, state: unknown, version: number | undefined): Promise<boolean> {
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

  private async markLookups(): Promise<void> {
    if (this.lookupMarked) return;
    const h = (await this.head())?.value ?? (await this.anchor()).value;
    try {
      await this.store.put({ TableName: this.store.tableName, Item: { pk: this.metaPk, sk: 'LOOKUPS', _et: 'AuditMeta', fromSeq: h.seq + 1 }, ConditionExpression: 'attribute_not_exists(pk)' });
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
    }
    this.lookupMarked = true;
  }

  // ---- writing ----

  /** Append one row; retries on a lost race until it is written. Also writes it to stdout (category Audit). */
  async append(input: AuditInput): Promise<AuditRow> {
    return (await this.appendAll([input]))[0];
  }

  /**
   * Append rows that belong together (a decision and its outcome) in one conditional transaction:
   * consecutive sequences, one move of the head, all or nothing. Retries on a lost race until written.
   */
  async appendAll(inputs: AuditInput[]): Promise<AuditRow[]> {
    return inProcessTurn(this.store, this.chain, () => this.appendInTurn(inputs));
  }

  private async appendInTurn(inputs: AuditInput[]): Promise<AuditRow[]> {
    const prepared = this.prepare(inputs);
    for (let attempt = 0; attempt < 500; attempt++) {
      const draft = await this.draft(prepared);
      try {
        await this.store.transactWrite(draft.items);
        draft.written();
        return draft.rows;
      } catch (e) {
        if (!isConditionFailed(e) && (e as Error).name !== 'TransactionConflictException') throw e;
        draft.lost(cancellationReasons(e));
        // a head only known stale (this instance's hint) is tried again at once; a race lost to
        // another writer backs off with full jitter, growing exponentially: many writers (one per
        // instance) spread out instead of colliding again on the next slot
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * Math.min(1000, 10 * 2 ** Math.min(attempt, 7))));
      }
    }
    throw new Error('audit append did not win a slot after 500 attempts');
  }

  /** Rows to append (checked, details scrubbed, ids given): the same rows whatever attempt writes them. */
  prepare(inputs: AuditInput[]): PreparedRows {
    if (inputs.length === 0 || inputs.length > MAX_ROWS_PER_APPEND) throw new Error(`audit: 1 to ${MAX_ROWS_PER_APPEND} rows per append`);
    return { bases: inputs.map((input) => ({ ...input, details: scrubDetails(input.details), id: randomUUID() })) };
  }

  /**
   * Read the head now, while waiting on something else, so the next append starts from it: when
   * this process knows no head, or lost a race to another writer in the last CONTENDED_MS. A
   * process whose appends keep winning is likely the chain's only writer now (one container, or a
   * quiet hour), and a head it knows wrongly costs one cancelled transaction that returns the
   * head that won; the conditions on the head decide either way.
   */
  async refreshHeadIfContended(): Promise<void> {
    if (this.lastKnown && this.now() - this.lostAt >= CONTENDED_MS) return;
    const h = (await this.head())?.value;
    if (h) this.lastKnown = h;
  }

  /** The transaction items of an append at the head as last known (read when not known). */
  async draft(prepared: PreparedRows): Promise<AuditDraft> {
    if (this.opts.lookups) await this.markLookups();
    const prev: Head = this.lastKnown ?? (await this.head())?.value ?? { ...(await this.anchor()).value, at: '' };
    // never earlier than the row before: the chain is in time order, so a time range is a range of sequences
    const nowIso = new Date(this.now()).toISOString();
    const at = nowIso < prev.at ? prev.at : nowIso;
    const rows: AuditRow[] = [];
    const items: TransactItem[] = [];
    let before = prev;
    // rows appended together share their lookup items; each row names the first of them (`lk`) so
    // the purge finds them again
    const lk = this.opts.lookups && prepared.bases.length > 1 ? { lk: prev.seq + 1 } : {};
    for (const base of prepared.bases) {
      const seq = before.seq + 1;
      const fullBody = { ...base, at, seq };
      const text = canonicalJson(fullBody);
      const hash = chainHashOfText(before.hash, text);
      rows.push({ ...fullBody, prevHash: before.hash, hash });
      items.push({
        Put: {
          TableName: this.store.tableName,
          // stored exactly as hashed, keys in canonical order (which lets verify re-serialize it fast)
          Item: { pk: this.pk, sk: pad(seq), _et: 'AuditRow', seq, body: JSON.parse(text), prevHash: before.hash, hash, ...lk },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
      before = { seq, hash, at };
    }
    if (this.opts.lookups) for (const Item of this.lookupItems(rows.map((r) => ({ seq: r.seq, f: lookupFacts(r) })))) items.push({ Put: { TableName: this.store.tableName, Item } });
    const head: Head = before;
    // the head goes second: a cancelled transaction's second reason is the head that won
    items.splice(1, 0, {
      Put: {
        TableName: this.store.tableName,
        Item: { pk: this.metaPk, sk: 'HEAD', _et: 'AuditMeta', ...head, mac: await this.signer.sign('head', head) },
        ConditionExpression: 'attribute_not_exists(pk) OR seq = :prev',
        ExpressionAttributeValues: { ':prev': prev.seq },
        // a lost race answers the head that won: the next attempt needs no read of it
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
    return {
      items,
      rows,
      written: () => {
        this.lastKnown = head;
        for (const row of rows) auditLogger.info(row.event, { audit: row });
      },
      lost: (reasons) => {
        this.lastKnown = headOfCancellation(reasons[1]);
        this.lostAt = this.now();
      },
    };
  }

  // ---- reading ----

  private async *stored(fromSeq: number, toSeq: number, opts: { reverse?: boolean; pageSize?: number } = {}): AsyncGenerator<StoredRow> {
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
   */
  private async *chainRows(fromSeq: number, toSeq: number, rangeEnd = toSeq): AsyncGenerator<StoredRow> {
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
      yield* rows;
    }
  }

  private toRow(it: StoredRow): AuditRow {
    return { ...it.body, seq: it.seq, prevHash: it.prevHash, hash: it.hash };
  }

  /** Read rows in order (ascending) or newest first. */
  async *rows(opts: { reverse?: boolean; afterSeq?: number; throughSeq?: number; pageSize?: number } = {}): AsyncGenerator<AuditRow> {
    for await (const it of this.stored((opts.afterSeq ?? 0) + 1, opts.throughSeq ?? 999_999_999_999, { reverse: opts.reverse, pageSize: opts.pageSize })) yield this.toRow(it);
  }

  /** One row by sequence number, as stored. */
  async row(seq: number): Promise<AuditRow | undefined> {
    const { Item } = await this.store.get({ Key: { pk: this.pk, sk: pad(seq) }, ConsistentRead: true });
    return Item ? this.toRow(Item as StoredRow) : undefined;
  }

  /** The chain's extent: sequences after `anchorSeq` through `headSeq` exist (unless tampered). */
  async extent(): Promise<{ anchorSeq: number; headSeq: number }> {
    const anchor = (await this.anchor()).value;
    return { anchorSeq: anchor.seq, headSeq: (await this.head())?.value.seq ?? anchor.seq };
  }

  /** The stored lookup items of rows appended together (see `groupLookups`). */
  private lookupItems(rows: LookupEntry[]): Array<Record<string, unknown> & { pk: string; sk: string }> {
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

  // ---- verification ----

  /**
   * Walk rows after `start` through `untilSeq`, re-hashing each from its stored content and its
   * predecessor's hash. `expect`: a signed (sequence, hash) the walk must meet when it passes it.
   */
  private async walk(start: Point, untilSeq: number, limits: { maxRows?: number; deadline?: number; expect?: Point } = {}): Promise<WalkOutcome> {
    let prev = start.hash;
    let expected = start.seq + 1;
    let checked = 0;
    if (untilSeq <= start.seq) return { ok: true, last: start, checked, complete: true };
    // a walk bounded by rows reads no further than it may walk
    const readUntil = limits.maxRows !== undefined ? Math.min(untilSeq, start.seq + limits.maxRows) : untilSeq;
    for await (const it of this.chainRows(start.seq + 1, readUntil, untilSeq)) {
      if (it.sk !== pad(expected) || it.seq !== expected || it.body?.seq !== expected) {
        return { ok: false, checked, firstBadSeq: expected, problem: it.seq > expected && it.sk > pad(expected) ? 'missing_row' : 'link_broken' };
      }
      if (it.prevHash !== prev) return { ok: false, checked, firstBadSeq: expected, problem: 'link_broken' };
      const hash = chainHash(prev, it.body);
      if (hash !== it.hash) return { ok: false, checked, firstBadSeq: expected, problem: 'hash_mismatch' };
      if (limits.expect && limits.expect.seq === expected && limits.expect.hash !== hash) return { ok: false, checked, firstBadSeq: expected, problem: 'checkpoint_mismatch' };
      prev = hash;
      checked++;
      if (expected === untilSeq) return { ok: true, last: { seq: expected, hash }, checked, complete: true };
      if ((limits.maxRows !== undefined && checked >= limits.maxRows) || (limits.deadline !== undefined && this.now() >= limits.deadline)) {
        return { ok: true, last: { seq: expected, hash }, checked, complete: false };
      }
      expected++;
    }
    // the rows up to the signed end are gone: the newest rows were deleted
    return { ok: false, checked, firstBadSeq: expected, problem: 'head_mismatch' };
  }

  /** The signed ends of the chain, or the problem with them. */
  private async ends(): Promise<{ ok: true; anchor: Point; head: Point } | { ok: false; firstBadSeq: number; problem: VerifyProblem }> {
    const [anchor, head] = await Promise.all([this.anchor(), this.head()]);
    if (!anchor.valid) return { ok: false, firstBadSeq: anchor.value.seq, problem: 'signature_invalid' };
    if (head && !head.valid) return { ok: false, firstBadSeq: head.value.seq, problem: 'signature_invalid' };
    if (head && head.value.seq >= anchor.value.seq && (await this.row(head.value.seq + 1))) {
      // a row past the head: an append in between moved the head too; otherwise it was inserted
      const again = await this.head();
      if (again?.value.seq === head.value.seq) return { ok: false, firstBadSeq: head.value.seq + 1, problem: 'head_mismatch' };
    }
    if (!head || head.value.seq < anchor.value.seq) {
      // no head: only right while no row was ever written after the anchor
      for await (const _ of this.stored(anchor.value.seq + 1, 999_999_999_999, { pageSize: 1 })) return { ok: false, firstBadSeq: anchor.value.seq + 1, problem: 'head_mismatch' };
      return { ok: true, anchor: anchor.value, head: anchor.value };
    }
    return { ok: true, anchor: anchor.value, head: head.value };
  }

  /**
   * `full`: walk the whole chain now, from the anchor to the head (the CLI, tests; the background
   * job uses `fullWalk` in slices); records the result as the last full walk.
   * `incremental`: the check of a poll, bounded (see `verifyIncremental`).
   */
  async verify(mode: 'full' | 'incremental' = 'full'): Promise<VerifyResult> {
    if (mode === 'incremental') {
      const r = await this.verifyIncremental();
      return { ok: r.ok, checked: r.checked, ...(r.ok ? {} : { firstBadSeq: r.firstBadSeq, problem: r.problem }) };
    }
    let state = await this.fullWalk({ restart: true });
    while (state.running) state = await this.fullWalk({});
    const last = state.last!;
    return { ok: last.ok, checked: last.checked, ...(last.ok ? {} : { firstBadSeq: last.firstBadSeq, problem: last.problem }) };
  }

  /**
   * One bounded check from the signed checkpoint: re-hash the checkpoint row from its content,
   * verify the rows added since (at most `maxNewRows`) up to the signed head, then re-hash the
   * next `sampleRows` older rows of the rolling sample (a lap walks anchor → checkpoint, where it
   * must meet the checkpoint's signed hash, then starts again). A success moves the checkpoint
   * and the sample; a failure moves nothing, so the next check finds it again.
   */
  async verifyIncremental(): Promise<IncrementalResult> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.incrementalOnce();
      // rows a concurrent purge deleted are not a break: look again once the anchor has moved
      if (!r.ok && attempt === 0 && (await this.anchor()).value.seq >= (r.firstBadSeq ?? 0)) continue;
      if (!r.ok) logger.error('audit chain does not verify', { chain: this.chain, firstBadSeq: r.firstBadSeq, problem: r.problem, check: 'incremental' });
      return r;
    }
  }

  private async incrementalOnce(): Promise<IncrementalResult> {
    const fail = (checked: number, firstBadSeq: number, problem: VerifyProblem, headSeq = 0, through = 0): IncrementalResult => ({ ok: false, checked, firstBadSeq, problem, verifiedThroughSeq: through, headSeq, pending: 0 });
    const ends = await this.ends();
    if (!ends.ok) return fail(0, ends.firstBadSeq, ends.problem);
    const { anchor, head } = ends;
    const saved = await this.readState<CheckpointState>('VERIFIED', 'checkpoint');
    if (saved && !saved.valid) return fail(0, saved.value?.seq ?? 0, 'signature_invalid', head.seq);
    const cp = saved?.value;
    let checked = 0;
    let start: Point = anchor;
    if (cp && cp.seq > anchor.seq) {
      if (cp.seq > head.seq) return fail(0, head.seq + 1, 'head_mismatch', head.seq, cp.seq);
      // the checkpoint row itself, re-hashed from what is stored now (not its stored hash)
      const it = await this.row(cp.seq);
      if (!it) return fail(0, cp.seq, 'missing_row', head.seq, cp.seq);
      const { prevHash, hash, ...body } = it;
      if (chainHash(prevHash, body) !== hash) return fail(0, cp.seq, 'hash_mismatch', head.seq, cp.seq);
      if (hash !== cp.hash) return fail(0, cp.seq, 'checkpoint_mismatch', head.seq, cp.seq);
      checked++;
      start = cp;
    }
    const fresh = await this.walk(start, head.seq, { maxRows: this.opts.maxNewRows ?? MAX_NEW_ROWS_PER_CHECK });
    if (!fresh.ok) return fail(checked + fresh.checked, fresh.firstBadSeq, fresh.problem, head.seq, start.seq);
    checked += fresh.checked;
    if (fresh.complete && fresh.last.hash !== head.hash) return fail(checked, head.seq, 'head_mismatch', head.seq, start.seq);
    const through = fresh.last;

    // the rolling sample over older rows
    const nowIso = new Date(this.now()).toISOString();
    const lapFresh = !cp || cp.sampleSeq < anchor.seq || cp.sampleSeq >= through.seq;
    let sample = lapFresh
      ? { sampleSeq: anchor.seq, sampleHash: anchor.hash, lapStartedAt: nowIso, lastLapStartedAt: cp?.lastLapStartedAt, lastLapCompletedAt: cp?.lastLapCompletedAt }
      : { sampleSeq: cp.sampleSeq, sampleHash: cp.sampleHash, lapStartedAt: cp.lapStartedAt, lastLapStartedAt: cp.lastLapStartedAt, lastLapCompletedAt: cp.lastLapCompletedAt };
    const s = await this.walk({ seq: sample.sampleSeq, hash: sample.sampleHash }, through.seq, { maxRows: this.opts.sampleRows ?? SAMPLE_ROWS_PER_CHECK, expect: through });
    if (!s.ok) return fail(checked + s.checked, s.firstBadSeq, s.problem, head.seq, start.seq);
    checked += s.checked;
    sample = s.complete
      ? { sampleSeq: anchor.seq, sampleHash: anchor.hash, lapStartedAt: nowIso, lastLapStartedAt: sample.lapStartedAt, lastLapCompletedAt: nowIso }
      : { ...sample, sampleSeq: s.last.seq, sampleHash: s.last.hash };

    const next: CheckpointState = { seq: through.seq, hash: through.hash, verifiedAt: nowIso, ...sample };
    if (next.lastLapStartedAt === undefined) delete next.lastLapStartedAt;
    if (next.lastLapCompletedAt === undefined) delete next.lastLapCompletedAt;
    if (through.seq > 0) await this.writeState('VERIFIED', 'checkpoint', next, saved?.version);
    return {
      ok: true,
      checked,
      verifiedThroughSeq: through.seq,
      headSeq: head.seq,
      pending: head.seq - through.seq,
      sample: {
        atSeq: next.sampleSeq,
        lapStartedAt: next.lapStartedAt,
        ...(next.lastLapStartedAt ? { lastLapStartedAt: next.lastLapStartedAt } : {}),
        ...(next.lastLapCompletedAt ? { lastLapCompletedAt: next.lastLapCompletedAt } : {}),
      },
    };
  }

  /** The signed checkpoint: the last verified row and the rolling sample's position. */
  async checkpoint(): Promise<(CheckpointState & { valid: boolean }) | undefined> {
    const s = await this.readState<CheckpointState>('VERIFIED', 'checkpoint');
    return s ? { ...s.value, valid: s.valid } : undefined;
  }

  /**
   * One slice of the background full walk (resumable): continue the walk in progress, or start one
   * from the anchor to the current signed head, until it ends, `deadline` (epoch ms) or `maxRows`.
   * The walk meets the signed checkpoint's hash when it passes it. Its progress and its last result
   * are a signed state item; `restart` drops a walk in progress and starts afresh.
   */
  async fullWalk(limits: { deadline?: number; maxRows?: number; restart?: boolean; afterPurge?: boolean }): Promise<FullWalkState> {
    // the walk's state, the chain's signed ends and the checkpoint, read together
    const [saved, ends, checkpoint] = await Promise.all([this.readState<WalkState>('FULLWALK', 'walk'), this.ends(), this.readState<CheckpointState>('VERIFIED', 'checkpoint')]);
    const nowIso = () => new Date(this.now()).toISOString();
    const finish = async (last: FullWalkResult): Promise<FullWalkState> => {
      if (!last.ok) logger.error('audit chain does not verify', { chain: this.chain, firstBadSeq: last.firstBadSeq, problem: last.problem, check: 'full' });
      await this.writeState('FULLWALK', 'walk', { last }, saved?.version);
      return { last };
    };
    if (saved && !saved.valid) return finish({ ok: false, checked: 0, firstBadSeq: 0, problem: 'signature_invalid', startedAt: nowIso(), completedAt: nowIso() });
    if (!ends.ok) return finish({ ok: false, checked: 0, firstBadSeq: ends.firstBadSeq, problem: ends.problem, startedAt: nowIso(), completedAt: nowIso() });
    let current = limits.restart ? undefined : saved?.value.current;
    if (!current || current.seq < ends.anchor.seq) {
      const cp = checkpoint;
      if (cp && !cp.valid) return finish({ ok: false, checked: 0, firstBadSeq: cp.value?.seq ?? 0, problem: 'signature_invalid', startedAt: nowIso(), completedAt: nowIso() });
      const expect = cp && cp.value.seq > ends.anchor.seq && cp.value.seq <= ends.head.seq ? { seq: cp.value.seq, hash: cp.value.hash } : undefined;
      current = { startedAt: nowIso(), seq: ends.anchor.seq, hash: ends.anchor.hash, untilSeq: ends.head.seq, untilHash: ends.head.hash, checked: 0, ...(expect ? { expect } : {}) };
      if (cp && cp.value.seq > ends.head.seq) return finish({ ok: false, checked: 0, firstBadSeq: ends.head.seq + 1, problem: 'head_mismatch', startedAt: current.startedAt, completedAt: nowIso() });
    }
    const w = await this.walk({ seq: current.seq, hash: current.hash }, current.untilSeq, { deadline: limits.deadline, maxRows: limits.maxRows, expect: current.expect });
    if (!w.ok) {
      // rows a purge deleted while the walk was under way: start again from the new anchor
      if ((await this.anchor()).value.seq >= w.firstBadSeq && !limits.afterPurge) return this.fullWalk({ ...limits, restart: true, afterPurge: true });
      return finish({ ok: false, checked: current.checked + w.checked, firstBadSeq: w.firstBadSeq, problem: w.problem, startedAt: current.startedAt, completedAt: nowIso() });
    }
    const checked = current.checked + w.checked;
    if (w.complete) {
      if (w.last.seq !== current.untilSeq || w.last.hash !== current.untilHash) {
        return finish({ ok: false, checked, firstBadSeq: current.untilSeq, problem: 'head_mismatch', startedAt: current.startedAt, completedAt: nowIso() });
      }
      return finish({ ok: true, checked, throughSeq: current.untilSeq, startedAt: current.startedAt, completedAt: nowIso() });
    }
    const next = { ...current, seq: w.last.seq, hash: w.last.hash, checked };
    const state: WalkState = { current: next, ...(saved?.value.last ? { last: saved.value.last } : {}) };
    await this.writeState('FULLWALK', 'walk', state, saved?.version);
    return { last: saved?.value.last, running: { startedAt: next.startedAt, seq: next.seq, untilSeq: next.untilSeq, checked } };
  }

  /** The background walk's last result and progress (a forged state item reads as a broken walk). */
  async fullWalkState(): Promise<FullWalkState> {
    const s = await this.readState<WalkState>('FULLWALK', 'walk');
    if (!s) return {};
    if (!s.valid) return { last: { ok: false, checked: 0, firstBadSeq: 0, problem: 'signature_invalid', startedAt: '', completedAt: '' } };
    const c = s.value.current;
    return { last: s.value.last, ...(c ? { running: { startedAt: c.startedAt, seq: c.seq, untilSeq: c.untilSeq, checked: c.checked } } : {}) };
  }

  /**
   * The chain's state for a poll or the verify route: one incremental check now, plus the last
   * background full walk (a break it found stays reported until a later full walk succeeds).
   */
  async check(): Promise<VerifyResult & { incremental: IncrementalResult; full: FullWalkState }> {
    const incremental = await this.verifyIncremental();
    const full = await this.fullWalkState();
    const bad = !incremental.ok ? incremental : full.last && !full.last.ok ? full.last : undefined;
    return {
      ok: !bad,
      checked: incremental.checked,
      ...(bad ? { firstBadSeq: bad.firstBadSeq, problem: bad.problem } : {}),
      incremental,
      full,
    };
  }

  /** Rows of an event since a time, newest first (stops at the first older row). */
  async countSince(event: string, since: Date, outcome?: string): Promise<number> {
    let n = 0;
    for await (const row of this.rows({ reverse: true })) {
      if (row.at < since.toISOString()) break;
      if (row.event === event && (outcome === undefined || row.outcome === outcome)) n++;
    }
    return n;
  }

  /**
   * Delete rows older than `retentionDays` (0 keeps everything). The anchor (signed) moves to the
   * last deleted row first, so the remaining chain still verifies; the purge itself is audited.
   */
  async purge(retentionDays: number, actor: AuditActor): Promise<number> {
    if (retentionDays === 0) return 0;
    const cutoff = new Date(this.now() - retentionDays * 86400_000).toISOString();
    const doomed: StoredRow[] = [];
    const { anchorSeq } = await this.extent();
    for await (const it of this.stored(anchorSeq + 1, 999_999_999_999)) {
      if (it.body.at >= cutoff) break;
      doomed.push(it);
    }
    if (doomed.length === 0) return 0;
    const last = doomed[doomed.length - 1];
    const anchor = { seq: last.seq, hash: last.hash };
    await this.store.put({ TableName: this.store.tableName, Item: { pk: this.metaPk, sk: 'ANCHOR', _et: 'AuditMeta', ...anchor, mac: await this.signer.sign('anchor', anchor) } });
    // rows appended together (the same `lk` and the same `at`: all doomed or none) go with their
    // shared lookup items, in one transaction
    const groups = new Map<number, StoredRow[]>();
    for (const it of doomed) {
      const first = it.lk ?? it.seq;
      groups.set(first, [...(groups.get(first) ?? []), it]);
    }
    for (const group of groups.values()) {
      const lookups = this.lookupItems(group.map((it) => ({ seq: it.seq, f: lookupFacts(it.body) })));
      const keys = [...group.map((it) => ({ pk: this.pk, sk: pad(it.seq) })), ...lookups.map(({ pk, sk }) => ({ pk, sk }))];
      await this.store.transactWrite(keys.map((Key) => ({ Delete: { TableName: this.store.tableName, Key } })));
    }
    await this.append({ event: 'audit.purge', outcome: 'success', actor, details: { deleted: doomed.length, throughSeq: last.seq, retentionDays } });
    return doomed.length;
  }
}
