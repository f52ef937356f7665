import { currentRightsModels, delegationExportStatus, type DelegationExportStatus } from '../delegation';
import type { Directory } from '../directory';
import { ApiError } from '../errors';
import type { InstanceSettings } from '../setup/settings';
import type { Store } from '../store';

// "Export the delegation again when diagnostics report it out of date" (console spec, Versioning
// 4): the rights models the current roles and delegations need (lib/delegation, the export's own
// models: a release that adds delegable actions changes them) compared with the ACEs the
// directory holds now. Read with the read account; nothing is recorded.

export interface DelegationExportVerdict {
  code: 'delegation_export_current' | 'delegation_export_out_of_date';
  details: Record<string, unknown>;
}

const MAX_LISTED = 20;

export async function delegationExportCheck(store: Store, settings: InstanceSettings, dir: Directory): Promise<DelegationExportVerdict | undefined> {
  const models = await currentRightsModels(store, settings, dir);
  const statuses: DelegationExportStatus[] = [];
  for (const model of [models.write, models.laps]) {
    if (!model || !model.ous.length) continue;
    const status = await delegationExportStatus(dir, model).catch((e) => {
      if (e instanceof ApiError) return undefined; // an account or schema name this forest lacks: no verdict for it
      throw e;
    });
    if (status) statuses.push(status);
  }
  if (!statuses.length) return undefined; // no delegation needs a directory right
  const missing = statuses.flatMap((s) => s.missing.map((m) => ({ kind: s.kind, identity: s.identity, ...m })));
  const exports = statuses.map((s) => ({ kind: s.kind, identity: s.identity, upToDate: s.upToDate }));
  if (!missing.length) return { code: 'delegation_export_current', details: { exports } };
  return { code: 'delegation_export_out_of_date', details: { exports, missingCount: missing.length, missing: missing.slice(0, MAX_LISTED) } };
}
