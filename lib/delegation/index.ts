import { listDelegations, listRoles } from '../authz/rights';
import type { Directory } from '../directory';
import { ApiError } from '../errors';
import type { InstanceSettings } from '../setup/settings';
import type { Store } from '../store';
import { bitlockerRightsModel, lapsRightsModel, writeRightsModel, type RightsModel } from './model';
import { modelDigest, renderDelegationScript, rightSddl, scriptCommand } from './script';
import { delegationExportStatus, type DelegationExportStatus } from './status';

export { writeRightsModel, lapsRightsModel, assertLapsRight, bitlockerRightsModel, assertBitlockerRight, WRITE_RIGHTS, type RightsModel, type ModelRight } from './model';
export { renderDelegationScript, rightSddl, modelDigest, embeddedModelText, modelDigestOf, scriptCommand } from './script';
export { delegationExportStatus, resolveRightsModel, daclHolds, type DelegationExportStatus } from './status';

// The delegation export (settings.manage): the write account's and the LAPS account's rights
// models from the current roles, delegations and schema, their PowerShell scripts, and whether
// the directory holds them now.

export interface DelegationExport {
  kind: RightsModel['kind'];
  identity: string;
  ous: Array<{ dn: string; guid: string; permissions: string[]; rights: string[] }>;
  script: string;
  /** SHA-256 of the model the script embeds: the script's mandatory -ModelDigest (it refuses any other model) */
  modelDigest: string;
  /** the command line to run, with that digest */
  command: string;
  status?: DelegationExportStatus;
}

/**
 * The models as the instance's settings, roles, delegations and schema make them now; the
 * BitLocker account's (issue 33) when its UPN is known to the console (Helpdesk:BitlockerIdentityUpn).
 */
export async function currentRightsModels(
  store: Store,
  settings: InstanceSettings,
  dir: Directory,
  opts: { bitlockerUpn?: string } = {},
): Promise<{ write: RightsModel; laps?: RightsModel; bitlocker?: RightsModel }> {
  const [roles, delegations, schema] = await Promise.all([listRoles(store), listDelegations(store), dir.schemaAttributes(['ms-Mcs-AdmPwd', 'msLAPS-Password'])]);
  const write = writeRightsModel(settings, roles, delegations);
  const bitlocker = opts.bitlockerUpn
    ? bitlockerRightsModel(settings, roles, delegations, { identity: opts.bitlockerUpn, otherAccounts: [settings.readAccount.user, settings.writeAccount.user, ...(settings.lapsIdentityUpn ? [settings.lapsIdentityUpn] : [])] })
    : undefined;
  if (!settings.lapsIdentityUpn) return { write, ...(bitlocker ? { bitlocker } : {}) };
  const laps = lapsRightsModel(settings, roles, delegations, { legacySchema: schema.includes('ms-mcs-admpwd'), otherAccounts: [settings.readAccount.user, settings.writeAccount.user] });
  return { write, laps, ...(bitlocker ? { bitlocker } : {}) };
}

/**
 * The export, one per account: the model (rights in SDDL with names), the script, and the status
 * of the directory against it (`upToDate`, the missing rights). The write script refuses the
 * LAPS account; the LAPS script refuses the read and write accounts.
 */
export async function exportDelegation(store: Store, settings: InstanceSettings | undefined, dir: Directory, opts: { now?: Date; version?: string; bitlockerUpn?: string } = {}): Promise<DelegationExport[]> {
  if (!settings) throw new ApiError(503, 'not_configured');
  const models = await currentRightsModels(store, settings, dir, { bitlockerUpn: opts.bitlockerUpn });
  const generatedAt = (opts.now ?? new Date()).toISOString();
  const out: DelegationExport[] = [];
  for (const model of [models.write, models.laps, models.bitlocker].filter((m): m is RightsModel => !!m)) {
    const refusedIdentities =
      model.kind === 'write'
        ? [settings.lapsIdentityUpn, settings.readAccount.user].filter((x): x is string => !!x)
        : model.kind === 'laps'
          ? [settings.readAccount.user, settings.writeAccount.user]
          : [settings.readAccount.user, settings.writeAccount.user, settings.lapsIdentityUpn].filter((x): x is string => !!x);
    const digest = modelDigest(model, refusedIdentities);
    out.push({
      kind: model.kind,
      identity: model.identity,
      ous: model.ous.map((o) => ({ dn: o.ou.dn, guid: o.ou.guid, permissions: o.permissions, rights: o.rights.map((r) => rightSddl(r, model.identity)) })),
      script: renderDelegationScript(model, { generatedAt, refusedIdentities, version: opts.version }),
      modelDigest: digest,
      command: scriptCommand(model, digest),
      status: await delegationExportStatus(dir, model).catch((e) => {
        if (e instanceof ApiError) return undefined; // an account or schema name this forest lacks: no status
        throw e;
      }),
    });
  }
  return out;
}

/** Is the write account's delegation export out of date (a right of the current model missing from the directory)? For diagnostics. */
export async function writeDelegationOutOfDate(store: Store, settings: InstanceSettings, dir: Directory): Promise<DelegationExportStatus> {
  const { write } = await currentRightsModels(store, settings, dir);
  return delegationExportStatus(dir, write);
}
