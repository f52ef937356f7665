import { randomUUID, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { plainText } from '../plain-text';
import { seal } from '../crypto/seal';
import { notFound } from '../errors';
import type { Store } from '../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';
import { clientCodeSchema } from './clients';

// Consoles of the clients (pk CONSOLE, sk <id>). The access token the fleet plane presents to
// the console is sealed with the master key (AAD bound to the console id) and never returned.

/** URL.parse without the throw: a refinement runs even after the format check failed. */
const parsedUrl = (u: string): URL | undefined => {
  try {
    return new URL(u);
  } catch {
    return undefined;
  }
};
const httpsUrl = z
  .url()
  .max(2048)
  .refine((u) => parsedUrl(u)?.protocol === 'https:', 'https only')
  .refine((u) => { const url = parsedUrl(u); return !!url && !url.username && !url.password; }, 'no credentials in the URL')
  .transform((u) => u.replace(/\/+$/, ''));
const caPem = z
  .string()
  .max(65536)
  .refine((pem) => {
    try {
      new X509Certificate(pem);
      return true;
    } catch {
      return false;
    }
  }, 'a PEM certificate');
const accessToken = plainText().min(16).max(4096).refine((t) => !/\s/.test(t), 'no whitespace');

export const consoleCreateSchema = z.object({
  clientCode: clientCodeSchema,
  url: httpsUrl,
  ca: caPem.optional(),
  token: accessToken,
});
export const consoleUpdateSchema = z
  .object({
    clientCode: clientCodeSchema.optional(),
    url: httpsUrl.optional(),
    ca: caPem.nullable().optional(), // null removes the extra CA
    token: accessToken.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'nothing to change');

export interface ConsoleRecord {
  id: string;
  clientCode: string;
  url: string;
  ca?: string;
  sealedToken: string;
  createdAt: string;
  updatedAt: string;
}
export interface ConsoleView {
  id: string;
  clientCode: string;
  url: string;
  ca: string | null;
  tokenSet: boolean;
  createdAt: string;
  updatedAt: string;
}

const PK = 'CONSOLE';
const aad = (id: string) => `fleet-console-token:${id}`;

export const consoleView = (c: ConsoleRecord): ConsoleView => ({
  id: c.id,
  clientCode: c.clientCode,
  url: c.url,
  ca: c.ca ?? null,
  tokenSet: !!c.sealedToken,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

export async function listConsoles(store: Store): Promise<ConsoleRecord[]> {
  return (await queryRecords<ConsoleRecord>(store, PK)).map((r) => r.data).sort((a, b) => a.clientCode.localeCompare(b.clientCode) || a.url.localeCompare(b.url));
}

export async function getConsole(store: Store, id: string): Promise<ConsoleRecord | undefined> {
  return (await getRecord<ConsoleRecord>(store, PK, id))?.data;
}

export async function createConsole(store: Store, key: Buffer, input: z.output<typeof consoleCreateSchema>): Promise<ConsoleRecord> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const rec: ConsoleRecord = { id, clientCode: input.clientCode, url: input.url, ...(input.ca ? { ca: input.ca } : {}), sealedToken: seal(key, input.token, aad(id)), createdAt: now, updatedAt: now };
  await putRecord(store, PK, id, rec, { expectVersion: 0 });
  return rec;
}

/** Which fields of an update change something (the guard needs it: URL and CA are administrators'). */
export function changedConsoleFields(current: ConsoleRecord, patch: z.output<typeof consoleUpdateSchema>) {
  return {
    clientCode: patch.clientCode !== undefined && patch.clientCode !== current.clientCode,
    url: patch.url !== undefined && patch.url !== current.url,
    ca: patch.ca !== undefined && (patch.ca ?? undefined) !== current.ca,
    token: patch.token !== undefined,
  };
}

export async function updateConsole(store: Store, key: Buffer, id: string, patch: z.output<typeof consoleUpdateSchema>): Promise<ConsoleRecord> {
  for (let i = 0; i < 5; i++) {
    const rec = await getRecord<ConsoleRecord>(store, PK, id);
    if (!rec) throw notFound();
    const next: ConsoleRecord = { ...rec.data, updatedAt: new Date().toISOString() };
    if (patch.clientCode !== undefined) next.clientCode = patch.clientCode;
    if (patch.url !== undefined) next.url = patch.url;
    if (patch.ca === null) delete next.ca;
    else if (patch.ca !== undefined) next.ca = patch.ca;
    if (patch.token !== undefined) next.sealedToken = seal(key, patch.token, aad(id));
    if (await putRecord(store, PK, id, next, { expectVersion: rec.version })) return next;
  }
  throw new Error('console update lost five races');
}

export async function deleteConsole(store: Store, id: string): Promise<ConsoleRecord> {
  const rec = await getConsole(store, id);
  if (!rec) throw notFound();
  await deleteRecord(store, PK, id);
  return rec;
}
