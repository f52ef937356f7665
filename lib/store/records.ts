// by subpath: the package index pulls every action and schema into each bundle
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { Entity } from 'dynamodb-toolbox/entity';
import { DeleteItemCommand } from 'dynamodb-toolbox/entity/actions/delete';
import { GetItemCommand } from 'dynamodb-toolbox/entity/actions/get';
import { PutItemCommand } from 'dynamodb-toolbox/entity/actions/put';
import { any } from 'dynamodb-toolbox/schema/any';
import { item } from 'dynamodb-toolbox/schema/item';
import { number } from 'dynamodb-toolbox/schema/number';
import { string } from 'dynamodb-toolbox/schema/string';
import { QueryCommand } from 'dynamodb-toolbox/table/actions/query';
import { isConditionFailed, nowSeconds, type Store } from './index';

// Typed records over the single table. A record is a JSON document under (pk, sk) with an
// optimistic `version` and an optional `ttl` (epoch seconds; expired records read as absent,
// since DynamoDB deletes expired items only eventually and DynamoDB Local never does).
export function recordEntity(store: Store) {
  return new Entity({
    name: 'Record',
    table: store.table,
    timestamps: false,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      data: any(),
      version: number().default(1),
      ttl: number().optional(),
    }),
  });
}

const cache = new WeakMap<Store, { record: ReturnType<typeof recordEntity> }>();
function ents(store: Store) {
  let e = cache.get(store);
  if (!e) cache.set(store, (e = { record: recordEntity(store) }));
  return e;
}

export interface Rec<T> {
  data: T;
  version: number;
  ttl?: number;
}

/** A stored item as a record; an expired one reads as absent. */
function liveRecord<T>(item: { data?: unknown; version?: number; ttl?: number } | undefined): Rec<T> | undefined {
  if (!item) return undefined;
  if (item.ttl !== undefined && item.ttl <= nowSeconds()) return undefined;
  return { data: item.data as T, version: item.version ?? 1, ttl: item.ttl };
}

export async function getRecord<T>(store: Store, pk: string, sk: string): Promise<Rec<T> | undefined> {
  const { Item } = await ents(store).record.build(GetItemCommand).key({ pk, sk }).options({ consistent: true }).send();
  return liveRecord<T>(Item);
}

/** Several records in one consistent BatchGetItem (at most 100 keys), in the keys' order. */
export async function getRecords(store: Store, keys: Array<{ pk: string; sk: string }>): Promise<Array<Rec<unknown> | undefined>> {
  const found = new Map<string, Record<string, any>>();
  const id = (k: { pk: string; sk: string }) => `${k.pk}\u0000${k.sk}`;
  let pending: Array<Record<string, any>> = keys.map((k) => ({ pk: k.pk, sk: k.sk }));
  // keys DynamoDB left unprocessed (throttling) are asked again, after a short pause
  for (let attempt = 0; pending.length; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(200, 10 * 2 ** attempt)));
    if (attempt > 8) throw new Error('batch read: keys left unprocessed');
    const res = await store.documentClient.send(new BatchGetCommand({ RequestItems: { [store.tableName]: { Keys: pending, ConsistentRead: true } } }));
    for (const it of res.Responses?.[store.tableName] ?? []) found.set(id(it as { pk: string; sk: string }), it);
    pending = res.UnprocessedKeys?.[store.tableName]?.Keys ?? [];
  }
  return keys.map((k) => liveRecord(found.get(id(k))));
}

/** Put a record. `expectVersion`: 0 = must not exist; n = must be at version n (optimistic concurrency). */
export async function putRecord<T>(
  store: Store,
  pk: string,
  sk: string,
  data: T,
  opts: { ttl?: number; expectVersion?: number } = {},
): Promise<boolean> {
  const version = (opts.expectVersion ?? 0) + 1;
  const cmd = ents(store).record.build(PutItemCommand).item({ pk, sk, data, version, ttl: opts.ttl });
  try {
    if (opts.expectVersion === undefined) await cmd.send();
    else if (opts.expectVersion === 0) await cmd.options({ condition: { attr: 'pk', exists: false } }).send();
    else await cmd.options({ condition: { attr: 'version', eq: opts.expectVersion } }).send();
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

export async function deleteRecord(store: Store, pk: string, sk: string): Promise<void> {
  await ents(store).record.build(DeleteItemCommand).key({ pk, sk }).send();
}

export async function queryRecords<T>(store: Store, pk: string, beginsWith?: string): Promise<Array<{ sk: string } & Rec<T>>> {
  const out: Array<{ sk: string } & Rec<T>> = [];
  let start: any;
  do {
    const res = await store.table
      .build(QueryCommand)
      .entities(ents(store).record)
      .query({ partition: pk, ...(beginsWith ? { range: { beginsWith } } : {}) })
      .options({ consistent: true, exclusiveStartKey: start, maxPages: 1 })
      .send();
    for (const it of res.Items ?? []) {
      if (it.ttl !== undefined && it.ttl <= nowSeconds()) continue;
      out.push({ sk: it.sk, data: it.data as T, version: it.version, ttl: it.ttl });
    }
    start = res.LastEvaluatedKey;
  } while (start);
  return out;
}

// Counters and rate windows: see ./window.ts (sliding windows, never fixed clock windows).
