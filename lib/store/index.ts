import path from 'node:path';
import { processEnvironment } from '../config/environment';
import { createDynamoStore } from './dynamodb';
import type { CancellationReason, Store } from './port';

// The store (./port.ts): SQLite, the embedded default of self-hosted instances and `npm start`,
// or DynamoDB in AWS. The environment chooses: HDC_SQLITE_FILE names a SQLite file; otherwise
// the DynamoDB table HDC_TABLE (at DYNAMODB_ENDPOINT when set: DynamoDB Local in tests).

export type { CancellationReason, Item, Key, Store, TransactItem, WriteOptions } from './port';
export { isWriterBusy } from './port';

export interface StoreOptions {
  /** a SQLite file (':memory:' for a private in-process store) */
  sqliteFile?: string;
  /** the SQLite file is another service's: read, never written */
  readOnly?: boolean;
  endpoint?: string;
  tableName?: string;
}

export function createStore(opts: StoreOptions = {}): Store {
  const env = processEnvironment();
  const file = opts.sqliteFile ?? (opts.endpoint || opts.tableName ? undefined : env.HDC_SQLITE_FILE || undefined);
  if (file) {
    // loaded only where it is used: the Lambda bundles never open a file
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createSqliteStore } = require('./sqlite') as typeof import('./sqlite');
    return createSqliteStore(file === ':memory:' ? file : path.resolve(file), { readOnly: opts.readOnly });
  }
  return createDynamoStore({ endpoint: opts.endpoint ?? env.DYNAMODB_ENDPOINT, tableName: opts.tableName ?? env.HDC_TABLE ?? 'hdc-local' });
}

/** The store an environment names (HDC_SQLITE_FILE, or DYNAMODB_ENDPOINT with HDC_TABLE / FLEET_TABLE). */
export function storeOfEnvironment(env: Readonly<Record<string, string | undefined>>): Store {
  if (env.HDC_SQLITE_FILE) return createStore({ sqliteFile: env.HDC_SQLITE_FILE });
  return createStore({ endpoint: env.DYNAMODB_ENDPOINT || undefined, tableName: env.HDC_TABLE ?? env.FLEET_TABLE ?? 'hdc-local' });
}

/** Create the table or the file's schema when missing (local stack and tests; in AWS serverless.yml declares it). */
export const ensureTable = (store: Store) => store.ensure();

export const cancellationReasons = (e: unknown): CancellationReason[] => (e as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];

/** Is this the error a failed condition raises (a single write, or a transaction)? */
export const isConditionFailed = (e: unknown) =>
  (e as Error)?.name === 'ConditionalCheckFailedException' || (e as Error)?.name === 'TransactionCanceledException';

export const ping = (store: Store) => store.ping();

export const nowSeconds = () => Math.floor(Date.now() / 1000);
