import type { ConsoleRecord } from '../consoles';
import { isClientProxy, type Proxy } from '../nodes';
import type { ConsolePollState } from '../poll/state';

// The alert rules (fleet spec, Alert rules), as a pure function of what was read this round.
// Each rule either holds an alert (its condition is true and its data was read), decides that a
// key is clear (data read, condition false), or says nothing (no data: no decision). The
// lifecycle (lib/fleet/alerts/evaluate.ts) turns that into fired / refreshed / resolved.

export const ALERT_KINDS = [
  'proxy_unreachable',
  'identity_expiring',
  'identity_not_renewed',
  'console_down',
  'console_audit_broken',
  'console_dc_down',
  'console_upgrade_overdue',
  'failed_logins_spike',
  'certificate_expiring',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type Severity = 'warning' | 'critical';

export const KIND_LABELS: Record<AlertKind, string> = {
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

/** What a rule holds: the alert without its lifecycle dates. */
export interface AlertDraft {
  key: string;
  kind: AlertKind;
  severity: Severity;
  clientCode?: string;
  subject: string;
  params: Record<string, unknown>;
  link: string;
  /** what the alert is about, for "removing a console or proxy resolves its alerts" */
  consoleId?: string;
  proxyId?: string;
}

export interface AlertSettings {
  failedLoginsThreshold: number;
}
export const DEFAULT_ALERT_SETTINGS: AlertSettings = { failedLoginsThreshold: 20 };

export interface IdentityFacts {
  mode: 'identity_file' | 'machine_id';
  /** the identity file's certificate expiry; undefined: unreadable */
  expiresAt?: string;
  /** Machine ID: last rewrite of the file; null: the file is missing */
  modifiedAt?: string | null;
  renewalIntervalMs: number;
}

export interface UpgradePlanFacts {
  consoleId: string;
  to: string;
  plannedAt: string;
  /** the rule is only evaluated while the console answers polls; the caller decides "reached" */
  reached: boolean;
}

export interface RuleInput {
  now: number;
  roundId: string;
  settings: AlertSettings;
  consoles: ConsoleRecord[];
  states: Map<string, ConsolePollState>;
  /** undefined: the cluster could not be read this round (no proxy decision) */
  proxies?: Proxy[];
  /** undefined: no identity configured (the identity rules are off) */
  identity?: IdentityFacts;
  /** the access proxy's certificate read this round; undefined: not read */
  accessCert?: { validTo: string; subject?: string };
  upgrades?: { plans: UpgradePlanFacts[]; delayDays: number };
}

export interface RuleOutput {
  held: AlertDraft[];
  /** keys decided clear this round (and prefixes: every key under them not held is clear) */
  clearKeys: string[];
  clearPrefixes: string[];
}

const DAY = 86_400_000;
export const CERT_WARNING_MS = 14 * DAY;
export const CERT_CRITICAL_MS = 3 * DAY;
const IDENTITY_WARNING_MS = DAY;

export const consoleKey = (id: string, what: string) => `console:${id}:${what}`;
const origin = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/** The certificate rule's severity, or undefined when the certificate is fine. */
export function certificateSeverity(validTo: string, now: number): Severity | undefined {
  const left = Date.parse(validTo) - now;
  if (Number.isNaN(left)) return undefined;
  if (left < CERT_CRITICAL_MS) return 'critical';
  if (left < CERT_WARNING_MS) return 'warning';
  return undefined;
}
const daysLeft = (validTo: string, now: number) => Math.floor((Date.parse(validTo) - now) / DAY);

/** A DC's key part: the host name of its URL (its FQDN), else (an address) the name the console gives. */
export const dcName = (dc: { name: string; url?: string }) => {
  try {
    const host = dc.url ? new URL(dc.url).hostname.toLowerCase() : '';
    if (host && !/^[\d.]+$|^\[/.test(host)) return host;
  } catch {
    /* fall back to the name */
  }
  return dc.name.toLowerCase();
};

export const isHealthDown = (status: string) => status === 'down' || status === 'unhealthy';

function consoleRules(c: ConsoleRecord, st: ConsolePollState | undefined, input: RuleInput, out: RuleOutput) {
  if (!st || st.roundId !== input.roundId) return; // not polled this round: no decision at all
  const host = origin(c.url);
  const base = { clientCode: c.clientCode, link: `/consoles/${c.id}`, consoleId: c.id };
  const k = (what: string) => consoleKey(c.id, what);

  // certificate: read in the status poll, also when TLS verification failed
  if (st.cert && st.cert.roundId === input.roundId) {
    const sev = certificateSeverity(st.cert.validTo, input.now);
    if (sev) {
      const days = daysLeft(st.cert.validTo, input.now);
      out.held.push({ ...base, key: k('cert'), kind: 'certificate_expiring', severity: sev, subject: days < 0 ? `Certificate of console ${host} expired` : `Certificate of console ${host} expires in ${days} day(s)`, params: { validTo: st.cert.validTo, daysLeft: days, subject: st.cert.subject, url: c.url } });
    } else out.clearKeys.push(k('cert'));
  }

  if (!st.ok) {
    // one failed poll changes nothing; the second consecutive one fires console_down
    if (st.consecutiveFailures >= 2)
      out.held.push({ ...base, key: k('down'), kind: 'console_down', severity: 'critical', subject: `Console ${host} is down: ${st.consecutiveFailures} failed polls (${st.error})`, params: { reason: 'poll_failed', error: st.error, ...(st.httpStatus ? { httpStatus: st.httpStatus } : {}), consecutiveFailures: st.consecutiveFailures, lastSuccessAt: st.lastSuccessAt ?? null, url: c.url } });
    return; // an unreachable console keeps its audit / DC / sign-in alert state
  }
  const s = st.status!;
  if (isHealthDown(s.health.status)) out.held.push({ ...base, key: k('down'), kind: 'console_down', severity: 'critical', subject: `Console ${host} reports health ${s.health.status}`, params: { reason: 'health', health: s.health.status, url: c.url } });
  else out.clearKeys.push(k('down'));

  // audit chain: as the console reports it, and as the fleet witnessed it (beyond the spec)
  if (s.audit.chain === 'broken' || st.rewrite) {
    const params = st.rewrite
      ? { reason: 'chain_rewritten', witnessed: st.rewrite.witnessed, reported: st.rewrite.reported, detectedAt: st.rewrite.detectedAt }
      : { reason: 'chain_broken', firstBadSeq: s.audit.firstBadSeq ?? null, problem: s.audit.problem ?? null };
    out.held.push({ ...base, key: k('audit'), kind: 'console_audit_broken', severity: 'critical', subject: st.rewrite ? `Audit chain of console ${host} was rewritten since the fleet last saw it` : `Console ${host} reports its audit chain broken`, params });
  } else if (s.audit.chain !== undefined && s.audit.chain !== 'unknown') out.clearKeys.push(k('audit'));

  // one alert per DC reported down; every other DC key of this console is clear
  for (const dc of s.directory.dcs) {
    if (dc.state === 'down') out.held.push({ ...base, key: k(`dc:${dcName(dc)}`), kind: 'console_dc_down', severity: 'warning', subject: `Console ${host}: domain controller ${dcName(dc)} is down`, params: { dc: dcName(dc), name: dc.name, ...(dc.url ? { url: dc.url } : {}) } });
  }
  out.clearPrefixes.push(k('dc:'));

  const failed = s.audit.failedLogins24h;
  if (typeof failed === 'number') {
    if (failed > input.settings.failedLoginsThreshold) out.held.push({ ...base, key: k('logins'), kind: 'failed_logins_spike', severity: 'warning', subject: `Console ${host}: ${failed} failed sign-ins in 24 h (threshold ${input.settings.failedLoginsThreshold})`, params: { failedLogins24h: failed, threshold: input.settings.failedLoginsThreshold } });
    else out.clearKeys.push(k('logins'));
  }

  // upgrade overdue: only evaluated while the console answers polls
  if (input.upgrades) {
    const plan = input.upgrades.plans.find((p) => p.consoleId === c.id);
    const late = plan && !plan.reached && input.now - Date.parse(plan.plannedAt) > input.upgrades.delayDays * DAY;
    if (late) out.held.push({ ...base, key: k('upgrade'), kind: 'console_upgrade_overdue', severity: 'warning', subject: `Console ${host} still runs ${s.instance.version ?? 'an unknown version'}, planned upgrade to ${plan!.to}`, params: { from: s.instance.version ?? null, to: plan!.to, plannedAt: plan!.plannedAt, delayDays: input.upgrades.delayDays } });
    else out.clearKeys.push(k('upgrade'));
  }
}

function proxyRules(proxies: Proxy[], out: RuleOutput) {
  for (const p of proxies) {
    if (p.kind === 'auth' || p.kind === 'proxy' || !isClientProxy(p)) continue;
    const key = `proxy:${p.id}`;
    if (p.networkStatus === 'unreachable')
      out.held.push({ key, kind: 'proxy_unreachable', severity: 'critical', ...(p.clientCode ? { clientCode: p.clientCode } : {}), subject: `Proxy ${p.hostname} not seen for more than 20 minutes`, params: { id: p.id, hostname: p.hostname, lastSeen: p.lastSeen, clientCodes: p.clientCodes }, link: `/proxies/${p.id}`, proxyId: p.id });
    else out.clearKeys.push(key);
  }
  out.clearPrefixes.push('proxy:'); // a proxy gone from the cluster (or no longer a client proxy): resolved
}

function identityRules(id: IdentityFacts, now: number, out: RuleOutput) {
  if (id.mode === 'machine_id') {
    const deadline = 2 * id.renewalIntervalMs;
    const stale = id.modifiedAt === null || (id.modifiedAt !== undefined && now - Date.parse(id.modifiedAt) > deadline);
    if (stale) out.held.push({ key: 'identity:renewal', kind: 'identity_not_renewed', severity: 'warning', subject: id.modifiedAt === null ? 'Machine ID identity file is missing' : `Machine ID identity not renewed since ${id.modifiedAt}`, params: { modifiedAt: id.modifiedAt, deadlineMinutes: Math.round(deadline / 60000) }, link: '/' });
    else if (id.modifiedAt !== undefined) out.clearKeys.push('identity:renewal');
  }
  if (id.expiresAt === undefined) return; // unreadable: no decision
  const left = Date.parse(id.expiresAt) - now;
  // identity file: warn under 24 h, critical once expired; Machine ID (1 h certificates): only once expired
  const fires = left <= 0 || (id.mode === 'identity_file' && left < IDENTITY_WARNING_MS);
  if (fires) out.held.push({ key: 'identity', kind: 'identity_expiring', severity: left <= 0 ? 'critical' : 'warning', subject: left <= 0 ? 'The fleet identity has expired' : `The fleet identity expires at ${id.expiresAt}`, params: { expiresAt: id.expiresAt, mode: id.mode }, link: '/' });
  else out.clearKeys.push('identity');
}

export function evaluateRules(input: RuleInput): RuleOutput {
  const out: RuleOutput = { held: [], clearKeys: [], clearPrefixes: [] };
  for (const c of input.consoles) consoleRules(c, input.states.get(c.id), input, out);
  if (input.proxies) proxyRules(input.proxies, out);
  if (input.identity) identityRules(input.identity, input.now, out);
  if (input.accessCert) {
    const sev = certificateSeverity(input.accessCert.validTo, input.now);
    if (sev) out.held.push({ key: 'access:cert', kind: 'certificate_expiring', severity: sev, subject: `Certificate of the access proxy expires in ${daysLeft(input.accessCert.validTo, input.now)} day(s)`, params: { validTo: input.accessCert.validTo, daysLeft: daysLeft(input.accessCert.validTo, input.now), subject: input.accessCert.subject ?? null }, link: '/' });
    else out.clearKeys.push('access:cert');
  }
  return out;
}
