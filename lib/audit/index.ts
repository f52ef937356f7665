import { randomUUID } from 'node:crypto';
import { auditLogger } from '../log';
import type { RequestDeadline } from '../request-scope';
import { cancellationReasons, isConditionFailed, isWriterBusy, type CancellationReason, type Store, type TransactItem } from '../store';
import { canonicalJson, chainHashOfText } from './canonical';
import { MAX_ROWS_PER_APPEND } from './chain-reader';
import { lookupFacts } from './lookup';
import { pad, scrubDetails, storedBody, type AuditActor, type AuditInput, type AuditRow, type Head, type StoredRow } from './rows';
import { VerifiedChain } from './verification';

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

export * from './rows';
export type { AuditChainOptions } from './options';
export { MAX_ROWS_PER_APPEND } from './chain-reader';
export { MAX_NEW_ROWS_PER_CHECK, SAMPLE_ROWS_PER_CHECK } from './verification';
export type { FullWalkProgress, FullWalkResult, FullWalkState, IncrementalResult, VerifyProblem, VerifyResult } from './verification';

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

/**
 * The longest sleep after a lost race (full jitter below it). Each try after a sleep reads the head
 * afresh, so a short cap spreads the writers enough (issue 28, 12 threads x 25 appends/s on SQLite
 * with the cores overcommitted: worst append 553 ms at 250 ms, 2.1 s at 1 s).
 */
const BACKOFF_CAP_MS = 250;

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

export interface AppendOptions {
  /**
   * A read's deadline (issue 28): a row not written by then is not written at all, and the append
   * throws AppendPastDeadline (the read answers 503 `overloaded`, reason `deadline`). Only for rows written before the caller acts (a
   * read's decision): the caller then refuses instead of acting. Under an overload on
   * serverless-offline (one SQLite file, a writer per worker thread) an append lost races to the
   * head for over a second, and reads served or refused after it ran past their answer budget.
   */
  deadline?: RequestDeadline;
}

/** An append given up at its deadline (AppendOptions.deadline): nothing was written. */
export class AppendPastDeadline extends Error {
  constructor(readonly deadline: RequestDeadline) {
    super('audit append not written by its deadline');
    this.name = 'AppendPastDeadline';
  }
}

/** Rows ready to append (see `AuditChain.prepare`). */
export interface PreparedRows {
  bases: Array<AuditInput & { id: string }>;
}

export class AuditChain extends VerifiedChain {
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
  async append(input: AuditInput, opts: AppendOptions = {}): Promise<AuditRow> {
    return (await this.appendAll([input], opts))[0];
  }

  /**
   * Append rows that belong together (a decision and its outcome) in one conditional transaction:
   * consecutive sequences, one move of the head, all or nothing. Retries on a lost race until written.
   */
  async appendAll(inputs: AuditInput[], opts: AppendOptions = {}): Promise<AuditRow[]> {
    return inProcessTurn(this.store, this.chain, () => this.appendInTurn(inputs, opts.deadline));
  }

  private async appendInTurn(inputs: AuditInput[], deadline: RequestDeadline | undefined): Promise<AuditRow[]> {
    const prepared = this.prepare(inputs);
    for (let attempt = 0; attempt < 500; attempt++) {
      // not tried past the deadline: the caller has not acted yet, and answers 503 instead
      if (deadline && this.now() >= deadline.at) throw new AppendPastDeadline(deadline);
      const draft = await this.draft(prepared);
      try {
        // SQLite waits for the writer's lock only until the deadline: its wait holds the thread
        await this.store.transactWrite(draft.items, deadline && { waitUntil: deadline.at });
        draft.written();
        return draft.rows;
      } catch (e) {
        if (deadline && isWriterBusy(e)) throw new AppendPastDeadline(deadline);
        if (!isConditionFailed(e) && (e as Error).name !== 'TransactionConflictException') throw e;
        draft.lost(cancellationReasons(e));
        // a head only known stale (this instance's hint) is tried again at once; a race lost to
        // another writer backs off with full jitter, growing exponentially: many writers (one per
        // instance) spread out instead of colliding again on the next slot
        if (attempt > 0) {
          const sleep = Math.random() * Math.min(BACKOFF_CAP_MS, 10 * 2 ** Math.min(attempt, 7));
          await new Promise((r) => setTimeout(r, deadline ? Math.max(0, Math.min(sleep, deadline.at - this.now())) : sleep));
          // the head learned before the sleep is stale by now (issue 28, measured: under 100 appends
          // a second from 10 threads, an append drafted on it lost every race for 12 to 42 s)
          this.lastKnown = undefined;
        }
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
          // stored as the very text hashed: verify hashes what it reads (see `storedText`)
          Item: { pk: this.pk, sk: pad(seq), _et: 'AuditRow', seq, bodyText: text, prevHash: before.hash, hash, ...lk },
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
      if (storedBody(it).at >= cutoff) break;
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
      const lookups = this.lookupItems(group.map((it) => ({ seq: it.seq, f: lookupFacts(storedBody(it)) })));
      const keys = [...group.map((it) => ({ pk: this.pk, sk: pad(it.seq) })), ...lookups.map(({ pk, sk }) => ({ pk, sk }))];
      await this.store.transactWrite(keys.map((Key) => ({ Delete: { TableName: this.store.tableName, Key } })));
    }
    await this.append({ event: 'audit.purge', outcome: 'success', actor, details: { deleted: doomed.length, throughSeq: last.seq, retentionDays } });
    return doomed.length;
  }
}
