import { accessSignInConfigured } from '../auth/access-signin';
import { hasAuthenticator } from '../auth/operators';
import { hasPasskey } from '../auth/passkey-records';
import { listDelegations } from '../authz/rights';
import { escapeFilterValue, UAC, type Directory } from '../directory';
import { probeDcs } from '../directory/probe';
import { openString } from '../crypto/seal';
import { unavailable } from '../errors';
import { lapsDiagnostics } from '../laps/diagnostics';
import { bitlockerDiagnostics } from '../bitlocker/diagnostics';
import { overdueTemporaryMemberships } from '../approvals/temporary';
import type { ConsoleRuntime } from '../runtime';
import { caCertificates } from '../setup/connection';
import { readSettings, type InstanceSettings } from '../setup/settings';
import { check, type Check } from './catalog';
import { delegationExportCheck } from './delegation-export';

export { CHECKS, check, type Check, type CheckCode, type Severity, type Section } from './catalog';

// The console's diagnostics, complete: the directory connection (each DC checked now, fewer than
// two DCs, the CA's validity, the password service's pin), sign-in (step-up mode warnings,
// enrolment pending), the delegation export, and the LAPS section. Each check carries its code,
// severity and remedy text (./catalog.ts). Read-only: nothing is changed or stored.

export interface DiagnosticsReport {
  generatedAt: string;
  summary: { errors: number; warnings: number };
  checks: Check[];
  lapsScopes: Array<{ scope: string; sample?: string; checks: Check[] }>;
  /** the BitLocker account's rights per scope of a delegation holding computers.bitlocker.read (issue 33) */
  bitlockerScopes: Array<{ scope: string; sample?: string; checks: Check[] }>;
}

export interface DiagnosticsSources {
  now?: () => number;
}

const DAY = 86_400_000;
const MAX_NAMED = 20;

export async function runDiagnostics(rt: ConsoleRuntime, sources: DiagnosticsSources = {}): Promise<DiagnosticsReport> {
  const rec = await readSettings(rt.store);
  if (!rec) throw unavailable('not_configured');
  const s = rec.settings;
  const now = (sources.now ?? Date.now)();
  const dir = await rt.directory();

  const [directory, signin, accessClaims, delegation, laps, bitlocker] = await Promise.all([
    directoryChecks(rt, s, now),
    signinChecks(rt, s, dir),
    accessClaimChecks(rt, s, dir),
    delegationExportCheck(rt.store, s, dir),
    lapsDiagnostics(rt).catch(() => ({ checks: ['laps_service_unreachable'], scopes: [] })),
    bitlockerDiagnostics(rt).catch(() => ({ checks: ['bitlocker_service_unreachable'], scopes: [] })),
  ]);
  const lapsChecks = laps.checks.map((code) => check(code));
  // the pin belongs to the connection; the service reports it with its LAPS answer
  const pin = lapsChecks.filter((c) => c.code === 'trust_not_pinned');
  const overdue = await overdueTemporaryMemberships(rt);
  if (overdue.length) directory.push(check('temporary_membership_removal_failed', { count: overdue.length, memberships: overdue.slice(0, MAX_NAMED), ...(overdue.length > MAX_NAMED ? { truncated: true } : {}) }));
  const checks = [...directory, ...pin, ...signin, ...accessClaims, ...(delegation ? [check(delegation.code, delegation.details)] : []), ...lapsChecks.filter((c) => c.code !== 'trust_not_pinned'), ...bitlocker.checks.map((code) => check(code))];
  const lapsScopes = laps.scopes.map((sc) => ({ scope: sc.scope, ...(sc.sample ? { sample: sc.sample } : {}), checks: sc.checks.map((code) => check(code, { scope: sc.scope })) }));
  const bitlockerScopes = bitlocker.scopes.map((sc) => ({ scope: sc.scope, ...(sc.sample ? { sample: sc.sample } : {}), checks: sc.checks.map((code) => check(code, { scope: sc.scope })) }));
  const all = [...checks, ...lapsScopes.flatMap((x) => x.checks), ...bitlockerScopes.flatMap((x) => x.checks)];
  return {
    generatedAt: new Date(now).toISOString(),
    summary: { errors: all.filter((c) => c.severity === 'error').length, warnings: all.filter((c) => c.severity === 'warning').length },
    checks,
    lapsScopes,
    bitlockerScopes,
  };
}

/** Each configured DC now (handshake with the configured CA, read-account bind, domain), the DC count, the CA's dates. */
async function directoryChecks(rt: ConsoleRuntime, s: InstanceSettings, now: number): Promise<Check[]> {
  const out: Check[] = [];
  const creds = { user: s.readAccount.user, password: openString(await rt.masterKey(), s.readAccount.sealedPassword, 'tech-account:read') };
  const probes = await probeDcs(s.dcs, { caPem: s.caPem, creds, baseDn: s.baseDn, connectTimeoutMs: rt.config.Directory.ConnectTimeout * 1000 });
  for (const p of probes) out.push(p.ok ? check('dc_ok', { dc: p.name, url: p.url }) : check('dc_unreachable', { dc: p.name, url: p.url, problem: p.problem }));
  if (!probes.some((p) => p.ok)) out.push(check('no_dc_reachable'));
  if (s.dcs.length < 2) out.push(check('dc_fewer_than_two', { count: s.dcs.length }));
  let certs: ReturnType<typeof caCertificates> = [];
  try {
    certs = caCertificates(s.caPem);
  } catch {
    certs = [];
  }
  for (const c of certs) {
    const until = Date.parse(c.notAfter);
    if (until <= now) out.push(check('ca_expired', { subject: c.subject, fingerprint256: c.fingerprint256, notAfter: c.notAfter }));
    else if (until - now < 30 * DAY) out.push(check('ca_expiring', { subject: c.subject, fingerprint256: c.fingerprint256, notAfter: c.notAfter }));
  }
  return out;
}

