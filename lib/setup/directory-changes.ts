import type { AuditActor } from '../audit';
import { listDelegations, listRoles } from '../authz/rights';
import { openString, seal } from '../crypto/seal';
import { isAtOrBelow } from '../directory/dn';
import { discoverDcs, discoveryDnsServers, DiscoveryFailed, type DiscoveredDc } from '../directory/discovery';
import { probeDcs, type DcProbe } from '../directory/probe';
import type { DcEndpoint, DirectoryCredentials } from '../directory';
import { ApiError, badRequest, conflict, unavailable } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { caCertificates, caFingerprints, CaPemError, type CaCertificate } from './connection';
import { readSettings, writeSettings, type InstanceSettings, type ManagedOu } from './settings';

// Directory connection changes (console spec, Operating rules: settings.manage plus step-up,
// audited): every change is tested against the directory with the new settings before anything
// is stored, then saved in one conditional write of the settings item (the console follows at
// once: its directory is keyed on the settings version; the password service within 3 s), and
// audited `settings.directory.*` with old and new values (fingerprints and UPNs only). Every
// refusal is audited under the same event with the refusal's code. Domain and NetBIOS names
// never change here.

export interface ChangeContext {
  rt: ConsoleRuntime;
  actor: AuditActor;
  correlationId: string;
}

export const DIRECTORY_EVENTS = {
  dcs: 'settings.directory.dcs',
  ca: 'settings.directory.ca',
  upnSuffixes: 'settings.directory.upn_suffixes',
  accountPassword: 'settings.directory.account_password',
  managedOus: 'settings.directory.managed_ous',
} as const;
type DirectoryEvent = (typeof DIRECTORY_EVENTS)[keyof typeof DIRECTORY_EVENTS];

type Current = { settings: InstanceSettings; version: number };

async function current(rt: ConsoleRuntime): Promise<Current> {
  const rec = await readSettings(rt.store);
  if (!rec) throw unavailable('not_configured');
  return rec;
}

const SEAL_AAD = { read: 'tech-account:read', write: 'tech-account:write' } as const;

async function accountCreds(rt: ConsoleRuntime, s: InstanceSettings, which: 'read' | 'write'): Promise<DirectoryCredentials> {
  const acc = which === 'read' ? s.readAccount : s.writeAccount;
  return { user: acc.user, password: openString(await rt.masterKey(), acc.sealedPassword, SEAL_AAD[which]) };
}

const probeOptions = (rt: ConsoleRuntime, s: InstanceSettings, caPem: string, creds: DirectoryCredentials) => ({
  caPem,
  creds,
  baseDn: s.baseDn,
  connectTimeoutMs: rt.config.Directory.ConnectTimeout * 1000,
});

/** Audit the refusal under the change's own event, then throw it. */
async function refuse(ctx: ChangeContext, event: DirectoryEvent, error: ApiError, details?: Record<string, unknown>): Promise<never> {
  await ctx.rt.audit.append({ event, outcome: 'denied', reason: error.code, actor: ctx.actor, correlationId: ctx.correlationId, ...(details ? { details } : {}) });
  throw error;
}

/** Run a change's checks; an ApiError they throw (an OU that does not resolve...) is audited as its refusal. */
async function checked<T>(ctx: ChangeContext, event: DirectoryEvent, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) return refuse(ctx, event, e, Object.keys(e.details).length ? e.details : undefined);
    throw e;
  }
}

/** One conditional write of the whole settings item, then the success row. */
async function save(ctx: ChangeContext, event: DirectoryEvent, cur: Current, next: InstanceSettings, details: Record<string, unknown>) {
  if (!(await writeSettings(ctx.rt.store, next, cur.version))) {
    return refuse(ctx, event, conflict('settings_changed_concurrently'));
  }
  await ctx.rt.audit.append({ event, outcome: 'success', actor: ctx.actor, correlationId: ctx.correlationId, details });
}

const sameUrl = (a: string, b: string) => a.trim().toLowerCase().replace(/\/$/, '') === b.trim().toLowerCase().replace(/\/$/, '');
const dcReport = (p: DcProbe, added: boolean) => ({ name: p.name, url: p.url, ok: p.ok, ...(p.problem ? { problem: p.problem } : {}), added });

// ---- domain controllers ----------------------------------------------------------------------

