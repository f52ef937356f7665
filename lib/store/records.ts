import { isConditionFailed, nowSeconds, type Store, type WriteOptions } from './index';

// Typed records over the store. A record is a JSON document under (pk, sk) with an optimistic
// `version` and an optional `ttl` (epoch seconds; expired records read as absent, since DynamoDB
// deletes expired items only eventually, DynamoDB Local never, and SQLite's sweep now and then).

export interface Rec<T> {
  data: T;
  version: number;
  ttl?: number;
}

/** A stored item as a record; an expired one reads as absent. */
function liveRecord<T>(item: { data?: unknown; version?: number; ttl?: number } | undefined): Rec<T> | undefined {
  if (!item) return undefined;
  if (item.ttl !== undefined && item.ttl !== null && item.ttl <= nowSeconds()) return undefined;
  return { data: item.data as T, version: item.version ?? 1, ...(item.ttl !== undefined && item.ttl !== null ? { ttl: item.ttl } : {}) };
}

export async function getRecord<T>(store: Store, pk: string, sk: string): Promise<Rec<T> | undefined> {
  const { Item } = await store.get({ Key: { pk, sk }, ConsistentRead: true });
  return liveRecord<T>(Item);
}

/** Several records in one consistent batch read (at most 100 keys), in the keys' order. */
export async function getRecords(store: Store, keys: Array<{ pk: string; sk: string }>): Promise<Array<Rec<unknown> | undefined>> {
  const id = (k: { pk: string; sk: string }) => `${k.pk}\u0000${k.sk}`;
  const found = new Map((await store.batchGet(keys)).map((it) => [id(it as { pk: string; sk: string }), it]));
  return keys.map((k) => liveRecord(found.get(id(k))));
}

/** Put a record. `expectVersion`: 0 = must not exist; n = must be at version n (optimistic concurrency). */
export async function putRecord<T>(
  store: Store,
  pk: string,
  sk: string,
  data: T,
  opts: { ttl?: number; expectVersion?: number } & WriteOptions = {},
): Promise<boolean> {
  const version = (opts.expectVersion ?? 0) + 1;
  const Item = { pk, sk, _et: 'Record', data, version, ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}) };
  const wait: WriteOptions = { waitUntil: opts.waitUntil };
  try {
    if (opts.expectVersion === undefined) await store.put({ Item }, wait);
    else if (opts.expectVersion === 0) await store.put({ Item, ConditionExpression: 'attribute_not_exists(pk)' }, wait);
    else await store.put({ Item, ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': opts.expectVersion } }, wait);
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

export async function deleteRecord(store: Store, pk: string, sk: string): Promise<void> {
  await store.delete({ Key: { pk, sk } });
}

export async function queryRecords<T>(store: Store, pk: string, beginsWith?: string): Promise<Array<{ sk: string } & Rec<T>>> {
  const out: Array<{ sk: string } & Rec<T>> = [];
  let start: Record<string, any> | undefined;
  do {
    const res = await store.query({
      KeyConditionExpression: beginsWith ? 'pk = :pk AND begins_with(sk, :b)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk, ...(beginsWith ? { ':b': beginsWith } : {}) },
      ConsistentRead: true,
      ExclusiveStartKey: start,
    });
    for (const it of res.Items) {
      const rec = liveRecord<T>(it);
      if (rec) out.push({ sk: it.sk, ...rec });
    }
    start = res.LastEvaluatedKey;
  } while (start);
  return out;
}

// Counters and rate windows: see ./window.ts (sliding windows, never fixed clock windows).