/** Step-up mode warnings, and the operators holding a role who have not enrolled an authenticator (mode authenticator) or a passkey (mode passkey). */
async function signinChecks(rt: ConsoleRuntime, s: InstanceSettings, dir: Directory): Promise<Check[]> {
  if (s.stepUpMode === 'password') return [check('signin_password_only')];
  if (s.stepUpMode === 'none') return [check('step_up_disabled')];
  const operators = await operatorsHoldingARole(rt, s, dir);
  const pending: string[] = [];
  // mode authenticator: a code or a passkey; mode passkey: a passkey (issue 32)
  const enrolled = async (guid: string) => (await hasPasskey(rt.store, guid)) || (s.stepUpMode === 'authenticator' && (await hasAuthenticator(rt.store, guid)));
  for (const [guid, { name }] of operators) if (!(await enrolled(guid))) pending.push(name);
  if (!pending.length) return [];
  pending.sort((a, b) => a.localeCompare(b));
  return [check('signin_enrolment_pending', { count: pending.length, operators: pending.slice(0, MAX_NAMED), ...(pending.length > MAX_NAMED ? { truncated: true } : {}) })];
}

/**
 * Who a platform claim can become (issue 25): with access-platform sign-in on, the claims name the
 * directory account (Authentication:Access:AdAccountClaims). Warns when that reaches a Super
 * administrator (unless a mapped platform role is required for them) or an account holding a
 * console role that the directory protects (adminCount=1).
 */
async function accessClaimChecks(rt: ConsoleRuntime, s: InstanceSettings, dir: Directory): Promise<Check[]> {
  const access = rt.config.Authentication.Access;
  if (!accessSignInConfigured(rt.config)) return [];
  const out: Check[] = [];
  const named = (names: string[]) => {
    const sorted = [...new Set(names)].sort((a, b) => a.localeCompare(b));
    return { count: sorted.length, accounts: sorted.slice(0, MAX_NAMED), ...(sorted.length > MAX_NAMED ? { truncated: true } : {}), claims: access.AdAccountClaims };
  };
  const supers: string[] = [];
  for (const guid of s.superAdministrators) {
    const dn = await dir.dnOfGuid(guid).catch(() => undefined);
    const facts = dn ? await dir.principalFacts(dn).catch(() => undefined) : undefined;
    supers.push(facts?.samAccountName ?? guid);
  }
  if (supers.length && !access.SuperAdministratorsRequireRoleMapping) out.push(check('access_claim_reaches_super_administrator', named(supers)));
  const protectedOnes = [...(await operatorsHoldingARole(rt, s, dir, { adminCount: true })).values()].filter((o) => o.adminCount).map((o) => o.name);
  if (protectedOnes.length) out.push(check('access_claim_reaches_protected_account', named(protectedOnes)));
  return out;
}

/**
 * Directory accounts that hold a console role: the Super administrators, the users a delegation
 * names, the enabled users in a delegation's groups (nested too). GUID → name, and with
 * `adminCount` whether the directory protects the account (adminCount=1).
 */
async function operatorsHoldingARole(rt: ConsoleRuntime, s: InstanceSettings, dir: Directory, opts: { adminCount?: boolean } = {}): Promise<Map<string, { name: string; adminCount?: boolean }>> {
  const out = new Map<string, { name: string; adminCount?: boolean }>();
  const add = (guid: string, name: string, adminCount?: boolean) => out.set(guid.toLowerCase(), { name, ...(adminCount ? { adminCount } : {}) });
  const factsOf = async (guid: string) => {
    const dn = await dir.dnOfGuid(guid).catch(() => undefined);
    return dn ? await dir.principalFacts(dn).catch(() => undefined) : undefined;
  };
  for (const guid of s.superAdministrators) add(guid, guid);
  const delegations = await listDelegations(rt.store);
  for (const d of delegations) {
    for (const a of d.assignees) {
      if (a.kind === 'user') {
        const facts = opts.adminCount ? await factsOf(a.guid) : undefined;
        add(a.guid, a.name, facts ? facts.adminCount === 1 : undefined);
        continue;
      }
      const dn = await dir.dnOfGuid(a.guid);
      if (!dn) continue;
      const members = await dir.search({
        base: s.baseDn,
        filter: `(&(objectCategory=person)(objectClass=user)(memberOf:1.2.840.113556.1.4.1941:=${escapeFilterValue(dn)}))`,
        attributes: ['objectGUID', 'sAMAccountName', 'userAccountControl', 'adminCount'],
        max: rt.config.Directory.MaxResults,
      });
      for (const m of members.entries) {
        if ((m.userAccountControl ?? 0) & UAC.ACCOUNTDISABLE) continue;
        add(m.guid, String([m.attributes.sAMAccountName].flat()[0] ?? m.guid), String([m.attributes.adminCount].flat()[0] ?? '0') === '1');
      }
    }
  }
  // Super administrators by name where the directory knows them
  for (const guid of s.superAdministrators) {
    const facts = await factsOf(guid);
    if (facts) add(guid, facts.samAccountName, facts.adminCount === 1);
  }
  return out;
}
