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

/** Who acknowledged an active alert, when and why: it stays active, quiet (lib/fleet/alerts/silences.ts). */
export interface Acknowledgement {
  by: string;
  at: string;
  comment: string;
}

export interface Alert extends AlertDraft {
  firedAt: string;
  resolvedAt?: string;
  /** last round that held it (values refreshed on screen, no notification) */
  updatedAt: string;
  acknowledged?: Acknowledgement;
  /** false while its fire was held back by a silence (sent once the silence ends); absent = sent */
  notified?: boolean;
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
  /** recorded without a notification: the alert was silenced, or acknowledged (its resolve) */
  quiet?: 'silenced' | 'acknowledged';
}

export const HISTORY_LIMIT = 200;
const PK = 'ALERT';
const HIST = 'ALERTHIST';
const activeSk = (key: string) => `ACTIVE#${key}`;

export async function listActiveAlerts(store: Store): Promise<Alert[]> {
  return (await queryRecords<Alert>(store, PK, 'ACTIVE#')).map((r) => r.data);
}

export async function getActiveAlert(store: Store, key: string): Promise<Alert | undefined> {
  return (await getRecord<Alert>(store, PK, activeSk(key)))?.data;
}

/** Fire: true when this call created the active alert (the transition is ours to notify). */
export async function fireAlert(store: Store, alert: Alert): Promise<boolean> {
  return putRecord(store, PK, activeSk(alert.key), alert, { expectVersion: 0 });
}

/** Refresh an active alert's values (no transition). */
export async function refreshAlert(store: Store, alert: Alert): Promise<void> {
  const cur = await getRecord<Alert>(store, PK, activeSk(alert.key));
  if (!cur) return; // resolved meanwhile
  // what people did to it meanwhile (acknowledge) and whether its fire was sent stay as stored
  const { acknowledged: _ack, notified: _sent, ...values } = alert;
  const kept = { ...(cur.data.acknowledged ? { acknowledged: cur.data.acknowledged } : {}), ...(cur.data.notified !== undefined ? { notified: cur.data.notified } : {}) };
  await putRecord(store, PK, activeSk(alert.key), { ...values, firedAt: cur.data.firedAt, ...kept }, { expectVersion: cur.version });
}

/** Mark whether an active alert's fire was sent (a silenced fire is held back until its silence ends). */
export async function markNotified(store: Store, key: string, notified: boolean): Promise<void> {
  const cur = await getRecord<Alert>(store, PK, activeSk(key));
  if (!cur) return;
  const { notified: _was, ...rest } = cur.data;
  await putRecord(store, PK, activeSk(key), notified ? rest : { ...rest, notified: false }, { expectVersion: cur.version });
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