/**
 * Add, remove, reorder DCs (order = failover order). Each added DC: TLS handshake with the
 * configured CA and its host name, a read-account bind, the domain's naming context. A DC already
 * configured that does not answer is kept and reported. At least one DC of the new list must work.
 */
export async function changeDcs(ctx: ChangeContext, dcs: DcEndpoint[]) {
  const event = DIRECTORY_EVENTS.dcs;
  const cur = await current(ctx.rt);
  const s = cur.settings;
  const urls = dcs.map((d) => d.url.trim().toLowerCase());
  const names = dcs.map((d) => d.name.trim().toLowerCase());
  if (new Set(urls).size !== urls.length || new Set(names).size !== names.length) return refuse(ctx, event, badRequest('dc_duplicate'));
  const probes = await probeDcs(dcs, probeOptions(ctx.rt, s, s.caPem, await accountCreds(ctx.rt, s, 'read')));
  const isAdded = (dc: DcEndpoint) => !s.dcs.some((o) => sameUrl(o.url, dc.url));
  const report = probes.map((p, i) => dcReport(p, isAdded(dcs[i])));
  if (report.some((r) => r.added && !r.ok)) return refuse(ctx, event, badRequest('dc_check_failed', { dcs: report }), { dcs: report });
  if (!report.some((r) => r.ok)) return refuse(ctx, event, badRequest('no_dc_reachable', { dcs: report }), { dcs: report });
  const next: InstanceSettings = { ...s, dcs: dcs.map((d) => ({ name: d.name.trim(), url: d.url.trim() })) };
  const old = s.dcs.map((d) => d.url);
  const changed = JSON.stringify(s.dcs) !== JSON.stringify(next.dcs);
  if (changed) {
    await save(ctx, event, cur, next, {
      old,
      new: next.dcs.map((d) => d.url),
      added: report.filter((r) => r.added).map((r) => r.url),
      removed: old.filter((u) => !next.dcs.some((d) => sameUrl(d.url, u))),
      silent: report.filter((r) => !r.ok).map((r) => r.url),
    });
  }
  return { changed, dcs: report, ...(next.dcs.length < 2 ? { warnings: ['dc_fewer_than_two'] } : {}) };
}

// ---- certificate authority -------------------------------------------------------------------

const caView = (c: CaCertificate) => ({ subject: c.subject, fingerprint256: c.fingerprint256, notBefore: c.notBefore, notAfter: c.notAfter });

/**
 * Replace the CA the DCs' certificates must chain to. Every configured DC must present a
 * certificate chaining to the new PEM and accept the read account's bind. A PEM with a private key
 * is refused (by the route's schema); during a migration give a PEM holding both CAs.
 */
export async function changeCa(ctx: ChangeContext, caPem: string) {
  const event = DIRECTORY_EVENTS.ca;
  const cur = await current(ctx.rt);
  const s = cur.settings;
  let certs: CaCertificate[];
  try {
    certs = caCertificates(caPem);
  } catch (e) {
    if (e instanceof CaPemError) return refuse(ctx, event, badRequest(e.code));
    throw e;
  }
  if (!certs.length) return refuse(ctx, event, badRequest('ca_unreadable'));
  if (certs.some((c) => !c.isCa)) return refuse(ctx, event, badRequest('ca_not_a_ca', { certificates: certs.map(caView) }));
  const probes = await probeDcs(s.dcs, probeOptions(ctx.rt, s, caPem, await accountCreds(ctx.rt, s, 'read')));
  const report = probes.map((p) => dcReport(p, false));
  // every configured DC, a silent one included: its certificate cannot be shown to chain
  if (report.some((r) => !r.ok)) return refuse(ctx, event, badRequest('ca_check_failed', { dcs: report }), { dcs: report, new: certs.map((c) => c.fingerprint256) });
  const old = caFingerprints(s.caPem);
  const changed = s.caPem.trim() !== caPem.trim();
  if (changed) await save(ctx, event, cur, { ...s, caPem }, { old, new: certs.map((c) => c.fingerprint256) });
  // the password service pinned the CA it trusts (docs/decisions.md, Pinning): it refuses until re-pinned
  return { changed, certificates: certs.map(caView), dcs: report, ...(changed ? { passwordService: 'repin_required' } : {}) };
}

// ---- UPN suffixes ----------------------------------------------------------------------------

/**
 * Where each UPN suffix is used. Onboarding templates are the spec's users of a suffix; the console
 * has none yet, so nothing is in use: the seam the templates plug into.
 */
