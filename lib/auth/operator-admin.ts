import type { AuditActor } from '../audit';
import { isBelow } from '../authz/classify';
import { operatorRights, type OperatorRights } from '../authz/rights';
import { isGuid } from '../directory';
import { conflict, forbidden, isApiError, notFound } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { ManagedOu } from '../setup/settings';
import { getOperator, resetAuthenticator } from './operators';

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
export async function resetOperatorTotp(ctx: TotpResetContext, targetId: string, reason: string) {
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
    if (!rec.data.totpSealed && !rec.data.pendingTotpSealed) throw conflict('no_authenticator');
    const { sessionsEnded } = await resetAuthenticator(rt.store, targetId);
    await rt.audit.append({ event: 'operators.totp_reset', outcome: 'success', reason, actor: ctx.actor, target, correlationId: ctx.correlationId, details: { sessionsEnded } });
    return { operator: { id: facts.guid, username: facts.samAccountName }, sessionsEnded };
  } catch (e) {
    if (isApiError(e)) {
      await rt.audit.append({ event: 'operators.totp_reset', outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: { requestReason: reason, ...e.details } });
    }
    throw e;
  }
}
