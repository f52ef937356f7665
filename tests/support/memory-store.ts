import { createSqliteStore, type SqliteStore } from '../../lib/store/sqlite';
import type { Item, Store } from '../../lib/store';

// A private store for unit tests: the SQLite adapter on an in-memory database (the same code the
// embedded store runs), so a unit test meets the same conditions, transactions and cancellation
// reasons as the product. Every call first yields to the event loop a random number of times, so
// parallel callers interleave between their read and their write as they would over a network.
// `items` shows what is stored: keyed `pk\u0000sk` (memoryStore) or by pk then sk (memoryDynamoStore).

function interleaved(store: SqliteStore): SqliteStore {
  const yieldRandomly = async () => {
    for (let i = Math.floor(Math.random() * 4); i >= 0; i--) await new Promise((r) => setImmediate(r));
  };
  const wrapped = { ...store } as SqliteStore;
  for (const op of ['get', 'put', 'update', 'delete', 'query', 'batchGet', 'batchWrite', 'transactWrite', 'scan'] as const) {
    const f = (store[op] as (...a: unknown[]) => Promise<unknown>).bind(store);
    (wrapped as unknown as Record<string, unknown>)[op] = async (...args: unknown[]) => {
      await yieldRandomly();
      return f(...args);
    };
  }
  return wrapped;
}

const id = (it: Item) => `${it.pk}\u0000${it.sk}`;

/** The store, its items flat (`pk\u0000sk` → item); `items.set` plants an item. */
export function memoryStore(): Store & { items: Map<string, any> } {
  const store = interleaved(createSqliteStore(':memory:'));
  const view = {
    get size() {
      return store.allItems().length;
    },
    get: (k: string) => store.allItems().find((it) => id(it) === k),
    has: (k: string) => store.allItems().some((it) => id(it) === k),
    set(_k: string, item: Item) {
      store.plant(item);
      return view;
    },
    keys: () => store.allItems().map(id)[Symbol.iterator](),
    values: () => store.allItems()[Symbol.iterator](),
    entries: () => store.allItems().map((it): [string, Item] => [id(it), it])[Symbol.iterator](),
  };
  return Object.assign(store, { items: view as unknown as Map<string, any> });
}

/** The store, its items by partition (pk → sk → item); `items.set(pk, Map)` plants a partition. */
export function memoryDynamoStore(_name = 'memory'): Store & { items: Map<string, Map<string, Item>> } {
  const store = interleaved(createSqliteStore(':memory:'));
  const partitions = () => {
    const out = new Map<string, Map<string, Item>>();
    for (const it of store.allItems()) {
      if (!out.has(it.pk)) out.set(it.pk, new Map());
      out.get(it.pk)!.set(it.sk, it);
    }
    return out;
  };
  const view = {
    get: (pk: string) => partitions().get(pk),
    has: (pk: string) => partitions().has(pk),
    set(_pk: string, part: Map<string, Item>) {
      for (const it of part.values()) store.plant(it);
      return view;
    },
    keys: () => partitions().keys(),
    values: () => partitions().values(),
    entries: () => partitions().entries(),
  };
  return Object.assign(store, { items: view as unknown as Map<string, Map<string, Item>> });
}

export const STORE_OPS = ['get', 'put', 'update', 'delete', 'query', 'batchGet', 'batchWrite', 'transactWrite', 'scan'] as const;
export type StoreOp = (typeof STORE_OPS)[number];

/**
 * Watch (or break) a store's calls: `see` is told each operation and its input before it runs; a
 * throw (or a rejected promise) from it fails that call instead.
 */
export function observe<S extends Store>(store: S, see: (op: StoreOp, input: any) => void | Promise<void>): S {
  for (const op of STORE_OPS) {
    const f = (store[op] as (...a: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<string, unknown>)[op] = async (...args: unknown[]) => {
      await see(op, args[0]);
      return f(...args);
    };
  }
  return store;
}
