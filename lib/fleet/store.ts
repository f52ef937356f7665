import { createStore, type Store } from '../store';
import { processEnvironment } from '../config/environment';

// The fleet plane's store: its own SQLite file (HDC_SQLITE_FILE, self-hosted and `npm start`) or
// its own DynamoDB table (FLEET_TABLE, AWS). Never the console's.
export function createFleetStore(opts: { endpoint?: string; tableName: string; sqliteFile?: string }): Store {
  const sqliteFile = opts.sqliteFile ?? processEnvironment().HDC_SQLITE_FILE;
  return sqliteFile ? createStore({ sqliteFile }) : createStore({ endpoint: opts.endpoint, tableName: opts.tableName });
}
