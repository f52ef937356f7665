import { z } from 'zod';
import { plainText } from '../plain-text';
import { APPROVABLE_ACTIONS, isApprovable, type ApprovalSource } from '../authz/approval-rules';
import type { Permission } from '../authz/permissions';
import { SUPER_ADMINISTRATOR_ROLE } from '../authz/permissions';
import type { OperatorRights } from '../authz/rights';
import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';

// Approval settings (console spec, Approval settings): request lifetime, the 'always require'
// list, instance approvers and count, and per delegation the actions that require approval, its
// approvers and count. One record with an optimistic version.

// the approvable actions and the rules a decision applies live with the engine (passed these settings)
export { APPROVABLE_ACTIONS, alwaysRequired, isApprovable, requiresApproval, type ApprovableAction, type ApprovalSource } from '../authz/approval-rules';

/** Approvers: roles (role ids; `super-administrator` = the Super administrators) and/or operators (objectGUIDs). */
export const approversSchema = z.object({
  roles: z.array(plainText().min(1).max(64)).max(50).default([]),
  operators: z.array(plainText().min(1).max(1024)).max(100).default([]),
});
export type Approvers = z.infer<typeof approversSchema>;

const count = z.union([z.literal(1), z.literal(2)]);

export const approvalSettingsSchema = z.object({
  requestLifetimeDays: z.number().int().min(1).max(90).default(7),
  alwaysRequire: z.array(z.enum(APPROVABLE_ACTIONS)).max(APPROVABLE_ACTIONS.length).default([]),
  instanceApprovers: approversSchema.default({ roles: [], operators: [] }),
  instanceApprovalsNeeded: count.default(1),
  /** instance rule: approval requests must carry a ticket */
  ticketRequired: z.boolean().default(false),
  /** the console's address as operators open it: notifications link to `<consoleUrl>/approvals/<id>` */
  consoleUrl: z.string().url().max(2048).refine((u) => /^https?:\/\//.test(u), 'http(s) URL').optional(),
  delegations: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
      z.object({
        requiresApproval: z.array(z.enum(APPROVABLE_ACTIONS)).max(APPROVABLE_ACTIONS.length),
        approvers: approversSchema.default({ roles: [], operators: [] }),
        approvalsNeeded: count.default(1),
      }),
    )
    .default({}),
});
export type ApprovalSettings = z.infer<typeof approvalSettingsSchema>;

export const DEFAULT_APPROVAL_SETTINGS: ApprovalSettings = approvalSettingsSchema.parse({});

const KEY = { pk: 'APPROVALS', sk: 'SETTINGS' };

export async function readApprovalSettings(store: Store): Promise<{ settings: ApprovalSettings; version: number }> {
  const rec = await getRecord<ApprovalSettings>(store, KEY.pk, KEY.sk);
  return rec ? { settings: approvalSettingsSchema.parse(rec.data), version: rec.version } : { settings: DEFAULT_APPROVAL_SETTINGS, version: 0 };
}

export const writeApprovalSettings = (store: Store, settings: ApprovalSettings, expectVersion: number) =>
  putRecord(store, KEY.pk, KEY.sk, settings, { expectVersion });

/** ... or a role or delegation change widening its author's own rights (decision 26). */
export type RequestSource = ApprovalSource | { kind: 'admin' };

/** Approvers of a request: those named, or (admin changes) every holder of a permission. */
export type RequestApprovers = Approvers & { permission?: Permission };

/** A self-widening admin change is approved by another administrator: anyone holding `settings.manage`, once. */
export const ADMIN_APPROVERS: RequestApprovers = { roles: [], operators: [], permission: 'settings.manage' };

/** The approvers and count of a source under these settings; none named → the Super administrators. */
export function approversFor(s: ApprovalSettings, source: RequestSource): { approvers: RequestApprovers; approvalsNeeded: 1 | 2 } {
  if (source.kind === 'admin') return { approvers: ADMIN_APPROVERS, approvalsNeeded: 1 };
  const d = source.kind === 'delegation' ? s.delegations[source.delegationId] : undefined;
  const named = (a?: Approvers) => !!a && (a.roles.length > 0 || a.operators.length > 0);
  if (d && named(d.approvers)) return { approvers: d.approvers, approvalsNeeded: d.approvalsNeeded };
  const inst = named(s.instanceApprovers) ? s.instanceApprovers : { roles: [SUPER_ADMINISTRATOR_ROLE.id], operators: [] };
  return { approvers: inst, approvalsNeeded: s.instanceApprovalsNeeded };
}

/** Is this operator named by these approvers (by GUID, by holding one of the roles, or the permission)? */
export function isNamedApprover(a: RequestApprovers, operator: { guid: string }, rights: OperatorRights): boolean {
  if (a.permission && rights.permissions.has(a.permission)) return true;
  if (a.operators.some((g) => g.toLowerCase() === operator.guid.toLowerCase())) return true;
  if (rights.superAdministrator && a.roles.includes(SUPER_ADMINISTRATOR_ROLE.id)) return true;
  return rights.grants.some((g) => a.roles.includes(g.role.id));
}
