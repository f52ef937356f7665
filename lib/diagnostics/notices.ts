import type { OperatorRights } from '../authz/rights';
import type { InstanceSettings } from '../setup/settings';

// What administrators are told where they look first (the console's frame, above every screen),
// not only in the diagnostics list (issue 31): read from the settings alone, so the signed-in
// operator's answer (GET /api/auth/me) carries it at no cost. The same rules as diagnostics' checks.

export interface AdminNotice {
  /** a diagnostics check's code (lib/diagnostics/catalog.ts) */
  code: 'dc_fewer_than_two';
  severity: 'warning';
  count: number;
}

/** Administrators are those who may read diagnostics and change the directory settings (`settings.manage`). */
export function adminNotices(rights: Pick<OperatorRights, 'permissions'>, settings: Pick<InstanceSettings, 'dcs'> | undefined): AdminNotice[] {
  if (!settings || !rights.permissions.has('settings.manage')) return [];
  const out: AdminNotice[] = [];
  // one DC (or none) is no failover: the console stops with it (diagnostics dc_fewer_than_two)
  if (settings.dcs.length < 2) out.push({ code: 'dc_fewer_than_two', severity: 'warning', count: settings.dcs.length });
  return out;
}
