import type { AuditActor } from '../audit';
import { isBelow } from '../authz/classify';
import { operatorRights, type OperatorRights } from '../authz/rights';
import { isGuid } from '../directory';
import { conflict, forbidden, isApiError, notFound } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { InstanceSettings, ManagedOu } from '../setup/settings';
import { SUPER_ADMINISTRATOR_ROLE } from '../authz/permissions';
import { deleteOperatorRecord, getOperator, listOperatorRecords, resetAuthenticator, type OperatorRecord } from './operators';
import { deleteAllPasskeys, listPasskeys } from './passkey-records';
import { endOperatorSessions } from './sessions';

// An administrator's reset of another operator's authenticator (console spec, Authentication 5):
// allowed only to one who holds all of that operator's console rights; a Super administrator's
// only by another Super administrator. The operator's sessions end with it.

/** A right the target holds that the administrator does not (undefined: all held). */
export function missingRight(admin: OperatorRights, target: OperatorRights): { permission: string; ou: string } | undefined {
  if (admin.superAdministrator) return undefined;
  if (target.superAdministrator) return { permission: 'super-administrator', ou: '*' };
  const covers = (scope: ManagedOu, ou: ManagedOu) => scope.guid.toLowerCase() === ou.guid.toLowerCase() || isBelow(ou.dn, scope.dn);
  for (const { role, delegation } of target.grants) {
    for (const permission of role.permissions) {
      for (const ou of delegation.scope) {
        const held = admin.grants.some((g) => g.role.permissions.includes(permission) && g.delegation.scope.some((s) => covers(s, ou)));
        if (!held) return { permission, ou: ou.dn };
      }
    }
  }
  return undefined;
}

export interface TotpResetContext {
  rt: ConsoleRuntime;
  actor: AuditActor & { id: string };
  rights: OperatorRights;
  correlationId: string;
}

/**
 * POST /api/admin/operators/{id}/totp/reset: audited `operators.totp_reset` with the reason given;
 * every refusal is a row of the same event, outcome denied, its code as reason.
 */
export function resetOperatorTotp(ctx: TotpResetContext, targetId: string, reason: string) {
  return resetOperatorAuthenticator(ctx, targetId, reason, 'operators.totp_reset', async (rec) => {
    if (!rec.totpSealed && !rec.pendingTotpSealed) throw conflict('no_authenticator');
    return { sessionsEnded: (await resetAuthenticator(ctx.rt.store, targetId)).sessionsEnded };
  });
}

/**
 * POST /api/admin/operators/{id}/passkeys/reset (issue 32): every passkey of the operator goes and
 * their sessions end, under the same rule as an authenticator reset; audited `operators.passkeys_reset`.
 */
export async function resetOperatorPasskeys(ctx: TotpResetContext, targetId: string, reason: string) {
  let removed = 0;
  const r = await resetOperatorAuthenticator(ctx, targetId, reason, 'operators.passkeys_reset', async () => {
    removed = await deleteAllPasskeys(ctx.rt.store, targetId);
    if (!removed) throw conflict('no_passkey');
    return { removed, sessionsEnded: await endOperatorSessions(ctx.rt.store, targetId) };
  });
  return { ...r, removed };
}

/** The rule both resets share (Authentication 5); `clear` removes the authenticator and answers the audit row's details. */
async function resetOperatorAuthenticator(
  ctx: TotpResetContext,
  targetId: string,
  reason: string,
  event: string,
  clear: (rec: OperatorRecord) => Promise<{ sessionsEnded: number } & Record<string, unknown>>,
) {
  const { rt } = ctx;
  const target: { id: string; name?: string; kind: string } = { id: targetId, kind: 'operator' };
  try {
    if (!isGuid(targetId)) throw notFound();
    if (targetId.toLowerCase() === ctx.actor.id.toLowerCase()) throw forbidden('own_account');
    const settings = await rt.settings();
    const rec = await getOperator(rt.store, targetId);
    if (!settings || !rec) throw notFound();
    target.name = rec.data.username;
    const dir = await rt.directory();
    const dn = await dir.dnOfGuid(targetId);
    const facts = dn ? await dir.principalFacts(dn) : undefined;
    if (!facts) throw notFound();
    const targetRights = await operatorRights(rt.store, settings, facts);
    if (targetRights.superAdministrator && !ctx.rights.superAdministrator) throw forbidden('super_administrator_required');
    const missing = missingRight(ctx.rights, targetRights);
    if (missing) throw forbidden('operator_rights_not_held', missing);
    const details = await clear(rec.data);
    await rt.audit.append({ event, outcome: 'success', reason, actor: ctx.actor, target, correlationId: ctx.correlationId, details });
    return { operator: { id: facts.guid, username: facts.samAccountName }, sessionsEnded: details.sessionsEnded };
  } catch (e) {
    if (isApiError(e)) {
      await rt.audit.append({ event, outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: { requestReason: reason, ...e.details } });
    }
    throw e;
  }
}

