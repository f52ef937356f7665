import { channelView, type ChannelInput, type ChannelRecord } from '../../channels';
import type { Store } from '../../store';
import { takeFromWindows } from '../../store/window';
import { tooMany } from '../../errors';
import { readRound } from '../poll/round';
import { KIND_LABELS, type AlertKind } from './rules';
import { listSilences, silencing } from './silences';
import { listActiveAlerts, listHistory, readEvaluationMeta, type Alert, type HistoryEntry } from './store';

// What GET /api/alerts shows a caller: active alerts and history of the clients in his scope
// (an alert without a client, the fleet plane's own, is for administrators), newest first.

export async function alertsView(store: Store, visible: Set<string> | undefined, now = Date.now()) {
  const inScope = (a: Alert | null) => !visible || (a !== null && a.clientCode !== undefined && visible.has(a.clientCode));
  const [active, history, meta, round, silences] = await Promise.all([listActiveAlerts(store), listHistory(store), readEvaluationMeta(store), readRound(store), listSilences(store, now)]);
  const strip = ({ consoleId: _c, proxyId: _p, notified: _n, ...a }: Alert) => a;
  const shown = active
    .filter(inScope)
    .sort((a, b) => b.firedAt.localeCompare(a.firedAt))
    .map((a) => ({ ...strip(a), ...(a.consoleId ? { consoleId: a.consoleId } : {}), silencedBy: silencing(silences, a, now)?.id ?? null }));
  return {
    active: shown,
    groups: alertGroups(shown),
    silences: silences.filter((x) => !visible || (x.clientCode !== undefined && visible.has(x.clientCode))),
    // a test entry has no alert: administrators only
    history: history.filter((h: HistoryEntry) => inScope(h.alert)).map((h) => ({ ...h, alert: h.alert ? strip(h.alert) : null, ...(visible ? { deliveries: undefined } : {}) })),
    lastEvaluationAt: meta?.lastEvaluationAt ?? null,
    round: round ? { id: round.id, startedAt: round.startedAt, completedAt: round.completedAt ?? null, consoles: round.consoles ?? null, durationMs: round.durationMs ?? null } : null,
  };
}

type ShownAlert = Pick<Alert, 'key' | 'kind' | 'severity' | 'clientCode' | 'firedAt' | 'acknowledged'> & { silencedBy: string | null };

/**
 * Active alerts grouped by rule and client (issue 29): one row per (kind, client) with its count,
 * the worst severity, how many are acknowledged or silenced, and the newest fire; biggest first.
 */
export function alertGroups(active: ShownAlert[]) {
  const groups = new Map<string, { id: string; kind: AlertKind; label: string; clientCode: string | null; severity: 'warning' | 'critical'; count: number; acknowledged: number; silenced: number; lastFiredAt: string; keys: string[] }>();
  for (const a of active) {
    const id = `${a.kind}|${a.clientCode ?? ''}`;
    const g = groups.get(id) ?? { id, kind: a.kind, label: KIND_LABELS[a.kind], clientCode: a.clientCode ?? null, severity: a.severity, count: 0, acknowledged: 0, silenced: 0, lastFiredAt: a.firedAt, keys: [] };
    g.count++;
    if (a.severity === 'critical') g.severity = 'critical';
    if (a.acknowledged) g.acknowledged++;
    if (a.silencedBy) g.silenced++;
    if (a.firedAt > g.lastFiredAt) g.lastFiredAt = a.firedAt;
    g.keys.push(a.key);
    groups.set(id, g);
  }
  const rank = (s: string) => (s === 'critical' ? 0 : 1);
  return [...groups.values()].sort((x, y) => rank(x.severity) - rank(y.severity) || y.count - x.count || y.lastFiredAt.localeCompare(x.lastFiredAt));
}

/** Audit details of a channel change: the spec's `enabled`, `type`, `url=replaced`, `secret=replaced|cleared` as strings (a detail key named like a secret is scrubbed). */
export const changeList = (changes: Record<string, unknown>) => Object.entries(changes).map(([k, v]) => `${k}=${v}`);

export const channelTarget = (c: Pick<ChannelRecord, 'id' | 'type' | 'name'>) => ({ id: c.id, name: `${c.type} ${c.name}`, kind: 'alert_channel' });

/** The fields an input sets, without values (creation detail): never the URL, secret or token. */
export const inputFields = (i: ChannelInput) => Object.keys(i).filter((k) => (i as Record<string, unknown>)[k] !== undefined && (i as Record<string, unknown>)[k] !== '');

export const TEST_SENDS_PER_MINUTE = 10;
/** Test sends: 10 per minute across the fleet plane's administrators (a sliding window). */
export async function takeTestSend(store: Store): Promise<void> {
  const r = await takeFromWindows(store, [{ scope: 'alerts-channel-test', subject: 'fleet', limit: TEST_SENDS_PER_MINUTE, windowMs: 60_000 }]);
  if (!r.admitted) throw tooMany('too_many_requests', { retryAfterSeconds: Math.ceil(r.retryAfterMs / 1000) });
}

export { channelView };
