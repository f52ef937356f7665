import type { ConsoleRuntime } from '../../runtime';
import { exchangeOf, type HttpRequest } from './exchange';

/**
 * Before anything reads or writes the store: its schema is this code's (pending migrations run at
 * an instance's first request, or 503 `migration_pending` with Database:AutoMigrate=false).
 */
export function schemaReady() {
  return {
    name: 'schemaReady',
    before: async (request: HttpRequest<any, any, ConsoleRuntime>) => {
      // runtimes built by unit tests around a bare configuration have no store to check
      await exchangeOf(request).rt!.schemaReady?.();
    },
  };
}
