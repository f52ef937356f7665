// The alerts as GET /api/alerts answers them (fleet spec: Alert; issue 29: acknowledges, silences, groups).

export interface Alert {
  key: string;
  kind: string;
  severity: 'warning' | 'critical';
  clientCode?: string;
  consoleId?: string;
  params?: Record<string, unknown>;
  subject: string;
  link?: string;
  firedAt: string;
  resolvedAt?: string;
  acknowledged?: { by: string; at: string; comment: string };
  silencedBy?: string | null;
}
export interface Delivery {
  channelId: string;
  name: string;
  type: string;
  ok: boolean;
  status?: number;
  error?: string;
}
export interface HistoryEntry {
  id: string;
  at: string;
  event: 'fired' | 'resolved' | 'test';
  alert: Alert | null;
  channelId?: string;
  deliveries?: Delivery[];
  quiet?: 'silenced' | 'acknowledged';
}
export interface AlertGroup {
  id: string;
  kind: string;
  label: string;
  clientCode: string | null;
  severity: 'warning' | 'critical';
  count: number;
  acknowledged: number;
  silenced: number;
  lastFiredAt: string;
  keys: string[];
}
export interface Silence {
  id: string;
  kind?: string;
  clientCode?: string;
  consoleId?: string;
  endsAt: string;
  comment: string;
  createdAt: string;
  createdBy: string;
}
export interface AlertsView {
  active: Alert[];
  groups: AlertGroup[];
  silences: Silence[];
  history: HistoryEntry[];
  lastEvaluationAt: string | null;
}

export const KIND_WORDS: Record<string, string> = {
  proxy_unreachable: 'Proxy unreachable',
  identity_expiring: 'Fleet identity expiring',
  identity_not_renewed: 'Fleet identity not renewed',
  console_down: 'Console down',
  console_audit_broken: 'Console audit chain broken',
  console_dc_down: 'Domain controller down',
  console_upgrade_overdue: 'Console upgrade overdue',
  failed_logins_spike: 'Failed sign-ins spike',
  certificate_expiring: 'Certificate expiring',
};
export const kindWords = (k: string) => KIND_WORDS[k] ?? k;

/** What a silence covers, in words. */
export const silenceWhat = (s: Pick<Silence, 'kind' | 'clientCode' | 'consoleId'>, hostOf?: (id: string) => string | undefined) =>
  [s.kind ? kindWords(s.kind) : 'Every rule', s.clientCode ? `of ${s.clientCode}` : 'of every client', s.consoleId ? `on console ${hostOf?.(s.consoleId) ?? s.consoleId}` : ''].filter(Boolean).join(' ');
