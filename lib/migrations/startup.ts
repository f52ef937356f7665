import type { AuditChain } from '../audit';
import type { Config } from '../config';
import { unavailable } from '../errors';
import { logger } from '../log';
import type { Store } from '../store';
import { pendingMigrations, readSchema, runMigrations, SCHEMA_VERSION, type MigrationReport } from './index';

export const SYSTEM_ACTOR = { name: 'console', provider: 'system' };

/** Audit and log a migration run (`database.migrated`; the copy's location, never its content). */
export async function recordMigration(audit: AuditChain, report: MigrationReport, actor: { name: string; provider: string }): Promise<void> {
  const details = { from: report.from, to: report.to, migrations: report.ran.map((m) => `${m.version}:${m.name}:${m.changed}`), copy: report.copy?.location };
  logger.info('database migrated', details);
  await audit.append({ event: 'database.migrated', outcome: 'success', actor, details });
}

/**
 * At start (an instance's first request): the schema of the store is checked once; pending
 * migrations run with Database:AutoMigrate (after the copy), otherwise 503 `migration_pending`.
 * A store newer than this code (a rollback) is refused: 503 `schema_newer_than_code`.
 */
export async function ensureSchema(rt: { config: Config; store: Store; audit: AuditChain }): Promise<void> {
  const { state } = await readSchema(rt.store);
  if (state.version > SCHEMA_VERSION) {
    logger.error('the database was written by a newer version of the console', { schema: state.version, code: SCHEMA_VERSION });
    throw unavailable('schema_newer_than_code');
  }
  const pending = pendingMigrations(state.version);
  if (!pending.length) return;
  if (!rt.config.Database.AutoMigrate) {
    logger.warn('database migrations pending: run the admin command `migrate` (Database:AutoMigrate=false)', { schema: state.version, code: SCHEMA_VERSION, pending: pending.map((m) => m.name) });
    throw unavailable('migration_pending');
  }
  const report = await runMigrations(rt.store, { folder: rt.config.Database.BackupFolder });
  if (report.ran.length) await recordMigration(rt.audit, report, SYSTEM_ACTOR);
}
