import { forbidden, notFound } from '../errors';
import type { Level } from './config';
import type { FleetContext, FleetRoute } from './route';
import { levelRank } from './technicians';

// The one guard of the fleet plane (spec: Server-side enforcement). It runs after the caller is
// authenticated and before the route does anything: 403 admin_required, 404 for an unknown or
// out-of-scope resource (same body), 403 insufficient_level; every refusal is audited
// `auth.forbidden` with the route, the required level and the client.

export async function auditRefusal(ctx: FleetContext, reason: string, requiredLevel: Level | 'admin', client: string | null) {
  await ctx.rt.audit.append({
    event: 'auth.forbidden',
    outcome: 'denied',
    reason,
    actor: ctx.actor,
    ...(client ? { client } : {}),
    correlationId: ctx.correlationId,
    details: { route: ctx.route, requiredLevel, client },
  });
}

export async function refuse(ctx: FleetContext, code: 'client_scope' | 'insufficient_level' | 'admin_required', requiredLevel: Level | 'admin', client: string | null): Promise<never> {
  await auditRefusal(ctx, code, requiredLevel, client);
  throw forbidden(code);
}

/** Is the caller at least `level` on `client`? (administrators always are) */
export function hasLevel(ctx: FleetContext, client: string | null, level: Level): boolean {
  const mine = ctx.access?.levelOn(client);
  return mine === 'admin' || (mine !== undefined && levelRank(mine) >= levelRank(level));
}

export async function guardRoute(route: FleetRoute, ctx: FleetContext): Promise<void> {
  if (route.access === 'anonymous' || route.access === 'signed-in') return;
  const access = ctx.access!;
  if (route.access === 'admin') {
    if (!access.identity.admin) await refuse(ctx, 'admin_required', 'admin', null);
    return;
  }
  const required = route.level ?? 'viewer';
  const addressed = await route.resource!(ctx);
  if (!addressed) {
    // audited for technicians too, so that an unknown id and an out-of-scope one look alike everywhere
    if (!access.identity.admin) await auditRefusal(ctx, 'not_found', required, null);
    throw notFound();
  }
  const level = access.levelOn(addressed.clientCode);
  if (level === undefined) {
    await auditRefusal(ctx, 'out_of_scope', required, addressed.clientCode);
    throw notFound();
  }
  if (level !== 'admin' && levelRank(level) < levelRank(required)) await refuse(ctx, 'insufficient_level', required, addressed.clientCode);
  ctx.addressed = addressed;
}
