import fs from 'node:fs';
import path from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { processEnvironment } from '../config/environment';
import { applyUpdate, keyRange, meetsCondition, project, type ExpressionContext } from './expressions';
import { conditionFailed, validationError, writerBusy, type CancellationReason, type WriteOptions, type Item, type Key, type Store, type TransactItem } from './port';

// The embedded store: one SQLite file per service (the console, the password service and the
// fleet plane each own theirs), in WAL mode, synchronous=FULL (a write that returned is on disk).
// Items are JSON documents under (pk, sk); the port's expressions are evaluated in process
// (./expressions.ts). Every write runs in a BEGIN IMMEDIATE transaction: reading the item its
// condition is about and writing it are one step, whichever process or worker thread asks, since
// SQLite lets one writer in at a time (others wait up to busy_timeout). node:sqlite is synchronous,
// so a call never interleaves with another of the same thread.

const BUSY_TIMEOUT_MS = 10_000;
const MAX_TRANSACT_ITEMS = 100;
const PAGE_BYTES = 1024 * 1024; // a query or scan page stops near 1 MB, as DynamoDB's do

// binary values (the document client's Uint8Array) survive the JSON round trip tagged; sets too
const TAG = '\u0000hdc';
const encode = (item: Item) =>
  JSON.stringify(item, function (k, v) {
    const raw = (this as Item)[k];
    if (raw instanceof Uint8Array) return { [TAG]: 'b', v: Buffer.from(raw).toString('base64') };
    if (raw instanceof Set) return { [TAG]: 's', v: [...raw] };
    return v;
  });
// JSON writes the tag's NUL as \u0000: an item without that text has no tagged value, and is read
// without a reviver (a reviver is called for every value: most of a page's cost)
const TAGGED = JSON.stringify(TAG).slice(1, -1);
const decode = (text: string): Item =>
  !text.includes(TAGGED)
    ? JSON.parse(text)
    : JSON.parse(text, (_k, v) => {
        if (v && typeof v === 'object' && TAG in v) return v[TAG] === 'b' ? new Uint8Array(Buffer.from(v.v, 'base64')) : new Set(v.v);
        return v;
      });

function loadSqlite(): typeof import('node:sqlite') {
  // loaded only where SQLite is the store: the module prints an ExperimentalWarning on Node 22
  const emit = process.emitWarning;
  process.emitWarning = ((w: string | Error, ...rest: unknown[]) => {
    if (String(typeof w === 'string' ? w : w.message).includes('SQLite')) return;
    (emit as (...a: unknown[]) => void).call(process, w, ...rest);
  }) as typeof process.emitWarning;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('node:sqlite');
  } finally {
    process.emitWarning = emit;
  }
}

const keyOf = (item: Item, what: string): Key => {
  if (typeof item?.pk !== 'string' || typeof item?.sk !== 'string' || !item.pk || !item.sk) throw validationError(`${what}: the key needs pk and sk (non-empty strings)`);
  return { pk: item.pk, sk: item.sk };
};
const ctxOf = (input: { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> }): ExpressionContext => ({
  names: input.ExpressionAttributeNames,
  values: input.ExpressionAttributeValues,
});
const ttlOf = (item: Item) => (typeof item.ttl === 'number' ? item.ttl : null);

/**
 * The items of a SQLite copy (a backup or a pre-migration copy), read only: a file that is not a
 * SQLite database, fails its integrity check, or has no items table is refused (nothing is read).
 */
export function readSqliteCopy(file: string): Item[] {
  const head = Buffer.alloc(16);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, 16, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (head.toString('latin1') !== 'SQLite format 3\u0000') throw new Error('not a SQLite database');
  const { DatabaseSync: Database } = loadSqlite();
  const db = new Database(file, { readOnly: true });
  try {
    const check = db.prepare('PRAGMA integrity_check').get() as { integrity_check?: string } | undefined;
    if (check?.integrity_check !== 'ok') throw new Error('the database fails its integrity check');
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'items'").get()) throw new Error('no items table: not a copy of this product');
    return (db.prepare('SELECT item FROM items ORDER BY pk, sk').all() as Array<{ item: string }>).map((r) => decode(r.item));
  } finally {
    db.close();
  }
}

