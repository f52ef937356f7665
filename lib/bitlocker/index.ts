import { z } from 'zod';
import { decideOnComputer, type Actor, type DecisionContext } from '../authz/engine';
import { isGuid } from '../directory';
import { notFound } from '../errors';
import { firstBuffer, firstValue, RECOVERY_CLASS, RECOVERY_ENTRY_ATTRIBUTES, recoveryEntry, type RecoveryEntry } from './entries';

export * from './entries';

// A computer's BitLocker recovery entries as the console lists them (issue 33): read with the
// console's read account, which may read the entries' key id, volume and date but never the
// confidential msFVE-RecoveryPassword (no Control Access: the directory withholds it). The password
// itself is revealed through the password service only (lib/laps/reveal.ts, op `bitlocker.read`).

export const recoveryEntrySchema = z
  .object({ keyId: z.string(), keyIdPrefix: z.string(), volumeGuid: z.string().nullable(), date: z.string().nullable() })
  .meta({ id: 'BitlockerRecoveryEntry', description: 'One recovery entry of a computer: never the key' });
export const recoveryEntriesSchema = z.object({ entries: z.array(recoveryEntrySchema), truncated: z.boolean() }).meta({ id: 'BitlockerRecoveryEntries' });

/** At most this many entries are listed (a computer keeps one per volume and key protector change). */
const MAX_ENTRIES = 50;

/**
 * GET /api/computers/{id}/bitlocker: one audited decision of `computers.bitlocker.read` on fresh
 * facts (a refusal, an unknown or never-manageable computer: 404 like any unreadable one), then the
 * entries below the computer, newest first.
 */
export async function listRecoveryEntries(ctx: DecisionContext, actor: Actor, guid: string, correlationId: string): Promise<{ entries: RecoveryEntry[]; truncated: boolean }> {
  if (!isGuid(guid)) throw notFound();
  const d = await decideOnComputer(ctx, actor, 'computers.bitlocker.read', guid, { audit: true, correlationId });
  if (!d.allowed) throw notFound();
  const found = await ctx.dir.search({ base: d.target.dn, scope: 'one', filter: `(objectClass=${RECOVERY_CLASS})`, attributes: RECOVERY_ENTRY_ATTRIBUTES, max: MAX_ENTRIES + 1 });
  const page = found.entries.slice(0, MAX_ENTRIES);
  const entries = await Promise.all(
    page.map(async (e) => {
      const volume = firstBuffer((await ctx.dir.readAttributes(e.dn, ['msFVE-VolumeGuid'], { binary: ['msFVE-VolumeGuid'] }))?.['msFVE-VolumeGuid']);
      return recoveryEntry(firstValue(e.attributes.cn) ?? '', firstValue(e.attributes.whenCreated), volume);
    }),
  );
  const listed = entries.filter((x): x is RecoveryEntry => !!x).sort((a, b) => (b.date ?? '').localeCompare(a.date ?? ''));
  return { entries: listed, truncated: found.entries.length > MAX_ENTRIES || found.incomplete };
}