export type UpnSuffixUsage = (rt: ConsoleRuntime, suffix: string) => Promise<string[]>;
export const noUpnSuffixUsage: UpnSuffixUsage = async () => [];

export const upnSuffixesOf = (s: InstanceSettings) => s.upnSuffixes ?? [s.domain];

/** Syntax only; removing a suffix in use needs `confirm` after the impact list (409 `confirmation_required`). */
export async function changeUpnSuffixes(ctx: ChangeContext, suffixes: string[], confirm: boolean, usage: UpnSuffixUsage = noUpnSuffixUsage) {
  const event = DIRECTORY_EVENTS.upnSuffixes;
  const cur = await current(ctx.rt);
  const s = cur.settings;
  const next = [...new Set(suffixes.map((x) => x.trim().toLowerCase()))];
  const old = upnSuffixesOf(s);
  const removed = old.filter((x) => !next.includes(x));
  const impact = (await Promise.all(removed.map(async (suffix) => ({ suffix, usedBy: await usage(ctx.rt, suffix) })))).filter((i) => i.usedBy.length);
  if (impact.length && !confirm) return refuse(ctx, event, conflict('confirmation_required', { impact }), { impact });
  const changed = JSON.stringify(old) !== JSON.stringify(next);
  if (changed) await save(ctx, event, cur, { ...s, upnSuffixes: next }, { old, new: next, ...(impact.length ? { impact } : {}) });
  return { changed, upnSuffixes: next };
}

// ---- technical-account passwords -------------------------------------------------------------

export const TECHNICAL_ACCOUNTS = ['read', 'write', 'reset', 'laps'] as const;
export type TechnicalAccount = (typeof TECHNICAL_ACCOUNTS)[number];

/**
 * A new password of the read or write account: bound on every DC (refused if any DC that answers
 * rejects it), stored sealed under the master key, never shown again. The reset and LAPS accounts
 * are the password service's, file-provided: they change on its host (409 `account_file_provided`).
 */
export async function changeAccountPassword(ctx: ChangeContext, account: TechnicalAccount, password: string) {
  const event = DIRECTORY_EVENTS.accountPassword;
  if (account === 'reset' || account === 'laps') return refuse(ctx, event, conflict('account_file_provided', { account }), { account });
  const cur = await current(ctx.rt);
  const s = cur.settings;
  const user = (account === 'read' ? s.readAccount : s.writeAccount).user;
  const probes = await probeDcs(s.dcs, probeOptions(ctx.rt, s, s.caPem, { user, password }));
  const report = probes.map((p) => dcReport(p, false));
  const details = { account, user, dcs: report };
  if (report.some((r) => r.problem === 'bind_refused')) return refuse(ctx, event, badRequest('account_bind_refused', { account, dcs: report }), details);
  if (!report.some((r) => r.ok)) return refuse(ctx, event, badRequest('no_dc_reachable', { account, dcs: report }), details);
  const sealed = { user, sealedPassword: seal(await ctx.rt.masterKey(), password, SEAL_AAD[account]) };
  const next: InstanceSettings = account === 'read' ? { ...s, readAccount: sealed } : { ...s, writeAccount: sealed };
  await save(ctx, event, cur, next, { account, user, dcs: report.map((r) => ({ url: r.url, ok: r.ok })) });
  return { account, user, dcs: report };
}

// ---- managed OUs -----------------------------------------------------------------------------

const lower = (x: string) => x.toLowerCase();

/**
 * Replace the managed OUs: each (DN or GUID) resolved, an OU strictly below the domain root, not
 * inside a Tier 0/1 OU. Removing an OU some delegation's scope lies in needs `confirm` after the
 * impact list (409 `confirmation_required`); those scopes then reach nothing there.
 */
