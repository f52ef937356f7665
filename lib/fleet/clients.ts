import { z } from 'zod';
import { plainText, multilineText } from '../plain-text';
import { conflict, notFound } from '../errors';
import type { Store } from '../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';
import { removeClientFromAssignments } from './technicians';

// The client register: one record per client code (pk CLIENT, sk <code>).

/** Client code: lowercase letters, digits and hyphens (spec); starts with a letter or digit, at most 63. */
export const CLIENT_CODE = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const clientCodeSchema = z.string().regex(CLIENT_CODE, 'lowercase letters, digits and hyphens (at most 63, not starting with a hyphen)');

export const contactSchema = z.object({
  name: plainText().trim().min(1).max(200),
  email: z.email().max(254).optional(),
  phone: plainText().trim().max(50).optional(),
  role: plainText().trim().max(100).optional(),
});
export const clientFieldsSchema = z.object({
  name: plainText().trim().min(1).max(200),
  notes: multilineText().max(4000).default(''),
  contacts: z.array(contactSchema).max(20).default([]),
});
export const clientCreateSchema = clientFieldsSchema.extend({ code: clientCodeSchema });
export const clientUpdateSchema = z
  .object({
    name: plainText().trim().min(1).max(200).optional(),
    notes: multilineText().max(4000).optional(),
    contacts: z.array(contactSchema).max(20).optional(),
  })
  .refine((b) => b.name !== undefined || b.notes !== undefined || b.contacts !== undefined, 'nothing to change');

export interface Client {
  code: string;
  name: string;
  notes: string;
  contacts: z.output<typeof contactSchema>[];
  createdAt: string;
  updatedAt: string;
}

const PK = 'CLIENT';

export async function listClients(store: Store): Promise<Client[]> {
  return (await queryRecords<Client>(store, PK)).map((r) => r.data).sort((a, b) => a.code.localeCompare(b.code));
}

export async function getClient(store: Store, code: string): Promise<Client | undefined> {
  return (await getRecord<Client>(store, PK, code))?.data;
}

export async function createClient(store: Store, input: z.output<typeof clientCreateSchema>): Promise<Client> {
  const now = new Date().toISOString();
  const client: Client = { code: input.code, name: input.name, notes: input.notes, contacts: input.contacts, createdAt: now, updatedAt: now };
  if (!(await putRecord(store, PK, client.code, client, { expectVersion: 0 }))) throw conflict('client_exists');
  return client;
}

export async function updateClient(store: Store, code: string, patch: z.output<typeof clientUpdateSchema>): Promise<Client> {
  for (let i = 0; i < 5; i++) {
    const rec = await getRecord<Client>(store, PK, code);
    if (!rec) throw notFound();
    const next: Client = { ...rec.data, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), updatedAt: new Date().toISOString() };
    if (await putRecord(store, PK, code, next, { expectVersion: rec.version })) return next;
  }
  throw conflict('concurrent_update');
}

/** Delete a client and remove it from every technician assignment (spec: Client). */
/** 404 for an unknown client, 409 while consoles remain: checked before anything of the client is removed. */
export async function requireClientRemovable(store: Store, code: string, consoleCount: number): Promise<void> {
  if (!(await getClient(store, code))) throw notFound();
  // a console keeps polling credentials for the client: remove consoles first (docs/decisions-fleet.md)
  if (consoleCount > 0) throw conflict('client_has_consoles', { consoles: consoleCount });
}

export async function deleteClient(store: Store, code: string, consoleCount: number): Promise<void> {
  await requireClientRemovable(store, code, consoleCount);
  await deleteRecord(store, PK, code);
  await removeClientFromAssignments(store, code);
}
