import type { ConsoleRuntime } from '../runtime';
import { callPasswordService } from '../password-service/console-side/client';
import { listDelegations, listRoles } from '../authz/rights';
import { ApiError } from '../errors';

// The LAPS section of the diagnostics (console spec, Diagnostics checks). Console-side checks
// with the read account; the LAPS account's checks by the password service (names only).

export interface LapsDiagnostics {
  checks: string[];
  scopes: Array<{ scope: string; sample?: string; checks: string[] }>;
}

const LAPS_PERMISSIONS = ['computers.laps.read', 'computers.laps.expire'];

export async function lapsDiagnostics(rt: ConsoleRuntime): Promise<LapsDiagnostics> {
  const settings = await rt.settings();
  if (!settings) throw new ApiError(503, 'not_configured');
  const checks: string[] = [];
  const dir = await rt.directory();

  const names = await dir.schemaAttributes(['msLAPS-Password', 'ms-Mcs-AdmPwd']);
  checks.push(names.includes('mslaps-password') ? 'laps_schema_windows' : names.includes('ms-mcs-admpwd') ? 'laps_schema_legacy_only' : 'laps_schema_missing');

  if (!rt.config.Helpdesk.LapsIdentityUpn) checks.push('laps_identity_upn_missing');

  // the scopes of delegations holding a LAPS action (the Super administrator's: every managed OU)
  const [roles, delegations] = await Promise.all([listRoles(rt.store), listDelegations(rt.store)]);
  const lapsRoles = new Set(roles.filter((r) => r.permissions.some((p) => LAPS_PERMISSIONS.includes(p))).map((r) => r.id));
  const lapsDelegations = delegations.filter((d) => lapsRoles.has(d.roleId));
  if (!rt.config.Helpdesk.Enabled) {
    if (lapsDelegations.length) checks.push('laps_needs_password_service');
    return { checks, scopes: [] };
  }
  const scopeGuids = new Map<string, string>();
  for (const d of lapsDelegations) for (const o of d.scope) scopeGuids.set(o.guid, o.dn);
  if (scopeGuids.size === 0) for (const o of settings.managedOus) scopeGuids.set(o.guid, o.dn);
  const scopeDns = (await Promise.all([...scopeGuids].map(async ([guid, dn]) => (await dir.dnOfGuid(guid)) ?? dn))).filter((d, i, a) => a.indexOf(d) === i);

  let res;
  try {
    res = await callPasswordService({ op: 'laps.diagnose', scopeDns });
  } catch {
    checks.push('laps_service_unreachable');
    return { checks, scopes: [] };
  }
  if (!res.ok) {
    checks.push(res.code === 'laps_not_configured' ? 'laps_identity_not_configured' : 'laps_service_unreachable');
    return { checks, scopes: [] };
  }
  // a CA change the password service has not been re-pinned to refuses every LAPS operation
  if (res.trusted === false) checks.push('trust_not_pinned');
  checks.push(res.identity ?? 'laps_identity_not_configured');
  return { checks, scopes: res.scopes ?? [] };
}
