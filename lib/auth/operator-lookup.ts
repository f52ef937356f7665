import { isGuid, type Directory } from '../directory';
import type { Store } from '../store';
import { queryRecords } from '../store/records';

// Finding an operator record by what a person types at the admin command line (console spec,
// Command-line operations: reset-totp <operator>): the operator id (the objectGUID the console
// keys operators on), the sign-in name, or a display name that only one operator has.

export interface OperatorIndexEntry {
  guid: string;
  username: string;
  displayName?: string;
}

export const listOperatorIndex = async (store: Store): Promise<OperatorIndexEntry[]> => (await queryRecords<OperatorIndexEntry>(store, 'OPERATORS')).map((r) => r.data);

export type OperatorLookup = { found: OperatorIndexEntry } | { found?: undefined; candidates: OperatorIndexEntry[] };

/**
 * One operator, or the candidates (none: unknown; several: ambiguous). Display names are read
 * from the directory for operators whose index entry predates them (`directory` lazily: a GUID
 * or a sign-in name needs no directory).
 */
export async function findOperator(store: Store, typed: string, directory: () => Promise<Directory>): Promise<OperatorLookup> {
  const all = await listOperatorIndex(store);
  const t = typed.trim().toLowerCase();
  const byKey = all.filter((o) => (isGuid(t) ? o.guid.toLowerCase() === t : o.username.toLowerCase() === t));
  if (byKey.length === 1) return { found: byKey[0] };
  if (byKey.length > 1 || isGuid(t)) return { candidates: byKey };
  let dir: Directory | undefined;
  const named: OperatorIndexEntry[] = [];
  for (const o of all) {
    let name = o.displayName;
    if (name === undefined) {
      dir ??= await directory();
      const dn = await dir.dnOfGuid(o.guid);
      name = (dn && (await dir.principalFacts(dn))?.displayName) || undefined;
    }
    if (name?.trim().toLowerCase() === t) named.push({ ...o, displayName: name });
  }
  return named.length === 1 ? { found: named[0] } : { candidates: named };
}
