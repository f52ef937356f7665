import { forbidden, notFound } from '../errors';
import type { FleetAccess } from './access';
import type { Level } from './config';
import type { Addressed, FleetContext, FleetRoute } from './route';
import { levelRank } from './technicians';

// The one guard of the fleet plane (spec: Server-side enforcement). It runs after the caller is
// authenticated and before the route does anything: 403 admin_required, 404 for an unknown or
// out-of-scope resource (same body), 403 insufficient_level, 403 client_scope; every refusal is
// audited `auth.forbidden` with the route, the required level and the client.

type RefusalCode = 'client_scope' | 'insufficient_level' | 'admin_required';

/**
 * Which client a refusal is filed under: the caller's scope, never the target's (the target
 * client's viewers must not see another client's technician probing them). A target inside his
 * scope (insufficient level) is his; otherwise the one client of his scope; a technician of
 * several clients has no single one: the row is then his own (his view and administrators').
 */
export function refusalFiling(access: FleetAccess | undefined, targets: Array<string | null>): string | undefined {
  if (!access) return undefined;
  const visible = access.visibleCodes();
  if (!visible) return targets.find((t): t is string => !!t);
  const inScope = targets.filter((t): t is string => !!t && visible.has(t)).sort();
  if (inScope.length) return inScope[0];
  return visible.size === 1 ? [...visible][0] : undefined;
}

export async function auditRefusal(ctx: FleetContext, reason: string, requiredLevel: Level | 'admin', client: string | null, clients?: Array<string | null>, extra?: Record<string, unknown>) {
  const filed = refusalFiling(ctx.access, clients ?? [client]);
  await ctx.rt.audit.append({
    event: 'auth.forbidden',
    outcome: 'denied',
    reason,
    actor: ctx.actor,
    ...(filed ? { client: filed } : {}),
    correlationId: ctx.correlationId,
    details: { route: ctx.route, requiredLevel, client, ...(clients && clients.length > 1 ? { clients } : {}), ...extra },
  });
}

export async function refuse(ctx: FleetContext, code: RefusalCode, requiredLevel: Level | 'admin', client: string | null, clients?: Array<string | null>): Promise<never> {
  await auditRefusal(ctx, code, requiredLevel, client, clients);
  throw forbidden(code);
}

/** Is the caller at least `level` on `client`? (administrators always are) */
export function hasLevel(ctx: FleetContext, client: string | null, level: Level): boolean {
  const mine = ctx.access?.levelOn(client);
  return mine === 'admin' || (mine !== undefined && levelRank(mine) >= levelRank(level));
}

/** The caller's strongest level over the clients of a resource (undefined: none of them is his). */
function strongestLevel(access: FleetAccess, codes: Array<string | null>): Level | 'admin' | undefined {
  let best: Level | 'admin' | undefined;
  for (const c of codes) {
    const l = access.levelOn(c);
    if (l !== undefined && (best === undefined || levelRank(l) > levelRank(best))) best = l;
  }
  return best;
}

async function decideAddressed(ctx: FleetContext, addressed: Addressed, required: Level): Promise<void> {
  const access = ctx.access!;
  const codes = addressed.clientCodes ?? [addressed.clientCode];
  const multi = codes.length > 1 ? codes : undefined;
  const level = strongestLevel(access, codes);
  if (level === undefined) {
    await auditRefusal(ctx, 'out_of_scope', required, addressed.clientCode, multi);
    throw notFound();
  }
  if (level === 'admin') return;
  if (levelRank(level) < levelRank(required)) await refuse(ctx, 'insufficient_level', required, addressed.clientCode, multi);
  if (multi && required === 'operator') {
    // an action on a resource of several clients acts on each of them (a lock cuts every
    // desktop the gateway serves): operator on every one, and a client that cannot be
    // determined (an unlabelled desktop) is refused (spec: Server-side enforcement 4)
    if (multi.some((c) => c !== null && access.levelOn(c) !== undefined && !hasLevel(ctx, c, 'operator'))) await refuse(ctx, 'insufficient_level', required, addressed.clientCode, multi);
    if (multi.some((c) => !hasLevel(ctx, c, 'operator'))) await refuse(ctx, 'client_scope', required, addressed.clientCode, multi);
  }
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
  await decideAddressed(ctx, addressed, required);
  ctx.addressed = addressed;
}
