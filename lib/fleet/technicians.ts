import { z } from 'zod';
import { plainText } from '../plain-text';
import { badRequest, conflict, notFound } from '../errors';
import type { Store } from '../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';
import { LEVELS, type Level } from './config';

// Technician assignments (pk TECH, sk <exact user name>): user names are case-sensitive, as the
// access platform gives them, so "Alice" and "alice" are two technicians.

/**
 * A technician's user name as the access platform gives it (exact, case-sensitive): 1 to 256
 * characters, no surrounding spaces, no control or format characters (bidi overrides, zero-width
 * marks: names that read as another in the audit), no lone surrogate (a name JSON can carry but
 * no URL path can: it could be created and never deleted).
 */
export const technicianNameSchema = plainText()
  .min(1)
  .max(256)
  .refine((u) => u.trim() === u, 'no surrounding spaces')
  .refine((u) => !/[\p{Cc}\p{Cf}\p{Cs}]/u.test(u), 'no control, format or lone surrogate characters');

export const assignmentSchema = z.object({
  username: technicianNameSchema,
  clients: z
    .array(z.object({ code: z.string().min(1).max(63), level: z.enum(LEVELS) }))
    .max(500)
    .refine((cs) => new Set(cs.map((c) => c.code)).size === cs.length, 'each client at most once'),
});
export type Assignment = z.output<typeof assignmentSchema> & { updatedAt?: string };

const PK = 'TECH';

export async function listAssignments(store: Store): Promise<Assignment[]> {
  return (await queryRecords<Assignment>(store, PK)).map((r) => r.data).sort((a, b) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0));
}

export async function getAssignment(store: Store, username: string): Promise<Assignment | undefined> {
  return (await getRecord<Assignment>(store, PK, username))?.data;
}

/** Create or replace; only registered client codes (400 unknown_client naming them). */
export async function putAssignment(store: Store, input: Assignment, registered: Set<string>): Promise<{ created: boolean; assignment: Assignment }> {
  const unknown = input.clients.map((c) => c.code).filter((c) => !registered.has(c));
  if (unknown.length) throw badRequest('unknown_client', { codes: unknown });
  const assignment: Assignment = { username: input.username, clients: input.clients, updatedAt: new Date().toISOString() };
  for (let i = 0; i < 5; i++) {
    const rec = await getRecord<Assignment>(store, PK, input.username);
    if (await putRecord(store, PK, input.username, assignment, { expectVersion: rec?.version ?? 0 })) return { created: !rec, assignment };
  }
  throw conflict('concurrent_update');
}

export async function deleteAssignment(store: Store, username: string): Promise<Assignment> {
  const rec = await getRecord<Assignment>(store, PK, username);
  if (!rec) throw notFound();
  await deleteRecord(store, PK, username);
  return rec.data;
}

export async function removeClientFromAssignments(store: Store, code: string): Promise<number> {
  let changed = 0;
  for (const rec of await queryRecords<Assignment>(store, PK)) {
    if (!rec.data.clients.some((c) => c.code === code)) continue;
    let current = rec;
    for (let i = 0; i < 5; i++) {
      const next = { ...current.data, clients: current.data.clients.filter((c) => c.code !== code), updatedAt: new Date().toISOString() };
      if (await putRecord(store, PK, rec.sk, next, { expectVersion: current.version })) break;
      const again = await getRecord<Assignment>(store, PK, rec.sk);
      if (!again) break;
      current = { ...again, sk: rec.sk };
    }
    changed++;
  }
  return changed;
}

export const levelRank = (l: Level | 'admin') => (l === 'admin' ? 3 : l === 'operator' ? 2 : 1);
