import { CreateBackupCommand, CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceNotFoundException, UpdateTimeToLiveCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { processEnvironment } from '../config/environment';
import type { Item, Store } from './port';

// The store in AWS: one DynamoDB table (single-table design, declared in serverless.yml as
// HdcTable; the fleet plane's FleetTable), spoken to with the document client. In tests it runs
// against DynamoDB Local (a test tool only: its licence forbids shipping it).

/** The table definition used by serverless.yml and by the local stack / tests to create the table. */
export const TABLE_DEFINITION: Omit<CreateTableCommandInput, 'TableName'> = {
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
};

export function createDocumentClient(endpoint = processEnvironment().DYNAMODB_ENDPOINT): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    // bounded requests: a socket that never answers (a half-closed keep-alive socket under
    // serverless-offline's idle workers) is retried, never waited on until the Lambda times out
    requestHandler: { connectionTimeout: 2000, requestTimeout: 5000 },
    maxAttempts: 4,
    ...(endpoint
      ? { endpoint, region: processEnvironment().AWS_REGION ?? 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createDynamoStore(opts: { endpoint?: string; tableName: string }): Store {
  const dc = createDocumentClient(opts.endpoint);
  const TableName = opts.tableName;
  return {
    kind: 'dynamodb',
    tableName: TableName,
    get: (input) => dc.send(new GetCommand({ ConsistentRead: true, ...input, TableName })),
    put: (input) => dc.send(new PutCommand({ ...input, TableName })),
    update: (input) => dc.send(new UpdateCommand({ ...input, TableName } as ConstructorParameters<typeof UpdateCommand>[0])),
    delete: (input) => dc.send(new DeleteCommand({ ...input, TableName })),
    async query(input) {
      const r = await dc.send(new QueryCommand({ ConsistentRead: true, ...input, TableName }));
      return { Items: r.Items ?? [], ...(r.LastEvaluatedKey ? { LastEvaluatedKey: r.LastEvaluatedKey } : {}) };
    },
    async batchGet(keys) {
      const out: Item[] = [];
      let pending: Item[] = keys.map((k) => ({ pk: k.pk, sk: k.sk }));
      // keys DynamoDB left unprocessed (throttling) are asked again, after a short pause
      for (let attempt = 0; pending.length; attempt++) {
        if (attempt > 0) await sleep(Math.min(200, 10 * 2 ** attempt));
        if (attempt > 8) throw new Error('batch read: keys left unprocessed');
        const res = await dc.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: pending, ConsistentRead: true } } }));
        out.push(...(res.Responses?.[TableName] ?? []));
        pending = res.UnprocessedKeys?.[TableName]?.Keys ?? [];
      }
      return out;
    },
    async batchWrite(writes) {
      for (let i = 0; i < writes.length; i += 25) {
        let batch: Item[] = writes.slice(i, i + 25).map((w) => ('put' in w ? { PutRequest: { Item: w.put } } : { DeleteRequest: { Key: { pk: w.delete.pk, sk: w.delete.sk } } }));
        for (let attempt = 0; batch.length; attempt++) {
          if (attempt > 0) await sleep(Math.min(500, 10 * 2 ** attempt));
          const r = await dc.send(new BatchWriteCommand({ RequestItems: { [TableName]: batch } }));
          batch = (r.UnprocessedItems?.[TableName] ?? []) as Item[];
        }
      }
    },
    async transactWrite(items) {
      const named = items.map((t) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v && { ...v, TableName }])));
      try {
        await dc.send(new TransactWriteCommand({ TransactItems: named as typeof items as never }));
      } catch (e) {
        // the reasons' items come back marshalled: the port answers them as plain items
        for (const r of (e as { CancellationReasons?: Array<{ Item?: Record<string, any> }> }).CancellationReasons ?? []) if (r.Item) r.Item = unmarshall(r.Item);
        throw e;
      }
    },
    async scan(input = {}) {
      const r = await dc.send(new ScanCommand({ ConsistentRead: true, ...input, TableName }));
      return { Items: r.Items ?? [], ...(r.LastEvaluatedKey ? { LastEvaluatedKey: r.LastEvaluatedKey } : {}) };
    },
    async ensure() {
      try {
        await dc.send(new DescribeTableCommand({ TableName }));
        return;
      } catch (e) {
        if (!(e instanceof ResourceNotFoundException) && (e as Error).name !== 'ResourceNotFoundException') throw e;
      }
      await dc.send(new CreateTableCommand({ TableName, ...TABLE_DEFINITION }));
      try {
        await dc.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { Enabled: true, AttributeName: 'ttl' } }));
      } catch {
        /* DynamoDB Local accepts TTL settings but does not expire items; reads check ttl themselves */
      }
    },
    async ping() {
      await dc.send(new DescribeTableCommand({ TableName }));
    },
    async snapshot(o) {
      const name = `${TableName}-${o.name}`.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 255);
      const r = await dc.send(new CreateBackupCommand({ TableName, BackupName: name }));
      return { location: r.BackupDetails?.BackupArn ?? name };
    },
    close() {
      dc.destroy();
    },
  };
}
