import { z } from 'zod';
import { plainText } from '../plain-text';
import { delegationFromInput, delegationSave, rightsAddedFor, roleFromInput, roleSave, saveDelegation, saveRole, type AdminContext } from '../authz/admin';
import { readAuthzState } from '../authz/rights';
import type { NewRight } from '../authz/widening';
import { isApiError } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { ActionResult } from '../actions';

// Role and delegation changes through an approval request (decision 26, beyond the spec): a save
// that would widen its author's own rights is filed as a request (`roles.save`,
// `delegations.save`), approved by another administrator, and then run as that administrator's
// own save, decided again on the state of that moment.

export const ADMIN_ACTIONS = ['roles.save', 'delegations.save'] as const;
export type AdminAction = (typeof ADMIN_ACTIONS)[number];
export const isAdminAction = (a: string): a is AdminAction => (ADMIN_ACTIONS as readonly string[]).includes(a);

const ref = plainText().trim().min(1).max(1024);
const version = z.number().int().min(0).optional();

/** The parameters of the role editor (PUT /api/admin/roles/{id}) and the delegation editor, plus the version the change applies to. */
export const adminParamsSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('roles.save'), name: plainText().max(200), permissions: z.array(z.string().max(100)).max(100), version }),
  z.object({ action: z.literal('delegations.save'), roleId: z.string().min(1).max(200), scope: z.array(ref).min(1).max(50), assignees: z.array(ref).min(1).max(100), version }),
]);
export type AdminParams = z.infer<typeof adminParamsSchema>;

export interface AdminChangePreview {
  /** as captured with the request: the role as saved, or scope and assignees by GUID; `version` the one it applies to */
  params: AdminParams & { version: number };
  target: { id: string; kind: 'role' | 'delegation'; name: string };
  /** the rights it would add to the operator asked about */
  widens: NewRight[];
}

/**
 * A change as its save would decide it now (the editor's rules against the current state; the
 * refusals are the editor's codes) and the rights it would add to `operatorGuid`, on that
 * operator's fresh group SIDs. Nothing is written.
 */
export async function previewAdminChange(rt: ConsoleRuntime, id: string, params: AdminParams, operatorGuid: string): Promise<AdminChangePreview> {
  const added = await rightsAddedFor(rt, operatorGuid);
  if (params.action === 'roles.save') {
    const role = roleFromInput(id, params);
    const state = await readAuthzState(rt.store);
    const { writes } = roleSave(role, params.version)(state);
    return {
      params: { action: params.action, name: role.name, permissions: role.permissions, version: params.version ?? state.roles.get(id)?.version ?? 0 },
      target: { id, kind: 'role', name: role.name },
      widens: await added(state, writes),
    };
  }
  const d = await delegationFromInput({ rt }, id, params);
  const state = await readAuthzState(rt.store);
  const { writes } = delegationSave(d, params.version)(state);
  return {
    params: { action: params.action, roleId: d.roleId, scope: d.scope.map((o) => o.guid), assignees: d.assignees.map((a) => a.guid), version: params.version ?? state.delegations.get(id)?.version ?? 0 },
    target: { id, kind: 'delegation', name: id },
    widens: await added(state, writes),
  };
}

/**
 * The last approval: the approver's own save of the captured change (audited `roles.saved` /
 * `delegations.saved` with `details.request`), on fresh state: a resource changed since the
 * request fails with `version_conflict`, a change that would widen the approver's rights is refused.
 */
export async function executeAdminChange(ctx: AdminContext, id: string, params: AdminParams): Promise<ActionResult> {
  try {
    if (params.action === 'roles.save') await saveRole(ctx, id, { name: params.name, permissions: params.permissions, version: params.version });
    else await saveDelegation(ctx, id, { roleId: params.roleId, scope: params.scope, assignees: params.assignees, version: params.version });
    return { outcome: 'succeeded' };
  } catch (e) {
    if (isApiError(e)) return { outcome: e.status === 403 ? 'denied' : 'failed', error: e };
    throw e;
  }
}
