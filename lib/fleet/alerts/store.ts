import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Store } from '../../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../../store/records';
import { DEFAULT_ALERT_SETTINGS, type AlertDraft, type AlertSettings } from './rules';

// Alert state in DynamoDB (it survives a restart of every function): the active set (pk ALERT,
// sk ACTIVE#<key>), the history (pk ALERTHIST, newest 200 kept), the last evaluation (ALERT/META)
// and the settings (ALERT/SETTINGS). A transition is decided by a conditional write: a fire is
// the put of a key that did not exist, a resolve the delete of one that did; whoever loses that
// race (a resumed or concurrent evaluation) sees no transition and notifies nothing.

export interface Alert extends AlertDraft {
  firedAt: string;
  resolvedAt?: string;
  /** last round that held it (values refreshed on screen, no notification) */
  updatedAt: string;
}

export interface Delivery {
  channelId: string;
  name: string;
  type: string;
  ok: boolean;
  status?: number;
  error?: string;
  at: string;
}

export type HistoryEvent = 'fired' | 'resolved' | 'test';
export interface HistoryEntry {
  id: string;
  at: string;
  event: HistoryEvent;
  alert: Alert | null;
  /** channel id of a test send */
  channelId?: string;
  deliveries: Delivery[];
}

export const HISTORY_LIMIT = 200;
const PK = 'ALERT';
const HIST = 'ALERTHIST';
const activeSk = (key: string) => `ACTIVE#${key}`;

export async function listActiveAlerts(store: Store): Promise<Alert[]> {
  return (await queryRecords<Alert>(store, PK, 'ACTIVE#')).map((r) => r.data);
}

/** Fire: true when this call created the active alert (the transition is ours to notify). */
export async function fireAlert(store: Store, alert: Alert): Promise<boolean> {
  return putRecord(store, PK, activeSk(alert.key), alert, { expectVersion: 0 });
}

/** Refresh an active alert's values (no transition). */
export async function refreshAlert(store: Store, alert: Alert): Promise<void> {
  const cur = await getRecord<Alert>(store, PK, activeSk(alert.key));
  if (!cur) return; // resolved meanwhile
  await putRecord(store, PK, activeSk(alert.key), { ...alert, firedAt: cur.data.firedAt }, { expectVersion: cur.version });
}

/** Resolve: the alert as it was when this call removed it, undefined when someone else did. */
export async function resolveAlert(store: Store, key: string): Promise<Alert | undefined> {
  const out = await store.delete({ Key: { pk: PK, sk: activeSk(key) }, ReturnValues: 'ALL_OLD' });
  return (out.Attributes?.data as Alert | undefined) ?? undefined;
}

export async function appendHistory(store: Store, entries: Array<Omit<HistoryEntry, 'id'>>): Promise<HistoryEntry[]> {
  const written: HistoryEntry[] = [];
  for (const e of entries) {
    const id = `${e.at}#${randomBytes(4).toString('hex')}`;
    const entry = { ...e, id };
    await putRecord(store, HIST, id, entry);
    written.push(entry);
  }
  if (written.length) await trimHistory(store);
  return written;
}

export async function recordDeliveries(store: Store, entries: HistoryEntry[]): Promise<void> {
  for (const e of entries) await putRecord(store, HIST, e.id, e);
}

async function trimHistory(store: Store): Promise<void> {
  const all = await queryRecords<HistoryEntry>(store, HIST);
  const excess = all.length - HISTORY_LIMIT;
  for (let i = 0; i < excess; i++) await deleteRecord(store, HIST, all[i].sk); // sk sorts by time, oldest first
}

/** Newest first. */
export async function listHistory(store: Store): Promise<HistoryEntry[]> {
  return (await queryRecords<HistoryEntry>(store, HIST)).map((r) => r.data).reverse().slice(0, HISTORY_LIMIT);
}

export interface EvaluationMeta {
  lastEvaluationAt: string;
  roundId: string;
}
export async function readEvaluationMeta(store: Store): Promise<EvaluationMeta | undefined> {
  return (await getRecord<EvaluationMeta>(store, PK, 'META'))?.data;
}
export async function writeEvaluationMeta(store: Store, meta: EvaluationMeta): Promise<void> {
  await putRecord(store, PK, 'META', meta);
}

// ---- settings (PUT /api/alerts/settings)

export const alertSettingsSchema = z.object({ failedLoginsThreshold: z.number().int().min(1).max(100000) }).strict();

export async function readAlertSettings(store: Store): Promise<AlertSettings> {
  return { ...DEFAULT_ALERT_SETTINGS, ...(await getRecord<AlertSettings>(store, PK, 'SETTINGS'))?.data };
}
export async function writeAlertSettings(store: Store, s: AlertSettings): Promise<{ old: AlertSettings; new: AlertSettings }> {
  const old = await readAlertSettings(store);
  await putRecord(store, PK, 'SETTINGS', s);
  return { old, new: s };
}
