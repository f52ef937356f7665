import fs from 'node:fs';
import path from 'node:path';
import { changeAuthz, type AuthzWrite } from '../authz/rights';
import { SUPER_ADMINISTRATOR_ROLE } from '../authz/permissions';
import { unavailable } from '../errors';
import { isConditionFailed, type Store } from '../store';
import { deleteRecord, getRecord, putRecord } from '../store/records';
import { readSqliteCopy } from '../store/sqlite';

// The versioned schema of the stored items (console spec, Versioning 2 and 4). The store carries
// its version in one item (SCHEMA/VERSION); a store written before versioning has none and reads
// as version 0. Pending migrations run after an automatic copy of the data, one at a time, the
// version written after each, under a lock so that one instance migrates while others wait.

export interface Migration {
  version: number;
  name: string;
  /** idempotent: run again after an interruption, it finds its work done */
  run(store: Store): Promise<{ changed: number }>;
}

export interface SchemaState {
  version: number;
  history: Array<{ version: number; name: string; at: string; changed: number }>;
}

const KEY = { pk: 'SCHEMA', sk: 'VERSION' };
const LOCK = { pk: 'SCHEMA', sk: 'MIGRATION_LOCK' };
const LOCK_SECONDS = 900;

/** Versioning 4: a custom role named 'Super administrator' is renamed with a '(custom)' suffix. */
async function renameCustomSuperAdministrator(store: Store): Promise<{ changed: number }> {
  return changeAuthz(store, (s) => {
    const builtIn = SUPER_ADMINISTRATOR_ROLE.name.toLowerCase();
    const names = new Set([...s.roles.values()].map((r) => r.data.name.toLowerCase()));
    const writes: AuthzWrite[] = [];
    for (const [id, r] of s.roles) {
      if (id === SUPER_ADMINISTRATOR_ROLE.id || r.data.name.trim().toLowerCase() !== builtIn) continue;
      let name = `${r.data.name.trim()} (custom)`;
      if (names.has(name.toLowerCase())) name = `${r.data.name.trim()} (custom ${id})`;
      names.add(name.toLowerCase());
      writes.push({ put: 'role', value: { ...r.data, name }, version: r.version });
    }
    return { writes, result: { changed: writes.length } };
  });
}

/** Every migration, in order; the last one's version is the schema this code writes. */
export const MIGRATIONS: Migration[] = [{ version: 1, name: 'custom-super-administrator-role-renamed', run: renameCustomSuperAdministrator }];
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/**
 * The store's schema version. No version item: a fresh store (no instance settings yet) is of this
 * code's version and is stamped so; a configured one was written before versioning (version 0).
 */
export async function readSchema(store: Store): Promise<{ state: SchemaState; recordVersion: number }> {
  const rec = await getRecord<SchemaState>(store, KEY.pk, KEY.sk);
  if (rec) return { state: rec.data, recordVersion: rec.version };
  const configured = await getRecord(store, 'INSTANCE', 'SETTINGS');
  if (configured) return { state: { version: 0, history: [] }, recordVersion: 0 };
  const fresh: SchemaState = { version: SCHEMA_VERSION, history: [] };
  if (await putRecord(store, KEY.pk, KEY.sk, fresh, { expectVersion: 0 })) return { state: fresh, recordVersion: 1 };
  return readSchema(store); // another instance stamped it first
}

export const pendingMigrations = (version: number) => MIGRATIONS.filter((m) => m.version > version);

/** Where the automatic copy goes: a folder (containers, local stack) or DynamoDB's on-demand backup (AWS). */
export interface CopyTarget {
  folder?: string;
}

/**
 * A copy of every item of the store (`admin backup`, and before the first migration runs), mode
 * 0600 (as sensitive as the database: technical-account passwords stay sealed under the master
 * key). SQLite: one consistent database file (its online backup, while writes go on). DynamoDB
 * with a folder: one JSON-lines file; without one: an on-demand backup of the table.
 */
export async function copyData(store: Store, target: CopyTarget, label: string): Promise<{ location: string; items?: number }> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  // SQLite: its online backup, one consistent database file; DynamoDB without a folder: an on-demand backup
  if (store.kind === 'sqlite' || !target.folder) return store.snapshot({ folder: target.folder, name: `${store.tableName}-${label}-${stamp}` });
  fs.mkdirSync(target.folder, { recursive: true, mode: 0o700 });
  const file = path.join(target.folder, `${store.tableName}-${label}-${stamp}.jsonl`);
  const fd = fs.openSync(file, 'wx', 0o600);
  let items = 0;
  try {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await store.scan({ ExclusiveStartKey: start });
      for (const it of page.Items ?? []) {
        fs.writeSync(fd, `${JSON.stringify(it)}\n`);
        items++;
      }
      start = page.LastEvaluatedKey;
    } while (start);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return { location: file, items };
}

