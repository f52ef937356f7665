import { z } from 'zod';
import { plainText } from '../plain-text';
import { approvalSettingsSchema, readApprovalSettings, writeApprovalSettings, type ApprovalSettings } from '../approvals/settings';
import { APPROVABLE_ACTIONS } from './approval-rules';
import { isBelow } from '../directory/dn';
import { badRequest, conflict, forbidden, isApiError, type ApiError } from '../errors';
import { rightsAddedFor, resolveAssignees, resolveScope, type AdminContext } from './admin';
import { planImport, validateImportFile } from './import-roles';
import { changeAuthz, ID_PATTERN, isBuiltInRoleId, MAX_WRITES_PER_CHANGE, readAuthzState, type AuthzWrite, type Delegation, type Role } from './rights';

// The baseline (console spec, Approval settings): roles, delegations and approval settings carried
// from one instance to another. Delegations travel with their scope as OU paths relative to the
// domain root and their assignees by account name, resolved again in the target's directory; the
// approval settings carry each delegation's approval actions and count, never approvers (neither
// the instance's nor a delegation's): on import the target's instance approvers decide until
// approvers are chosen there. An import is all or nothing: every problem is reported, nothing is
// written unless there is none.

export const BASELINE_FORMAT = 'hdc-baseline';
const count = z.union([z.literal(1), z.literal(2)]);
const id = z.string().regex(ID_PATTERN);

export const baselineSchema = z.object({
  format: z.literal(BASELINE_FORMAT),
  formatVersion: z.literal(1),
  exportedAt: z.string().max(64).optional(),
  source: z.object({ domain: z.string().max(256) }).optional(),
  // each role is checked with the role editor's rules (reported per entry, never echoed)
  roles: z.array(z.unknown()).max(200),
  delegations: z
    .array(
      z.object({
        id,
        roleId: z.string().min(1).max(64),
        /** OU paths relative to the domain root, e.g. `OU=Branch,OU=Managed` */
        scope: z.array(z.string().trim().min(1).max(1024)).min(1).max(50),
        assignees: z.array(z.object({ kind: z.enum(['user', 'group']), name: plainText().trim().min(1).max(256) })).min(1).max(100),
      }),
    )
    .max(200),
  // approvers are not part of a baseline: unknown keys (an `approvers` among them) are dropped
  approvals: z.object({
    requestLifetimeDays: z.number().int().min(1).max(90),
    alwaysRequire: z.array(z.enum(APPROVABLE_ACTIONS)).max(APPROVABLE_ACTIONS.length),
    instanceApprovalsNeeded: count,
    ticketRequired: z.boolean(),
    delegations: z.record(id, z.object({ requiresApproval: z.array(z.enum(APPROVABLE_ACTIONS)).max(APPROVABLE_ACTIONS.length), approvalsNeeded: count })),
  }),
});
export type Baseline = z.infer<typeof baselineSchema>;

const lower = (s: string) => s.toLowerCase();

/** `OU=Branch,OU=Managed,DC=x,DC=y` → `OU=Branch,OU=Managed` (relative to the domain root). */
export function relativeDn(dn: string, baseDn: string): string {
  if (!isBelow(dn, baseDn)) return dn;
  return dn.slice(0, dn.length - baseDn.length - 1);
}