// ---- operator records (listed and deleted by an administrator)

/** The roles an operator holds, by name (the built-in one first), for the list and the deletion's audit row. */
export const roleNamesOf = (r: OperatorRights) => [...(r.superAdministrator ? [SUPER_ADMINISTRATOR_ROLE.name] : []), ...new Set(r.grants.map((g) => g.role.name))];

const NO_RIGHTS: OperatorRights = { superAdministrator: false, permissions: new Set(), grants: [] };

/** An operator's current rights, on fresh facts (their directory account read by GUID); none when it is gone. */
async function currentRightsOf(rt: ConsoleRuntime, settings: InstanceSettings, guid: string) {
  const dir = await rt.directory();
  const dn = await dir.dnOfGuid(guid);
  const facts = dn ? await dir.principalFacts(dn) : undefined;
  // an account gone from the directory matches no delegation; a Super administrator stays one by GUID
  const rights = facts ? await operatorRights(rt.store, settings, facts) : await operatorRights(rt.store, settings, { guid, sid: '', groupSids: [] });
  return { facts, rights };
}

/** GET /api/admin/operators: every operator record, with its roles now (fresh facts) and whether an authenticator is set. */
export async function listOperators(rt: ConsoleRuntime) {
  const settings = await rt.settings();
  if (!settings) throw conflict('not_configured');
  const entries = await listOperatorRecords(rt.store);
  const operators = [];
  for (const e of entries) {
    const [{ facts, rights }, rec] = await Promise.all([currentRightsOf(rt, settings, e.guid), getOperator(rt.store, e.guid)]);
    operators.push({
      id: e.guid,
      username: facts?.samAccountName ?? e.username,
      displayName: facts?.displayName ?? e.displayName ?? null,
      provider: e.provider ?? null,
      subject: e.subject ?? null,
      lastSignInAt: e.lastSignInAt ?? null,
      authenticator: rec?.data.totpSealed ? 'enrolled' : rec?.data.pendingTotpSealed ? 'pending' : 'none',
      passkeys: (await listPasskeys(rt.store, e.guid)).length,
      directoryAccount: !facts ? 'missing' : facts.userAccountControl & 0x2 ? 'disabled' : 'enabled',
      roles: roleNamesOf(rights),
    });
  }
  operators.sort((a, b) => a.username.localeCompare(b.username));
  return { operators };
}

/**
 * DELETE /api/admin/operators/{id}: the console's record of an operator (authenticator included)
 * and their sessions end; audited `operators.deleted` with name, provider, subject and roles.
 * Deleting the record clears the authenticator, so it needs what a reset needs (Authentication 5).
 * The rights come from delegations and stay: a later sign-in creates a new record.
 */
export async function deleteOperator(ctx: TotpResetContext, targetId: string) {
  const { rt } = ctx;
  const target: { id: string; name?: string; kind: string } = { id: targetId, kind: 'operator' };
  try {
    if (!isGuid(targetId)) throw notFound();
    if (targetId.toLowerCase() === ctx.actor.id.toLowerCase()) throw forbidden('own_account');
    const settings = await rt.settings();
    const entry = (await listOperatorRecords(rt.store)).find((e) => e.guid.toLowerCase() === targetId.toLowerCase());
    const rec = await getOperator(rt.store, targetId);
    if (!settings || (!entry && !rec)) throw notFound();
    target.name = entry?.username ?? rec!.data.username;
    const { rights } = await currentRightsOf(rt, settings, targetId);
    if (rights.superAdministrator && !ctx.rights.superAdministrator) throw forbidden('super_administrator_required');
    const missing = missingRight(ctx.rights, rights);
    if (missing) throw forbidden('operator_rights_not_held', missing);
    await deleteOperatorRecord(rt.store, targetId);
    await deleteAllPasskeys(rt.store, targetId);
    const sessionsEnded = await endOperatorSessions(rt.store, targetId);
    const recorded = { name: target.name, provider: entry?.provider ?? rec?.data.provider ?? null, subject: entry?.subject ?? rec?.data.subject ?? null, roles: roleNamesOf(rights) };
    await rt.audit.append({ event: 'operators.deleted', outcome: 'success', actor: ctx.actor, target, correlationId: ctx.correlationId, details: { ...recorded, sessionsEnded } });
    return { deleted: { id: targetId, ...recorded }, sessionsEnded };
  } catch (e) {
    if (isApiError(e)) await rt.audit.append({ event: 'operators.deleted', outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: e.details });
    throw e;
  }
}