/**
 * Replace the table's items with those of a copy written by copyData: every item of the copy is
 * written, then every item the copy does not hold is deleted (the table ends exactly as the copy;
 * the copy is read and checked whole before anything is written).
 */
export async function restoreData(store: Store, file: string): Promise<{ written: number; deleted: number }> {
  const items = readCopy(file);
  for (const it of items) if (typeof it.pk !== 'string' || typeof it.sk !== 'string') throw new Error('not a database copy: an item without its pk and sk');
  const keep = new Set(items.map((it) => `${it.pk}\u0000${it.sk}`));
  await store.batchWrite(items.map((put) => ({ put })));
  let deleted = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.scan({ ExclusiveStartKey: start, ProjectionExpression: 'pk, sk' });
    for (const it of page.Items ?? []) {
      if (keep.has(`${it.pk}\u0000${it.sk}`)) continue;
      await store.delete({ Key: { pk: it.pk, sk: it.sk } });
      deleted++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { written: items.length, deleted };
}

/**
 * Read a copy written by copyData (restore, tests): a SQLite database file (the embedded store's
 * backup), or JSON lines (DynamoDB's, and an instance moving from DynamoDB Local to SQLite).
 */
export const readCopy = (file: string): Array<Record<string, unknown>> =>
  file.endsWith('.sqlite')
    ? readSqliteCopy(file)
    : fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));

export interface MigrationReport {
  from: number;
  to: number;
  ran: Array<{ version: number; name: string; changed: number }>;
  copy?: { location: string; items?: number };
}

/**
 * Run the pending migrations: take the lock (another instance migrating: 503
 * `migration_in_progress`), copy the data (a failed copy: nothing migrates), then each migration
 * and its version. Nothing pending: nothing copied, nothing written.
 */
export async function runMigrations(store: Store, target: CopyTarget): Promise<MigrationReport> {
  let { state, recordVersion } = await readSchema(store);
  const from = state.version;
  if (!pendingMigrations(from).length) return { from, to: from, ran: [] };
  const now = Math.floor(Date.now() / 1000);
  if (!(await putRecord(store, LOCK.pk, LOCK.sk, { since: new Date().toISOString() }, { expectVersion: 0, ttl: now + LOCK_SECONDS }))) {
    const held = await getRecord(store, LOCK.pk, LOCK.sk);
    // an expired lock (a migration that died) is taken over
    if (held || !(await takeExpiredLock(store, now))) throw unavailable('migration_in_progress');
  }
  try {
    ({ state, recordVersion } = await readSchema(store)); // fresh, under the lock
    const pending = pendingMigrations(state.version);
    if (!pending.length) return { from: state.version, to: state.version, ran: [] };
    const copy = await copyData(store, target, `pre-migration-v${state.version}-to-v${SCHEMA_VERSION}`);
    const ran: MigrationReport['ran'] = [];
    for (const m of pending) {
      const { changed } = await m.run(store);
      const next: SchemaState = { version: m.version, history: [...state.history, { version: m.version, name: m.name, at: new Date().toISOString(), changed }] };
      if (!(await putRecord(store, KEY.pk, KEY.sk, next, { expectVersion: recordVersion }))) throw unavailable('migration_in_progress');
      state = next;
      recordVersion++;
      ran.push({ version: m.version, name: m.name, changed });
    }
    return { from, to: state.version, ran, copy };
  } finally {
    await deleteRecord(store, LOCK.pk, LOCK.sk);
  }
}

async function takeExpiredLock(store: Store, now: number): Promise<boolean> {
  // getRecord reads an expired item as absent; delete it only while it is still expired
  try {
    await store.delete({ Key: LOCK, ConditionExpression: '#t <= :now', ExpressionAttributeNames: { '#t': 'ttl' }, ExpressionAttributeValues: { ':now': now } });
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
  return putRecord(store, LOCK.pk, LOCK.sk, { since: new Date().toISOString() }, { expectVersion: 0, ttl: now + LOCK_SECONDS });
}