/** GET /api/admin/baseline: this instance's roles, delegations and approval settings (approvers left out). */
export async function exportBaseline(ctx: AdminContext): Promise<Baseline> {
  const settings = await ctx.rt.settings();
  if (!settings) throw conflict('not_configured');
  const dir = await ctx.rt.directory();
  const [state, { settings: approvals }] = await Promise.all([readAuthzState(ctx.rt.store), readApprovalSettings(ctx.rt.store)]);
  const delegations: Baseline['delegations'] = [];
  for (const { data: d } of [...state.delegations.values()].sort((a, b) => a.data.id.localeCompare(b.data.id))) {
    // the current DN and name of each OU and assignee (followed by GUID), else as recorded
    const scope = await Promise.all(d.scope.map(async (o) => relativeDn((await dir.dnOfGuid(o.guid)) ?? o.dn, settings.baseDn)));
    const assignees = await Promise.all(d.assignees.map(async (a) => ({ kind: a.kind, name: (await dir.resolvePrincipal(a.guid, [a.kind]))?.name ?? a.name })));
    delegations.push({ id: d.id, roleId: d.roleId, scope, assignees });
  }
  const baseline: Baseline = {
    format: BASELINE_FORMAT,
    formatVersion: 1,
    exportedAt: new Date().toISOString(),
    source: { domain: settings.domain },
    roles: [...state.roles.values()].map((r) => ({ id: r.data.id, name: r.data.name, permissions: r.data.permissions })).sort((a, b) => a.id.localeCompare(b.id)),
    delegations,
    approvals: {
      requestLifetimeDays: approvals.requestLifetimeDays,
      alwaysRequire: approvals.alwaysRequire,
      instanceApprovalsNeeded: approvals.instanceApprovalsNeeded,
      ticketRequired: approvals.ticketRequired,
      delegations: Object.fromEntries(Object.entries(approvals.delegations).map(([k, v]) => [k, { requiresApproval: v.requiresApproval, approvalsNeeded: v.approvalsNeeded }])),
    },
  };
  await ctx.rt.audit.append({
    event: 'settings.baseline.export',
    outcome: 'success',
    actor: ctx.actor,
    target: { id: 'baseline', kind: 'settings' },
    correlationId: ctx.correlationId,
    details: { roles: baseline.roles.length, delegations: delegations.length },
  });
  return baseline;
}

export interface BaselineProblem {
  where: string;
  code: string;
  details?: Record<string, unknown>;
}
const problemOf = (where: string, e: ApiError): BaselineProblem => ({ where, code: e.code, ...(Object.keys(e.details).length ? { details: e.details } : {}) });

export interface ImportResult {
  dryRun: boolean;
  roles: { created: string[]; updated: string[]; unchanged: string[] };
  delegations: { created: string[]; updated: string[]; unchanged: string[] };
  /** delegations whose approvals now go to the instance approvers until approvers are chosen */
  approversToChoose: string[];
}

const sameDelegation = (a: Delegation, b: Delegation) =>
  a.roleId === b.roleId &&
  a.scope.length === b.scope.length &&
  a.scope.every((o) => b.scope.some((x) => lower(x.guid) === lower(o.guid))) &&
  a.assignees.length === b.assignees.length &&
  a.assignees.every((o) => b.assignees.some((x) => lower(x.guid) === lower(o.guid)));

/**
 * POST /api/admin/baseline/import: every role checked with the role editor's rules, every
 * delegation resolved in this directory (scope inside the managed OUs, assignees found), the
 * approval settings checked against the roles; an existing role or delegation of another content
 * is replaced only with `replace`, and nothing is ever deleted. Any problem refuses the whole
 * import (400 `baseline_invalid` with every problem). A change widening the importer's own
 * rights is refused `approval_required` (decision 26). Audited `settings.baseline.import`, with
 * the usual rows of each role, delegation and approval settings change.
 */
