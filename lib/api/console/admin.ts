import { z } from 'zod';
import { channelAnswer } from '../channel';
import { APPROVABLE_ACTIONS } from '../../approvals/settings';
import { PERMISSIONS } from '../../authz/permissions';

// The console's administration answers (settings.manage): roles, delegations, operators, the
// protection list, Super administrators, the baseline, approval settings and notification
// channels, the delegation export.

const permission = z.enum(PERMISSIONS);
const approvable = z.enum(APPROVABLE_ACTIONS);
const count = z.union([z.literal(1), z.literal(2)]);

export const role = z
  .object({ id: z.string(), name: z.string(), permissions: z.array(permission), builtIn: z.boolean(), readOnly: z.boolean(), version: z.number().optional() })
  .meta({ id: 'Role', description: 'A role: the built-in Super administrator (read-only) or a custom one; `version` for the next save' });
/** The roles list also names the delegations that use each custom role (a role in use cannot be deleted). */
export const roles = z.object({ roles: z.array(role.extend({ delegations: z.array(z.string()).optional() })) });
export const roleSaved = z.object({ role: role.required({ version: true }) });

/** An OU by its DN now and its objectGUID. */
export const ou = z.object({ dn: z.string(), guid: z.string() }).meta({ id: 'ManagedOu' });
export const delegation = z
  .object({
    id: z.string(),
    roleId: z.string(),
    roleName: z.string().nullable(),
    version: z.number(),
    scope: z.array(ou),
    assignees: z.array(z.object({ kind: z.enum(['user', 'group']), guid: z.string(), sid: z.string(), name: z.string() })),
  })
  .meta({ id: 'Delegation' });
export const delegations = z.object({ delegations: z.array(delegation) });
export const delegationSaved = z.object({ delegation });

export const operators = z.object({
  operators: z.array(
    z
      .object({
        id: z.string(),
        username: z.string(),
        displayName: z.string().nullable(),
        provider: z.enum(['ad', 'access']).nullable(),
        subject: z.string().nullable(),
        lastSignInAt: z.string().nullable(),
        authenticator: z.string(),
        /** how many passkeys the operator holds (issue 32) */
        passkeys: z.number(),
        directoryAccount: z.string(),
        roles: z.array(z.string()),
      })
      .meta({ id: 'OperatorRecord' }),
  ),
});
export const operatorDeleted = z.object({
  deleted: z.object({ id: z.string(), name: z.string(), provider: z.enum(['ad', 'access']).nullable(), subject: z.string().nullable(), roles: z.array(z.string()) }),
  sessionsEnded: z.number(),
});
export const totpReset = z.object({ operator: z.object({ id: z.string(), username: z.string() }), sessionsEnded: z.number() });
export const passkeysReset = z.object({ operator: z.object({ id: z.string(), username: z.string() }), removed: z.number(), sessionsEnded: z.number() });

export const protectedGroups = z.object({ groups: z.array(z.object({ id: z.string(), dn: z.string(), sid: z.string(), found: z.boolean() })) });
export const protectedGroupsChanged = z.object({ groups: z.array(z.object({ id: z.string(), dn: z.string(), sid: z.string() })) });
export const lapsAccount = z.object({ upn: z.string().nullable(), source: z.string().nullable(), helpdeskEnabled: z.boolean(), readOnly: z.literal(true) });

export const superAdministrators = z.object({
  superAdministrators: z.array(z.object({ guid: z.string(), name: z.string().nullable(), dn: z.string().nullable(), enabled: z.boolean() })),
});
export const superAdministratorGranted = z.object({ superAdministrator: z.object({ guid: z.string(), name: z.string(), dn: z.string() }) });

const approvers = z.object({ roles: z.array(z.string()), operators: z.array(z.string()) });
export const approvalSettings = z
  .object({
    settings: z.object({
      requestLifetimeDays: z.number(),
      alwaysRequire: z.array(approvable),
      instanceApprovers: approvers,
      instanceApprovalsNeeded: count,
      ticketRequired: z.boolean(),
      consoleUrl: z.string().optional(),
      delegations: z.record(z.string(), z.object({ requiresApproval: z.array(approvable), approvers, approvalsNeeded: count })),
    }),
    version: z.number(),
  })
  .meta({ id: 'ApprovalSettings' });

export const baseline = z
  .object({
    format: z.literal('hdc-baseline'),
    formatVersion: z.literal(1),
    exportedAt: z.string().optional(),
    source: z.object({ domain: z.string() }).optional(),
    roles: z.array(z.object({ id: z.string(), name: z.string(), permissions: z.array(z.string()) })),
    delegations: z.array(z.object({ id: z.string(), roleId: z.string(), scope: z.array(z.string()), assignees: z.array(z.object({ kind: z.enum(['user', 'group']), name: z.string() })) })),
    approvals: z.object({
      requestLifetimeDays: z.number(),
      alwaysRequire: z.array(approvable),
      instanceApprovalsNeeded: count,
      ticketRequired: z.boolean(),
      delegations: z.record(z.string(), z.object({ requiresApproval: z.array(approvable), approvalsNeeded: count })),
    }),
  })
  .meta({ id: 'Baseline', description: 'Roles, delegations (OU paths below the domain root, assignees by name) and approval settings, never approvers' });
const changes = z.object({ created: z.array(z.string()), updated: z.array(z.string()), unchanged: z.array(z.string()) });
export const baselineImported = z.object({ dryRun: z.boolean(), roles: changes, delegations: changes, approversToChoose: z.array(z.string()) });

export const channel = channelAnswer('NotificationChannel');
export const channels = z.object({ channels: z.array(channel) });
export const channelSaved = z.object({ channel });

const delegationStatus = z.object({ kind: z.enum(['write', 'laps', 'bitlocker']), identity: z.string(), upToDate: z.boolean(), missing: z.array(z.object({ ou: z.string(), ace: z.string() })) });
export const delegationExports = z.object({
  exports: z.array(
    z
      .object({
        kind: z.enum(['write', 'laps', 'bitlocker']),
        identity: z.string(),
        ous: z.array(z.object({ dn: z.string(), guid: z.string(), permissions: z.array(z.string()), rights: z.array(z.string()) })),
        script: z.string(),
        modelDigest: z.string(),
        command: z.string(),
        status: delegationStatus.optional(),
      })
      .meta({ id: 'DelegationExport' }),
  ),
});