export async function changeManagedOus(ctx: ChangeContext, refs: string[], confirm: boolean) {
  const event = DIRECTORY_EVENTS.managedOus;
  const cur = await current(ctx.rt);
  const s = cur.settings;
  const dir = await ctx.rt.directory();
  const currentDn = async (o: ManagedOu) => (await dir.dnOfGuid(o.guid).catch(() => undefined)) ?? o.dn;
  const next = await checked(ctx, event, async () => {
    const tiers = await Promise.all(s.tierOus.map(currentDn));
    const out = new Map<string, ManagedOu>();
    for (const ref of refs) {
      const ou = await dir.resolveOu(ref.trim());
      if (tiers.some((t) => isAtOrBelow(ou.dn, t))) throw badRequest('ou_in_tier', { ou: ou.dn });
      if (!out.has(lower(ou.guid))) out.set(lower(ou.guid), ou);
    }
    return [...out.values()];
  });
  const kept = new Set(next.map((o) => lower(o.guid)));
  const removed = s.managedOus.filter((o) => !kept.has(lower(o.guid)));
  const removedDns = await Promise.all(removed.map(currentDn));
  const impact = await managedOuImpact(ctx.rt, removedDns, next.map((o) => o.dn), currentDn);
  if (impact.length && !confirm) return refuse(ctx, event, conflict('confirmation_required', { impact }), { removed: removedDns, impact });
  const oldDns = await Promise.all(s.managedOus.map(currentDn));
  const changed = JSON.stringify(s.managedOus.map((o) => lower(o.guid))) !== JSON.stringify(next.map((o) => lower(o.guid)));
  if (changed) await save(ctx, event, cur, { ...s, managedOus: next }, { old: oldDns, new: next.map((o) => o.dn), ...(impact.length ? { impact } : {}) });
  return { changed, managedOus: next, ...(impact.length ? { impact } : {}) };
}

/** Delegations with scope OUs inside a removed managed OU and inside no remaining one. */
async function managedOuImpact(rt: ConsoleRuntime, removedDns: string[], remainingDns: string[], currentDn: (o: ManagedOu) => Promise<string>) {
  if (!removedDns.length) return [];
  const [delegations, roles] = await Promise.all([listDelegations(rt.store), listRoles(rt.store)]);
  const roleName = new Map(roles.map((r) => [r.id, r.name]));
  const out: Array<{ delegation: string; role: string; ous: string[] }> = [];
  for (const d of delegations) {
    const dns = await Promise.all(d.scope.map(currentDn));
    const lost = dns.filter((dn) => removedDns.some((r) => isAtOrBelow(dn, r)) && !remainingDns.some((m) => isAtOrBelow(dn, m)));
    if (lost.length) out.push({ delegation: d.id, role: roleName.get(d.roleId) ?? d.roleId, ous: lost });
  }
  return out;
}

// ---- discovery and the view ------------------------------------------------------------------

/** DCs the domain's DNS names (`_ldap._tcp.dc._msdcs.<domain>`), each marked when already configured; nothing is saved. */
export async function proposeDcs(rt: ConsoleRuntime) {
  const { settings: s } = await current(rt);
  const servers = await discoveryDnsServers(rt.config.Directory.DiscoveryDnsServer, s.dcs.map((d) => d.url));
  let found;
  try {
    found = await discoverDcs(s.domain, servers, { timeoutMs: rt.config.Directory.ConnectTimeout * 1000 });
  } catch (e) {
    if (e instanceof DiscoveryFailed) throw new ApiError(502, 'discovery_failed', { reason: e.reason, dnsServers: servers });
    throw e;
  }
  const hostOf = (u: string) => new URL(u).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const configuredAs = (d: DiscoveredDc) => s.dcs.find((c) => hostOf(c.url) === d.host || d.addresses.includes(hostOf(c.url)));
  return {
    query: found.query,
    dnsServers: found.dnsServers,
    proposals: found.dcs.map((d) => {
      const c = configuredAs(d);
      return { ...d, configured: !!c, ...(c ? { configuredAs: c.url } : {}) };
    }),
    saved: false,
  };
}

/** The directory connection as an administrator sees it (no password, ever). */
export async function directoryConnectionView(rt: ConsoleRuntime) {
  const { settings: s } = await current(rt);
  let ca: ReturnType<typeof caView>[] = [];
  try {
    ca = caCertificates(s.caPem).map(caView);
  } catch {
    ca = [];
  }
  return {
    domain: s.domain,
    baseDn: s.baseDn,
    dcs: s.dcs,
    ca,
    upnSuffixes: upnSuffixesOf(s),
    accounts: {
      read: { user: s.readAccount.user },
      write: { user: s.writeAccount.user },
      // the password service's own accounts: shown read-only, changed on its host
      laps: { user: s.lapsIdentityUpn ?? rt.config.Helpdesk.LapsIdentityUpn ?? null, fileProvided: true },
      reset: { fileProvided: true },
    },
    managedOus: s.managedOus,
    tierOus: s.tierOus,
  };
}
