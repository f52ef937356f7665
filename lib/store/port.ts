import type {
  DeleteCommandInput,
  GetCommandInput,
  PutCommandInput,
  QueryCommandInput,
  ScanCommandInput,
  TransactWriteCommandInput,
  UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';

// The store port: the one interface every module of lib/ stores through. Two adapters implement
// it and one contract suite (tests/unit/store-contract.test.ts) proves them alike:
//   - SQLite (./sqlite.ts), the embedded default: self-hosted instances and `npm start`;
//   - DynamoDB (./dynamodb.ts), for AWS (and DynamoDB Local in tests only).
// Its operations are those of a single table of items keyed by (pk, sk), in the shapes of
// DynamoDB's document API: conditional puts, updates and deletes, consistent reads, range queries
// within a partition, batch reads, transactions that say which item was cancelled and why, and a
// scan for copies. The expressions are the subset ./expressions.ts evaluates. `TableName` in an
// input is ignored: a store is one table (or one file).

export type Item = Record<string, any>;
export interface Key {
  pk: string;
  sk: string;
}

type Input<T> = Omit<T, 'TableName'> & { TableName?: string };
export type GetInput = Input<GetCommandInput>;
export type PutInput = Input<PutCommandInput>;
export type UpdateInput = Input<UpdateCommandInput>;
export type DeleteInput = Input<DeleteCommandInput>;
export type QueryInput = Input<QueryCommandInput>;
export type ScanInput = Input<Pick<ScanCommandInput, 'ExclusiveStartKey' | 'ProjectionExpression' | 'Limit'>>;
type TransactItemOf<T> = NonNullable<T extends { TransactItems?: Array<infer I> } ? I : never>;
/** One item of a transaction: a Put, an Update, a Delete or a ConditionCheck. */
export type TransactItem = TransactItemOf<TransactWriteCommandInput>;

/** Why a transaction's item was cancelled, in the items' order (`ReturnValuesOnConditionCheckFailure: ALL_OLD` fills Item). */
export interface CancellationReason {
  Code?: string;
  Item?: Record<string, any>;
  Message?: string;
}

export interface Store {
  readonly kind: 'sqlite' | 'dynamodb';
  /** the table's name (DynamoDB) or the file's (SQLite): what a copy is named after */
  readonly tableName: string;
  get(input: GetInput): Promise<{ Item?: Item }>;
  /** A condition that fails throws ConditionalCheckFailedException (see isConditionFailed). */
  put(input: PutInput, opts?: WriteOptions): Promise<{ Attributes?: Item }>;
  update(input: UpdateInput): Promise<{ Attributes?: Item }>;
  delete(input: DeleteInput): Promise<{ Attributes?: Item }>;
  query(input: QueryInput): Promise<{ Items: Item[]; LastEvaluatedKey?: Item }>;
  /** Items of these keys (consistent), in no particular order; absent keys are left out. */
  batchGet(keys: Key[]): Promise<Item[]>;
  /** Unconditional puts and deletes, in batches (restore). */
  batchWrite(writes: Array<{ put: Item } | { delete: Key }>): Promise<void>;
  /** All or nothing; a failed condition throws TransactionCanceledException with CancellationReasons. */
  transactWrite(items: TransactItem[], opts?: WriteOptions): Promise<void>;
  /** One page of every item (copies). */
  scan(input?: ScanInput): Promise<{ Items: Item[]; LastEvaluatedKey?: Item }>;
  /** Create the table or file's schema when missing (local stack, self-hosted instances, tests). */
  ensure(): Promise<void>;
  /** The store answers (the readiness probe). */
  ping(): Promise<void>;
  /**
   * A point-in-time copy of the whole store, for a backup or before a migration: SQLite writes one
   * consistent database file (its online backup) under `folder`; DynamoDB takes an on-demand backup.
   */
  snapshot(opts: { folder?: string; name: string }): Promise<{ location: string }>;
  close(): void;
}

/**
 * How long a write may wait for its turn (issue 28). SQLite lets one writer in at a time, and
 * node:sqlite waits for the writer's lock synchronously: a write made during an overload held its
 * worker thread (every request of that thread) for a second or more. With `waitUntil`, SQLite waits
 * at most until then and throws `writerBusy()` with nothing written. DynamoDB ignores it: its calls
 * never hold the thread, and a call abandoned in flight would have an unknown outcome.
 */
export interface WriteOptions {
  /** epoch ms */
  waitUntil?: number;
}

/** A write not begun by its WriteOptions.waitUntil: nothing was written. */
export const writerBusy = () => Object.assign(new Error('the store was busy with another writer until the write\'s deadline'), { name: 'WriterBusy' });
export const isWriterBusy = (e: unknown) => (e as Error | undefined)?.name === 'WriterBusy';

/** The error a failed condition raises (both adapters), with DynamoDB's names. */
export function conditionFailed(reasons?: CancellationReason[]): Error {
  const name = reasons ? 'TransactionCanceledException' : 'ConditionalCheckFailedException';
  return Object.assign(new Error(reasons ? `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]` : 'The conditional request failed'), {
    name,
    ...(reasons ? { CancellationReasons: reasons } : {}),
  });
}

/** An input the store refuses (DynamoDB's ValidationException). */
export const validationError = (message: string) => Object.assign(new Error(message), { name: 'ValidationException' });