export async function importBaseline(ctx: AdminContext, baseline: Baseline, opts: { replace: boolean; dryRun: boolean }): Promise<ImportResult> {
  const target = { id: 'baseline', kind: 'settings' };
  try {
    const settings = await ctx.rt.settings();
    if (!settings) throw conflict('not_configured');
    const dir = await ctx.rt.directory();
    const problems: BaselineProblem[] = [];

    // roles: the role editor's rules, each on its own
    const checked = validateImportFile({ roles: baseline.roles });
    for (const r of checked.refused) problems.push({ where: `roles[${r.index}]`, code: r.code, ...(r.details ? { details: r.details } : {}) });
    const baselineRoles = new Map<string, Role>(checked.valid.map((v) => [v.role.id, v.role]));

    // delegations: resolved in this directory now
    const state0 = await readAuthzState(ctx.rt.store);
    const delegations: Delegation[] = [];
    const seen = new Set<string>();
    for (const d of baseline.delegations) {
      const where = `delegations.${d.id}`;
      if (seen.has(d.id)) {
        problems.push({ where, code: 'duplicate_delegation' });
        continue;
      }
      seen.add(d.id);
      if (isBuiltInRoleId(d.roleId)) {
        problems.push({ where, code: 'role_not_delegable', details: { roleId: d.roleId } });
        continue;
      }
      if (!baselineRoles.has(d.roleId) && !state0.roles.has(d.roleId)) {
        problems.push({ where, code: 'role_not_found', details: { roleId: d.roleId } });
        continue;
      }
      try {
        const scope = await resolveScope(dir, settings, d.scope.map((rel) => `${rel},${settings.baseDn}`));
        const assignees = await resolveAssignees(dir, d.assignees.map((a) => a.name));
        const wrongKind = d.assignees.find((a, i) => assignees[i] && assignees[i].kind !== a.kind);
        if (wrongKind) throw badRequest('assignee_kind_mismatch', { assignee: wrongKind.name });
        delegations.push({ id: d.id, roleId: d.roleId, scope, assignees });
      } catch (e) {
        if (!isApiError(e)) throw e;
        problems.push(problemOf(where, e));
      }
    }

    // approval settings: the delegations they name and the actions their roles hold
    const roleOf = (rid: string) => baselineRoles.get(rid) ?? state0.roles.get(rid)?.data;
    for (const [did, a] of Object.entries(baseline.approvals.delegations)) {
      const d = delegations.find((x) => x.id === did) ?? (baseline.delegations.some((x) => x.id === did) ? undefined : state0.delegations.get(did)?.data);
      if (!d) {
        if (!baseline.delegations.some((x) => x.id === did)) problems.push({ where: `approvals.delegations.${did}`, code: 'delegation_not_found' });
        continue;
      }
      const held = new Set<string>(roleOf(d.roleId)?.permissions ?? []);
      const notHeld = a.requiresApproval.filter((x) => !held.has(x));
      if (notHeld.length) problems.push({ where: `approvals.delegations.${did}`, code: 'action_not_in_delegation', details: { actions: notHeld } });
    }
    if (problems.length) throw badRequest('baseline_invalid', { problems });

    // against the current state: roles through import-roles' plan, delegations by version
    const guard = ctx.operator ? await rightsAddedFor(ctx.rt, ctx.operator.guid) : undefined;
    const plan = await changeAuthz(ctx.rt.store, async (s) => {
      const roles = planImport(s, { valid: checked.valid, refused: [] }, opts.replace);
      const conflicts: BaselineProblem[] = roles.result.summary.refused.map((r) => ({ where: `roles[${r.index}]`, code: r.code, ...(r.details ? { details: r.details } : {}) }));
      const writes: AuthzWrite[] = [...roles.writes];
      const result = { roles: roles.result, delegations: { created: [] as string[], updated: [] as string[], unchanged: [] as string[] }, olds: new Map<string, Delegation>(), written: [] as Delegation[] };
      for (const d of delegations) {
        const current = s.delegations.get(d.id);
        if (current && sameDelegation(current.data, d)) {
          result.delegations.unchanged.push(d.id);
          continue;
        }
        if (current && !opts.replace) {
          conflicts.push({ where: `delegations.${d.id}`, code: 'delegation_exists' });
          continue;
        }
        (current ? result.delegations.updated : result.delegations.created).push(d.id);
        if (current) result.olds.set(d.id, current.data);
        writes.push({ put: 'delegation', value: d, version: current?.version ?? 0 });
        result.written.push(d);
      }
      if (conflicts.length) throw conflict('baseline_conflicts', { problems: conflicts });
      if (writes.length > MAX_WRITES_PER_CHANGE) throw badRequest('too_many_changes', { max: MAX_WRITES_PER_CHANGE });
      const widens = guard ? await guard(s, writes) : [];
      if (widens.length) throw forbidden('approval_required', { widens });
      return { writes: opts.dryRun ? [] : writes, result };
    });

    const chosenHere = (await readApprovalSettings(ctx.rt.store)).settings.delegations;
    const summary: ImportResult = {
      dryRun: opts.dryRun,
      roles: { created: plan.roles.summary.created, updated: plan.roles.summary.updated, unchanged: plan.roles.summary.unchanged },
      delegations: plan.delegations,
      approversToChoose: Object.keys(baseline.approvals.delegations)
        .filter((did) => !chosenHere[did] || (!chosenHere[did].approvers.roles.length && !chosenHere[did].approvers.operators.length))
        .sort(),
    };
    if (opts.dryRun) return summary;

    const source = { source: 'baseline' };
    for (const r of plan.roles.written) {
      await ctx.rt.audit.append({ event: 'roles.saved', outcome: 'success', actor: ctx.actor, target: { id: r.id, name: r.name, kind: 'role' }, correlationId: ctx.correlationId, details: { old: plan.roles.olds.get(r.id) ?? null, new: r, ...source } });
    }
    for (const d of plan.written) {
      await ctx.rt.audit.append({ event: 'delegations.saved', outcome: 'success', actor: ctx.actor, target: { id: d.id, kind: 'delegation' }, correlationId: ctx.correlationId, details: { old: plan.olds.get(d.id) ?? null, new: d, ...source } });
    }
    summary.approversToChoose = await applyApprovals(ctx, baseline, delegations.map((d) => d.id));
    await ctx.rt.audit.append({
      event: 'settings.baseline.import',
      outcome: 'success',
      actor: ctx.actor,
      target,
      correlationId: ctx.correlationId,
      details: { replace: opts.replace, from: baseline.source?.domain ?? null, roles: summary.roles, delegations: summary.delegations, approversToChoose: summary.approversToChoose },
    });
    return summary;
  } catch (e) {
    if (isApiError(e) && !opts.dryRun) {
      await ctx.rt.audit.append({ event: 'settings.baseline.import', outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: { replace: opts.replace, ...e.details } });
    }
    throw e;
  }
}

