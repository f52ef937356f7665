import fs from 'node:fs';
import path from 'node:path';
import { renewAuthzCommit } from '../authz/rights';
import { copyData, restoreData } from '../migrations';
import type { ConsoleRuntime } from '../runtime';

type Actor = { name: string; provider: string };
type Outcome = { code: number; out: string };

/** `backup`: a consistent copy of the database under Database:BackupFolder, its path printed; audited `database.backup`. */
export async function backupDatabase(rt: ConsoleRuntime, actor: Actor): Promise<Outcome> {
  const folder = rt.config.Database.BackupFolder;
  if (!folder) return { code: 1, out: "Database:BackupFolder is not set: nothing written (in AWS use the table's point-in-time recovery)" };
  const copy = await copyData(rt.store, { folder }, 'backup');
  await rt.audit.append({ event: 'database.backup', outcome: 'success', actor, details: { file: path.basename(copy.location), items: copy.items } });
  return { code: 0, out: copy.location };
}

/**
 * `restore-database <file> --confirm`: the table made exactly the copy, then the rights revision
 * given a new commit id; a file that is not a copy changes nothing (exit 2); audited `database.restored`.
 */
export async function restoreDatabase(rt: ConsoleRuntime, file: string, actor: Actor): Promise<Outcome> {
  if (!fs.existsSync(file)) return { code: 2, out: `${file}: no such file` };
  let result;
  try {
    result = await restoreData(rt.store, file);
  } catch (e) {
    return { code: 2, out: `${file} is not a database copy: nothing changed (${(e as Error).message.slice(0, 80)})` };
  }
  // a fresh commit id on the rights revision: a console that kept roles and delegations under the
  // restored id (read before the restore, or from a copy taken while a change committed) reads
  // them again. The restore is on record whatever happens to that write.
  const notRenewed = await renewAuthzCommit(rt.store).then(
    () => undefined,
    (e: unknown) => (e as Error).message.slice(0, 80),
  );
  await rt.audit.append({ event: 'database.restored', outcome: 'success', actor, details: { file: path.basename(file), ...result, rightsRenewed: !notRenewed } });
  if (notRenewed) return { code: 1, out: `database restored from ${path.basename(file)}, but the rights revision could not be renewed (${notRenewed}): restart every console so none keeps the roles and delegations it held` };
  return { code: 0, out: `database restored from ${path.basename(file)}: ${result.written} item(s) written, ${result.deleted} deleted` };
}
