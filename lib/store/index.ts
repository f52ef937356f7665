import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { ping as pingTable } from './client';
import { createDocumentClient, createTable, TABLE_DEFINITION, type HdcTable } from './table';
import { processEnvironment } from '../config/environment';

export { createDocumentClient, createTable, TABLE_DEFINITION, type HdcTable } from './table';

export interface Store {
  documentClient: DynamoDBDocumentClient;
  table: HdcTable;
  tableName: string;
}

export function createStore(opts: { endpoint?: string; tableName?: string } = {}): Store {
  const documentClient = createDocumentClient(opts.endpoint);
  const tableName = opts.tableName ?? processEnvironment().HDC_TABLE ?? 'hdc-local';
  return { documentClient, table: createTable(documentClient, tableName), tableName };
}

/** Create the table when missing (local stack and tests; in AWS serverless.yml declares it). */
export async function ensureTable(store: Store): Promise<void> {
  try {
    await store.documentClient.send(new DescribeTableCommand({ TableName: store.tableName }));
    return;
  } catch (e) {
    if (!(e instanceof ResourceNotFoundException) && (e as Error).name !== 'ResourceNotFoundException') throw e;
  }
  await store.documentClient.send(new CreateTableCommand({ TableName: store.tableName, ...TABLE_DEFINITION }));
  try {
    await store.documentClient.send(
      new UpdateTimeToLiveCommand({ TableName: store.tableName, TimeToLiveSpecification: { Enabled: true, AttributeName: 'ttl' } }),
    );
  } catch {
    /* DynamoDB Local accepts TTL settings but does not expire items; reads check ttl themselves */
  }
}

/** One item of a DynamoDB transaction (a Put, a ConditionCheck, ...). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** Why a transaction's item was cancelled, in the items' order (`ReturnValuesOnConditionCheckFailure` fills Item). */
export interface CancellationReason {
  Code?: string;
  Item?: Record<string, any>;
}
export const cancellationReasons = (e: unknown): CancellationReason[] => (e as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];

/** Is this the error DynamoDB returns when a condition expression failed? */
export const isConditionFailed = (e: unknown) =>
  (e as Error)?.name === 'ConditionalCheckFailedException' || (e as Error)?.name === 'TransactionCanceledException';

export async function ping(store: Store): Promise<void> {
  await pingTable(store.documentClient, store.tableName);
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);