/** The SQLite store, with a synchronous view of its items (tests look into the file with it). */
export interface SqliteStore extends Store {
  readonly kind: 'sqlite';
  allItems(): Item[];
  /** Write an item as it is, without a condition (tests that plant a state). */
  plant(item: Item): void;
}

export function createSqliteStore(file: string, opts: { readOnly?: boolean } = {}): SqliteStore {
  if (file !== ':memory:' && !opts.readOnly) fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const { DatabaseSync: Database, backup } = loadSqlite();
  // read only: another service's file that this one may read and never write (the password
  // service reading the console's directory settings); every write is refused by SQLite itself
  const db: DatabaseSync = new Database(file, { readOnly: opts.readOnly === true });
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (file !== ':memory:' && !opts.readOnly) {
    db.exec('PRAGMA journal_mode = WAL');
    try {
      // HDC_SQLITE_GROUP_READ=1: the owner's group may read it (the console's file in a container
      // instance, which the password service's container reads through that group; docs/containers.md)
      fs.chmodSync(file, processEnvironment().HDC_SQLITE_GROUP_READ === '1' ? 0o640 : 0o600);
    } catch {
      /* a file of another owner: its mode is theirs */
    }
  }
  if (!opts.readOnly) db.exec('PRAGMA synchronous = FULL');
  if (!opts.readOnly) {
    db.exec('CREATE TABLE IF NOT EXISTS items (pk TEXT NOT NULL, sk TEXT NOT NULL, item TEXT NOT NULL, ttl INTEGER, PRIMARY KEY (pk, sk)) WITHOUT ROWID');
    // the sweep of expired items finds them without a scan of the table under the writer's lock
    // (issue 28: 80 ms for 283,000 items here, once a minute per connection)
    db.exec('CREATE INDEX IF NOT EXISTS items_ttl ON items (ttl) WHERE ttl IS NOT NULL');
  }
  const statements = new Map<string, StatementSync>();
  const sql = (text: string) => {
    let s = statements.get(text);
    if (!s) statements.set(text, (s = db.prepare(text)));
    return s;
  };
  const read = (k: Key): Item | undefined => {
    const row = sql('SELECT item FROM items WHERE pk = ? AND sk = ?').get(k.pk, k.sk) as { item: string } | undefined;
    return row ? decode(row.item) : undefined;
  };
  const write = (item: Item) => {
    const k = keyOf(item, 'put');
    const clean = Object.fromEntries(Object.entries(item).filter(([, v]) => v !== undefined));
    sql('INSERT INTO items (pk, sk, item, ttl) VALUES (?, ?, ?, ?) ON CONFLICT (pk, sk) DO UPDATE SET item = excluded.item, ttl = excluded.ttl').run(k.pk, k.sk, encode(clean), ttlOf(clean));
  };
  const remove = (k: Key) => sql('DELETE FROM items WHERE pk = ? AND sk = ?').run(k.pk, k.sk);

  /**
   * One write transaction (BEGIN IMMEDIATE: the writer's lock is taken before anything is read).
   * With `waitUntil`, the lock is waited for until then at most (busy_timeout for this BEGIN only).
   */
  function inTransaction<T>(fn: () => T, waitUntil?: number): T {
    if (waitUntil === undefined) db.exec('BEGIN IMMEDIATE');
    else beginBy(waitUntil);
    try {
      const out = fn();
      db.exec('COMMIT');
      return out;
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
  }

  function beginBy(waitUntil: number) {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.min(BUSY_TIMEOUT_MS, Math.floor(waitUntil - Date.now())))}`);
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (e) {
      // SQLITE_BUSY (5): another writer kept the lock past the deadline
      if ((e as { errcode?: number }).errcode === 5) throw writerBusy();
      throw e;
    } finally {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  // expired items are deleted now and then, as DynamoDB's TTL does eventually; reads never see them
  // (records.ts and window.ts check ttl), conditions do until then, as on DynamoDB
  let lastSweep = Date.now();
  const sweep = () => {
    const now = Date.now();
    if (now - lastSweep < 60_000) return;
    lastSweep = now;
    sql('DELETE FROM items WHERE ttl IS NOT NULL AND ttl <= ?').run(Math.floor(now / 1000) - 3600);
  };

  const returnValues = (mode: string | undefined, old: Item | undefined, next: Item | undefined) =>
    mode === 'ALL_OLD' ? (old ? { Attributes: old } : {}) : mode === 'ALL_NEW' ? (next ? { Attributes: next } : {}) : {};

  function pageOf(rows: Iterable<{ item: string }>, limit: number | undefined, projection: string | undefined, ctx: ExpressionContext, filter?: string) {
    const Items: Item[] = [];
    let bytes = 0;
    let last: Item | undefined;
    let evaluated = 0;
    for (const row of rows) {
      const it = decode(row.item);
      evaluated++;
      bytes += row.item.length;
      if (meetsCondition(filter, it, ctx)) Items.push(project(it, projection, ctx));
      if ((limit !== undefined && evaluated >= limit) || bytes >= PAGE_BYTES) {
        last = { pk: it.pk, sk: it.sk };
        break;
      }
    }
    return { Items, ...(last ? { LastEvaluatedKey: last } : {}) };
  }

  const store: SqliteStore = {
    kind: 'sqlite',
    tableName: path.basename(file).replace(/\.sqlite$/, ''),
    async get(input) {
      const it = read(keyOf(input.Key as Item, 'get'));
      return it ? { Item: project(it, input.ProjectionExpression, ctxOf(input)) } : {};
    },
    async put(input, opts?: WriteOptions) {
      return inTransaction(() => {
        const old = read(keyOf(input.Item as Item, 'put'));
        if (!meetsCondition(input.ConditionExpression, old, ctxOf(input))) throw conditionFailed();
        write(input.Item as Item);
        sweep();
        return returnValues(input.ReturnValues, old, undefined);
      }, opts?.waitUntil);
    },
    async update(input) {
      return inTransaction(() => {
        const k = keyOf(input.Key as Item, 'update');
        const old = read(k);
        const ctx = ctxOf(input);
        if (!meetsCondition(input.ConditionExpression, old, ctx)) throw conditionFailed();
        const next = applyUpdate(input.UpdateExpression ?? '', old, k, ctx);
        write(next);
        return returnValues(input.ReturnValues, old, next);
      });
    },
    async delete(input) {
      return inTransaction(() => {
        const k = keyOf(input.Key as Item, 'delete');
        const old = read(k);
        if (!meetsCondition(input.ConditionExpression, old, ctxOf(input))) throw conditionFailed();
        if (old) remove(k);
        return returnValues(input.ReturnValues, old, undefined);
      });
    },
    async query(input) {
      const ctx = ctxOf(input);
      const range = keyRange(input.KeyConditionExpression ?? '', ctx);
      const where = ['pk = ?'];
      const args: Array<string | number> = [range.pk];
      const sk = range.sk;
      if (sk?.op === 'between') {
        where.push('sk >= ? AND sk <= ?');
        args.push(sk.low, sk.high);
      } else if (sk?.op === 'begins_with') {
        // by bytes, as DynamoDB compares: substr on a BLOB cast
        where.push('substr(CAST(sk AS BLOB), 1, ?) = CAST(? AS BLOB)');
        args.push(Buffer.byteLength(sk.prefix), sk.prefix);
      } else if (sk) {
        where.push(`sk ${sk.op} ?`);
        args.push(sk.value);
      }
      const forward = input.ScanIndexForward !== false;
      const start = input.ExclusiveStartKey as Item | undefined;
      if (start) {
        where.push(forward ? 'sk > ?' : 'sk < ?');
        args.push(keyOf(start, 'ExclusiveStartKey').sk);
      }
      const limit = input.Limit;
      // rows are read one by one up to the page's end (its Limit or 1 MB), not the whole partition
      const rows = sql(`SELECT item FROM items WHERE ${where.join(' AND ')} ORDER BY sk ${forward ? 'ASC' : 'DESC'}${limit !== undefined ? ' LIMIT ?' : ''}`).iterate(
        ...args,
        ...(limit !== undefined ? [limit] : []),
      ) as Iterable<{ item: string }>;
      return pageOf(rows, limit, input.ProjectionExpression, ctx, input.FilterExpression);
    },
    async batchGet(keys) {
      if (keys.length > 100) throw validationError('too many items requested for the BatchGetItem call');
      const out: Item[] = [];
      for (const k of keys) {
        const it = read(keyOf(k, 'batchGet'));
        if (it) out.push(it);
      }
      return out;
    },
    async batchWrite(writes) {
      inTransaction(() => {
        for (const w of writes) {
          if ('put' in w) write(w.put);
          else remove(keyOf(w.delete, 'delete'));
        }
      });
    },
    async transactWrite(items, opts?: WriteOptions) {
      if (items.length === 0 || items.length > MAX_TRANSACT_ITEMS) throw validationError(`a transaction holds 1 to ${MAX_TRANSACT_ITEMS} items`);
      const ops = items.map((t: TransactItem) => {
        if (t.Put) return { kind: 'put' as const, o: t.Put, key: keyOf(t.Put.Item as Item, 'put') };
        if (t.Update) return { kind: 'update' as const, o: t.Update, key: keyOf(t.Update.Key as Item, 'update') };
        if (t.Delete) return { kind: 'delete' as const, o: t.Delete, key: keyOf(t.Delete.Key as Item, 'delete') };
        if (t.ConditionCheck) return { kind: 'check' as const, o: t.ConditionCheck, key: keyOf(t.ConditionCheck.Key as Item, 'check') };
        throw validationError('a transaction item is a Put, an Update, a Delete or a ConditionCheck');
      });
      const seen = new Set<string>();
      for (const op of ops) {
        const id = `${op.key.pk}\u0000${op.key.sk}`;
        if (seen.has(id)) throw validationError('Transaction request cannot include multiple operations on one item');
        seen.add(id);
      }
      inTransaction(() => {
        const olds = ops.map((op) => read(op.key));
        const reasons: CancellationReason[] = ops.map((op, i) => {
          if (meetsCondition(op.o.ConditionExpression, olds[i], ctxOf(op.o))) return { Code: 'None' };
          const old = olds[i];
          return { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...(op.o.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old ? { Item: old } : {}) };
        });
        if (reasons.some((r) => r.Code !== 'None')) throw conditionFailed(reasons);
        ops.forEach((op, i) => {
          if (op.kind === 'put') write(op.o.Item as Item);
          else if (op.kind === 'delete') remove(op.key);
          else if (op.kind === 'update') write(applyUpdate((op.o as { UpdateExpression: string }).UpdateExpression, olds[i], op.key, ctxOf(op.o)));
        });
      }, opts?.waitUntil);
    },
    async scan(input = {}) {
      const start = input.ExclusiveStartKey as Item | undefined;
      const rows = (
        start
          ? sql('SELECT item FROM items WHERE pk > ? OR (pk = ? AND sk > ?) ORDER BY pk, sk LIMIT ?').iterate(start.pk, start.pk, start.sk, input.Limit ?? -1)
          : sql('SELECT item FROM items ORDER BY pk, sk LIMIT ?').iterate(input.Limit ?? -1)
      ) as Iterable<{ item: string }>;
      return pageOf(rows, input.Limit, input.ProjectionExpression, {});
    },
    async ensure() {
      /* the schema is created when the file is opened */
    },
    async ping() {
      sql('SELECT 1').get();
    },
    async snapshot(opts) {
      const folder = opts.folder ?? path.dirname(file);
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
      const target = path.join(folder, `${opts.name}.sqlite`);
      if (fs.existsSync(target)) throw new Error(`${target} exists`);
      // SQLite's online backup: one consistent copy while writes go on
      await backup(db, target);
      // the copy is one self-contained file: out of WAL mode, so opening it later (a restore's
      // check, read only) leaves no -wal or -shm beside it
      const copy = new Database(target);
      try {
        copy.exec('PRAGMA journal_mode = DELETE');
      } finally {
        copy.close();
      }
      fs.chmodSync(target, 0o600);
      return { location: target };
    },
    close() {
      db.close();
    },
    allItems() {
      return (sql('SELECT item FROM items ORDER BY pk, sk').all() as Array<{ item: string }>).map((r) => decode(r.item));
    },
    plant(item) {
      write(item);
    },
  };
  return store;
}