/**
 * The baseline's approval settings over the target's: lifetime, 'always require', instance count
 * and ticket rule replaced; instance approvers and the console URL kept; each delegation of the
 * baseline gets the baseline's actions and count with no approvers (the instance approvers decide).
 */
async function applyApprovals(ctx: AdminContext, baseline: Baseline, delegationIds: string[]): Promise<string[]> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await readApprovalSettings(ctx.rt.store);
    const delegations: ApprovalSettings['delegations'] = { ...current.settings.delegations };
    for (const did of delegationIds) delete delegations[did];
    for (const [did, a] of Object.entries(baseline.approvals.delegations)) {
      // approvers already chosen on this instance stay; none are ever taken from the baseline
      const chosen = current.settings.delegations[did]?.approvers ?? { roles: [], operators: [] };
      delegations[did] = { requiresApproval: [...new Set(a.requiresApproval)], approvalsNeeded: a.approvalsNeeded, approvers: chosen };
    }
    const next = approvalSettingsSchema.parse({
      ...current.settings,
      requestLifetimeDays: baseline.approvals.requestLifetimeDays,
      alwaysRequire: [...new Set(baseline.approvals.alwaysRequire)],
      instanceApprovalsNeeded: baseline.approvals.instanceApprovalsNeeded,
      ticketRequired: baseline.approvals.ticketRequired,
      delegations,
    });
    if (await writeApprovalSettings(ctx.rt.store, next, current.version)) {
      await ctx.rt.audit.append({ event: 'settings.approvals', outcome: 'success', reason: 'baseline', actor: ctx.actor, target: { id: 'approvals', kind: 'settings' }, correlationId: ctx.correlationId, details: { old: current.settings, new: next } });
      return Object.keys(baseline.approvals.delegations)
        .filter((did) => !next.delegations[did].approvers.roles.length && !next.delegations[did].approvers.operators.length)
        .sort();
    }
  }
  throw conflict('version_conflict');
}
