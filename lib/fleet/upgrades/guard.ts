import { notFound } from '../../errors';
import { getConsole } from '../consoles';
import { auditRefusal } from '../guard';
import type { FleetContext } from '../route';
import { mayOperate, type PackRequest } from './pack';

/**
 * Who may ask for an upgrade pack (fleet spec, "Console upgrades"): administrators, or operators
 * of the console's client. Each console named must exist and be visible (else 404 like an unknown
 * id), and the caller must operate its client (else 403 insufficient_level); "all behind" needs
 * at least one client to operate and is then limited to those (lib/fleet/upgrades/pack.ts).
 * Refusals are audited `auth.forbidden` before anything is planned.
 */
export async function authorizePackRequest(ctx: FleetContext<PackRequest>): Promise<void> {
  const access = ctx.access!;
  if (access.identity.admin) return;
  if (ctx.body.allBehind) {
    const visible = access.visibleCodes();
    if (![...(visible ?? [])].some((code) => mayOperate(access, code))) await ctx.refuse('insufficient_level', 'operator', null);
    return;
  }
  for (const id of new Set(ctx.body.consoleIds ?? [])) {
    const c = await getConsole(ctx.rt.store, id);
    if (!c || access.levelOn(c.clientCode) === undefined) {
      await auditRefusal(ctx, c ? 'out_of_scope' : 'not_found', 'operator', c?.clientCode ?? null);
      throw notFound();
    }
    if (!mayOperate(access, c.clientCode)) await ctx.refuse('insufficient_level', 'operator', c.clientCode);
  }
}
