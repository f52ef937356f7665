import { z } from 'zod';
import { audited, type AdminContext } from '../authz/admin';
import { SUPER_ADMINISTRATOR_ROLE } from '../authz/permissions';
import { listDelegations, listRoles } from '../authz/rights';
import { resolvePrincipal } from '../directory/principals';
import { badRequest, conflict } from '../errors';
import { approvalSettingsSchema, approversSchema, readApprovalSettings, writeApprovalSettings, type ApprovalSettings, type Approvers } from './settings';

// GET/PUT /api/admin/approvals/settings (settings.manage, step-up): audited `settings.approvals`
// with the old and new values; refusals audited under the same event.

export const approvalSettingsInputSchema = approvalSettingsSchema.extend({ version: z.number().int().min(0).optional() });
export type ApprovalSettingsInput = z.input<typeof approvalSettingsInputSchema>;

export async function approvalSettingsView(ctx: Pick<AdminContext, 'rt'>) {
  const { settings, version } = await readApprovalSettings(ctx.rt.store);
  return { settings, version };
}

export function saveApprovalSettings(ctx: AdminContext, input: z.infer<typeof approvalSettingsInputSchema>) {
  return audited(ctx, 'settings.approvals', { id: 'approvals', kind: 'settings' }, async () => {
    const { version: expected, ...raw } = input;
    const [roles, delegations, current] = await Promise.all([listRoles(ctx.rt.store), listDelegations(ctx.rt.store), readApprovalSettings(ctx.rt.store)]);
    if (expected !== undefined && expected !== current.version) throw conflict('version_conflict', { currentVersion: current.version });
    const roleIds = new Set([SUPER_ADMINISTRATOR_ROLE.id, ...roles.map((r) => r.id)]);
    const byId = new Map(delegations.map((d) => [d.id, d]));
    const roleOf = new Map(roles.map((r) => [r.id, r]));
    const dir = await ctx.rt.directory();
    // approvers: known roles; operators given as DN, sAMAccountName, UPN or GUID, stored as GUID
    const resolveApprovers = async (a: Approvers, where: string): Promise<Approvers> => {
      const unknownRoles = a.roles.filter((r) => !roleIds.has(r));
      if (unknownRoles.length) throw badRequest('role_not_found', { where, roles: unknownRoles });
      const operators: string[] = [];
      for (const ref of a.operators) {
        const p = await resolvePrincipal(dir, ref, ['user']);
        if (!p) throw badRequest('operator_not_found', { where, operator: ref });
        operators.push(p.guid);
      }
      return approversSchema.parse({ roles: [...new Set(a.roles)], operators: [...new Set(operators)] });
    };
    const next: ApprovalSettings = { ...raw, instanceApprovers: await resolveApprovers(raw.instanceApprovers, 'instanceApprovers'), delegations: {} };
    for (const [id, d] of Object.entries(raw.delegations)) {
      const delegation = byId.get(id);
      if (!delegation) throw badRequest('delegation_not_found', { delegation: id });
      // a delegation can require approval only for actions its role holds
      const held = new Set(roleOf.get(delegation.roleId)?.permissions ?? []);
      const notHeld = d.requiresApproval.filter((a) => !held.has(a));
      if (notHeld.length) throw badRequest('action_not_in_delegation', { delegation: id, actions: notHeld });
      next.delegations[id] = { requiresApproval: [...new Set(d.requiresApproval)], approvers: await resolveApprovers(d.approvers, `delegations.${id}`), approvalsNeeded: d.approvalsNeeded };
    }
    next.alwaysRequire = [...new Set(next.alwaysRequire)];
    if (!(await writeApprovalSettings(ctx.rt.store, next, current.version))) throw conflict('version_conflict', { currentVersion: (await readApprovalSettings(ctx.rt.store)).version });
    await ctx.rt.audit.append({
      event: 'settings.approvals',
      outcome: 'success',
      reason: 'saved',
      actor: ctx.actor,
      target: { id: 'approvals', kind: 'settings' },
      correlationId: ctx.correlationId,
      details: { old: current.settings, new: next },
    });
    return { settings: next, version: current.version + 1 };
  });
}
