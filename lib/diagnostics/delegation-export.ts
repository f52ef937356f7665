import { sha256Hex } from '../crypto/seal';
import { listDelegations, listRoles } from '../authz/rights';
import type { Permission } from '../authz/permissions';
import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';

// The seam between the delegation export (issue 13 builds it in lib/) and the diagnostics
// (Versioning 4: "export the delegation again when diagnostics report it out of date").
// The export records what it exported with `recordDelegationExport`; the diagnostics compare
// it with the model the delegations need now. Until the export exists nothing is recorded, and
// the check reports `delegation_export_missing` as soon as a delegation needs directory rights.

export interface DelegationExportSource {
  /** A fingerprint of the rights model the current delegations (and this version's actions) need; undefined when none needs any. */
  currentModel(): Promise<string | undefined>;
  /** What the last export recorded, if any. */
  lastExport(): Promise<{ model: string; exportedAt: string } | undefined>;
}

// Read-only permissions need no directory right of a technical account.
const NEEDS_NO_RIGHT: ReadonlySet<Permission> = new Set<Permission>(['computers.read', 'users.read', 'groups.read', 'audit.read', 'settings.manage', 'vip.manage']);

/**
 * The model version: bump it when a release adds a delegable action or changes the rights an
 * action needs, so that every instance reports its export out of date after the upgrade.
 */
export const DELEGATION_MODEL_VERSION = 1;

/** The default rights model: per scope OU (GUID), the actions granted there that need a directory right. */
export async function delegationRightsModel(store: Store): Promise<string | undefined> {
  const [roles, delegations] = await Promise.all([listRoles(store), listDelegations(store)]);
  const perms = new Map(roles.map((r) => [r.id, r.permissions.filter((p) => !NEEDS_NO_RIGHT.has(p))]));
  const byOu = new Map<string, Set<string>>();
  for (const d of delegations) {
    const actions = perms.get(d.roleId) ?? [];
    if (!actions.length) continue;
    for (const ou of d.scope) {
      const set = byOu.get(ou.guid.toLowerCase()) ?? new Set<string>();
      for (const a of actions) set.add(a);
      byOu.set(ou.guid.toLowerCase(), set);
    }
  }
  if (!byOu.size) return undefined;
  const model = [...byOu].sort(([a], [b]) => a.localeCompare(b)).map(([ou, actions]) => [ou, [...actions].sort()]);
  return sha256Hex(JSON.stringify({ v: DELEGATION_MODEL_VERSION, model }));
}

const KEY = { pk: 'INSTANCE', sk: 'DELEGATION_EXPORT' };

/** Called by the delegation export once a script is produced: the model it covers. */
export async function recordDelegationExport(store: Store, model: string, exportedAt = new Date().toISOString()): Promise<void> {
  await putRecord(store, KEY.pk, KEY.sk, { model, exportedAt });
}

export const storedDelegationExport = (store: Store): DelegationExportSource => ({
  currentModel: () => delegationRightsModel(store),
  lastExport: async () => (await getRecord<{ model: string; exportedAt: string }>(store, KEY.pk, KEY.sk))?.data,
});

/** The check's verdict. */
export async function delegationExportCheck(source: DelegationExportSource): Promise<{ code: 'delegation_export_current' | 'delegation_export_missing' | 'delegation_export_out_of_date'; details?: Record<string, unknown> } | undefined> {
  const [model, last] = await Promise.all([source.currentModel(), source.lastExport()]);
  if (!model) return undefined; // no delegation needs a directory right: nothing to export
  if (!last) return { code: 'delegation_export_missing' };
  return last.model === model ? { code: 'delegation_export_current', details: { exportedAt: last.exportedAt } } : { code: 'delegation_export_out_of_date', details: { exportedAt: last.exportedAt } };
}
