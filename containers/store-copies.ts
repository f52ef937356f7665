import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyData, readCopy, restoreData } from '../lib/migrations';
import { isServiceItem, SERVICE_CHAIN } from '../lib/password-service/link/service-chain';
import { storeOfEnvironment } from '../lib/store';

// The image entry's commands on the container's own store (docs/containers.md), beside the
// console's `admin backup` / `admin restore-database`:
//   backup                      a point-in-time copy (SQLite's online backup) under HDC_BACKUP_FOLDER, its path printed
//   restore <copy> --confirm    the store made exactly the copy (password service, fleet plane)
//   check-copy <copy>           is this a copy of this container's store? (restore.sh, before stopping anything)
//   split-copy <copy>           a copy of the table the console and its password service shared (an
//                               instance on DynamoDB Local) cut in two JSON-lines files, one per service
// Exit codes as the admin command line: 0 done, 1 failed, 2 refused (nothing changed).

export type Role = 'console' | 'password-service' | 'fleet';
type Outcome = { code: number; out: string };
type Item = Record<string, unknown>;

/** Partitions that belong to another service's store than `role`'s (a restore of the wrong copy is refused on them). */
function foreignItem(role: Role, pk: string, sharedTable: boolean): boolean {
  const chain = /^AUDIT(?:META)?#(.+)$/.exec(pk)?.[1];
  if (role === 'password-service') return !isServiceItem(pk) && !pk.startsWith('SCHEDULE#');
  if (chain && chain !== role && !(sharedTable && role === 'console' && chain === SERVICE_CHAIN)) return true;
  return !sharedTable && isServiceItem(pk);
}

/** The items of a copy, checked: readable as a copy of this product (SQLite or JSON lines) and of `role`'s store. */
export function readOwnCopy(role: Role, file: string): Item[] {
  let items: Item[];
  try {
    items = readCopy(file) as Item[];
  } catch (e) {
    throw new Error(`not a database copy (${(e as Error).message.slice(0, 80)})`);
  }
  for (const it of items) if (typeof it.pk !== 'string' || typeof it.sk !== 'string') throw new Error('not a database copy: an item without its pk and sk');
  // a JSON-lines copy of the console comes from the table it shared with its password service
  const sharedTable = role === 'console' && file.endsWith('.jsonl');
  const foreign = items.find((it) => foreignItem(role, it.pk as string, sharedTable));
  if (foreign) throw new Error(`a copy of another service's store (it holds ${String(foreign.pk).replace(/#.*/, '#…')} items), not of the ${role}'s`);
  return items;
}

function writeJsonLines(file: string, items: Item[]) {
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    for (const it of items) fs.writeSync(fd, `${JSON.stringify(it)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export async function runStoreCommand(role: Role, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  const [command, ...args] = argv;
  const file = args.find((a) => !a.startsWith('--'));
  switch (command) {
    case 'backup': {
      if (role === 'console') return { code: 2, out: 'the console backs up with `admin backup`' };
      const store = storeOfEnvironment(env);
      const copy = await copyData(store, { folder: env.HDC_BACKUP_FOLDER || '/backups' }, 'backup');
      return { code: 0, out: copy.location };
    }
    case 'check-copy': {
      if (!file || !fs.existsSync(file)) return { code: 2, out: `${file ?? '(no file)'}: no such copy` };
      // read from a private copy: a SQLite copy keeps its WAL mode, and a reader of a WAL file
      // makes its index beside it, which a read-only folder (the file under check) refuses
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'check-'));
      try {
        const copy = path.join(scratch, path.basename(file));
        fs.copyFileSync(file, copy);
        const items = readOwnCopy(role, copy);
        return { code: 0, out: `${path.basename(file)}: a copy of the ${role}'s store, ${items.length} item(s)` };
      } catch (e) {
        return { code: 2, out: `${path.basename(file)}: ${(e as Error).message}` };
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    }
    case 'restore': {
      if (role === 'console') return { code: 2, out: 'the console restores with `admin restore-database <copy> --confirm`' };
      if (!file || !args.includes('--confirm')) return { code: 2, out: 'usage: restore <copy> --confirm (the store is made exactly the copy)' };
      try {
        readOwnCopy(role, file);
      } catch (e) {
        return { code: 2, out: `${path.basename(file)}: ${(e as Error).message}: nothing changed` };
      }
      const r = await restoreData(storeOfEnvironment(env), file);
      return { code: 0, out: `${role} store restored from ${path.basename(file)}: ${r.written} item(s) written, ${r.deleted} deleted` };
    }
    case 'split-copy': {
      if (role !== 'console' || !file?.endsWith('.jsonl')) return { code: 2, out: 'usage: split-copy <copy.jsonl> (the console image; a copy of the table shared with the password service)' };
      let items: Item[];
      try {
        items = readOwnCopy('console', file);
      } catch (e) {
        return { code: 2, out: `${path.basename(file)}: ${(e as Error).message}` };
      }
      const base = file.replace(/\.jsonl$/, '');
      const parts = { console: `${base}.console.jsonl`, 'password-service': `${base}.password-service.jsonl` };
      writeJsonLines(parts.console, items.filter((it) => !isServiceItem(it.pk)));
      writeJsonLines(parts['password-service'], items.filter((it) => isServiceItem(it.pk)));
      return { code: 0, out: `${parts.console}\n${parts['password-service']}` };
    }
    default:
      return { code: 2, out: `unknown command ${command ?? ''}: backup | restore <copy> --confirm | check-copy <copy> | split-copy <copy.jsonl>` };
  }
}
