import { deliverToAll, deliverToChannel, type ChannelPolicy, type ChannelRecord, type DeliveryResult, type NotificationEvent } from '../../channels';
import type { OutboundTrust } from '../../outbound/https';
import type { Store } from '../../store';
import { listFleetChannels, recordLastDelivery } from './channels';
import { KIND_LABELS } from './rules';
import { silencing, listSilences, type Silence } from './silences';
import { appendHistory, listActiveAlerts, markNotified, recordDeliveries, type Alert, type HistoryEntry, type HistoryEvent } from './store';

// Notifications of alert transitions (fleet spec, Events): every fired or resolved transition of
// a round is sent once to every enabled channel, all of them in one request per channel. A
// failed delivery is recorded (history entry, channel's last delivery) and not retried.

export interface Transition {
  event: 'fired' | 'resolved';
  alert: Alert;
}

export interface NotifyContext {
  store: Store;
  /** undefined: SECRETS_ENCRYPTION_KEY missing (every delivery records secret_unreadable) */
  policy?: Pick<ChannelPolicy, 'key' | 'aad'>;
  /** FLEET_PUBLIC_ORIGIN: makes links absolute in chat messages and cards */
  publicOrigin?: string;
  trust?: OutboundTrust;
  timeoutMs?: number;
}

const alertPayload = (a: Alert) => ({ key: a.key, kind: a.kind, severity: a.severity, clientCode: a.clientCode ?? null, subject: a.subject, params: a.params, link: a.link, firedAt: a.firedAt, ...(a.resolvedAt ? { resolvedAt: a.resolvedAt } : {}) });

export function eventText(event: HistoryEvent, a: Alert | null, error?: string): string {
  if (!a) return `Test notification from the fleet plane${error ? ` (${error})` : ''}`;
  const head = event === 'resolved' ? 'RESOLVED' : a.severity.toUpperCase();
  return [head, KIND_LABELS[a.kind], a.clientCode, a.subject].filter(Boolean).join(' · ');
}

/** The generic webhook payload (schema 1). */
export function webhookPayload(events: Array<{ event: HistoryEvent; alert: Alert | null }>, now = new Date()) {
  return { schema: 1, source: 'fleet', time: now.toISOString(), events: events.map((e) => ({ event: e.event, text: eventText(e.event, e.alert), alert: e.alert ? alertPayload(e.alert) : null })) };
}

export function humanEvents(events: Array<{ event: HistoryEvent; alert: Alert | null }>, publicOrigin: string | undefined): NotificationEvent[] {
  return events.map((e) => ({
    event: e.event,
    severity: e.alert?.severity ?? 'info',
    text: eventText(e.event, e.alert),
    ...(e.alert && publicOrigin ? { link: new URL(e.alert.link, publicOrigin).toString() } : {}),
    ...(e.alert ? { facts: [{ title: 'Kind', value: e.alert.kind }, ...(e.alert.clientCode ? [{ title: 'Client', value: e.alert.clientCode }] : []), { title: 'Key', value: e.alert.key }, { title: 'Fired', value: e.alert.firedAt }, ...(e.alert.resolvedAt ? [{ title: 'Resolved', value: e.alert.resolvedAt }] : [])] } : {}),
  }));
}

const missingKey = (c: ChannelRecord): DeliveryResult => ({ channelId: c.id, name: c.name, type: c.type, ok: false, error: 'secret_unreadable', at: new Date().toISOString() });

/**
 * Whether a transition is sent or only recorded (issue 29: notifications respect silences and
 * acknowledges). A fire under a silence is held back (the alert is marked not notified) and sent
 * once the silence ends, unless acknowledged meanwhile; the resolve of an alert whose fire was
 * never sent, of a silenced one, or of an acknowledged one (quiet by its acknowledge) is recorded only.
 */
export function quietReason(t: Transition, silences: Silence[], now: number): HistoryEntry['quiet'] {
  if (t.event === 'resolved' && t.alert.notified === false) return 'silenced';
  if (silencing(silences, t.alert, now)) return 'silenced';
  if (t.event === 'resolved' && t.alert.acknowledged) return 'acknowledged';
  return undefined;
}

/** Active alerts whose fire a silence held back, now out of every silence and not acknowledged: sent now. */
async function releasedFires(store: Store, silences: Silence[], now: number, exclude: Set<string>): Promise<Transition[]> {
  const held = (await listActiveAlerts(store)).filter((a) => a.notified === false && !exclude.has(a.key));
  return held.filter((a) => !a.acknowledged && !silencing(silences, a, now)).map((alert) => ({ event: 'fired' as const, alert }));
}

/** Record the round's transitions in the history, deliver those not held quiet, record the delivery results. */
export async function notifyTransitions(ctx: NotifyContext, transitions: Transition[]): Promise<HistoryEntry[]> {
  const now = new Date();
  const silences = await listSilences(ctx.store, now.getTime());
  const released = await releasedFires(ctx.store, silences, now.getTime(), new Set(transitions.map((t) => t.alert.key)));
  const all = [...transitions.map((t) => ({ t, quiet: quietReason(t, silences, now.getTime()) })), ...released.map((t) => ({ t, quiet: undefined }))];
  if (!all.length) return [];
  const entries = await appendHistory(ctx.store, all.map(({ t, quiet }) => ({ at: now.toISOString(), event: t.event, alert: t.alert, deliveries: [], ...(quiet ? { quiet } : {}) })));
  for (const { t, quiet } of all) {
    if (t.event !== 'fired') continue;
    if (quiet === 'silenced') await markNotified(ctx.store, t.alert.key, false);
    else if (t.alert.notified === false) await markNotified(ctx.store, t.alert.key, true);
  }
  const loud = all.map((x, i) => ({ ...x, entry: entries[i] })).filter((x) => !x.quiet);
  const channels = (await listFleetChannels(ctx.store)).filter((c) => c.enabled);
  if (!channels.length || !loud.length) return entries;
  const events = loud.map(({ t }) => ({ event: t.event as HistoryEvent, alert: t.alert }));
  const results = ctx.policy
    ? await deliverToAll(channels, humanEvents(events, ctx.publicOrigin), webhookPayload(events, now), { policy: ctx.policy, signing: 'fleet', trust: ctx.trust, timeoutMs: ctx.timeoutMs })
    : channels.map(missingKey);
  for (const { entry } of loud) entry.deliveries = results.map((r) => ({ ...r }));
  await recordDeliveries(ctx.store, loud.map((x) => x.entry));
  await recordLastDelivery(ctx.store, results);
  return entries;
}

/** POST /api/alerts/channels/{id}/test: one test event to one channel, recorded as `test`. */
export async function sendTestNotification(ctx: NotifyContext, channel: ChannelRecord): Promise<{ result: DeliveryResult; entry: HistoryEntry }> {
  const now = new Date();
  const events = [{ event: 'test' as const, alert: null }];
  const result = ctx.policy
    ? await deliverToChannel(channel, humanEvents(events, ctx.publicOrigin), webhookPayload(events, now), { policy: ctx.policy, signing: 'fleet', trust: ctx.trust, timeoutMs: ctx.timeoutMs })
    : missingKey(channel);
  const [entry] = await appendHistory(ctx.store, [{ at: now.toISOString(), event: 'test', alert: null, channelId: channel.id, deliveries: [result] }]);
  await recordLastDelivery(ctx.store, [result]);
  return { result, entry };
}
