import { UAC } from '../directory';
import { resolvePrincipal } from '../directory/principals';
import { badRequest, conflict, forbidden, notFound } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { readSettings, writeSettings, type InstanceSettings } from '../setup/settings';
import { audited, type AdminContext } from './admin';
import type { OperatorRights } from './rights';

// The built-in Super administrator role is held by the directory users listed in the instance
// settings (objectGUIDs). Only a Super administrator grants or revokes it; the last usable one
// stays. Audited super_administrator:granted / super_administrator:revoked (console spec, Events).

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export async function listSuperAdministrators(rt: ConsoleRuntime) {
  const settings = await rt.settings();
  if (!settings) throw conflict('not_configured');
  const dir = await rt.directory();
  const superAdministrators = await Promise.all(
    settings.superAdministrators.map(async (guid) => {
      const p = await resolvePrincipal(dir, guid, ['user']);
      return p ? { guid, name: p.name, dn: p.dn, enabled: !((p.userAccountControl ?? 0) & UAC.ACCOUNTDISABLE) } : { guid, name: null, dn: null, enabled: false };
    }),
  );
  return { superAdministrators };
}

/** Change the list with optimistic concurrency on the settings record (retried on a race). */
async function changeList(rt: ConsoleRuntime, change: (s: InstanceSettings) => string[] | Promise<string[]>) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await readSettings(rt.store);
    if (!current) throw conflict('not_configured');
    const next = await change(current.settings);
    if (await writeSettings(rt.store, { ...current.settings, superAdministrators: next }, current.version)) {
      await rt.settings();
      return;
    }
  }
  throw conflict('settings_changed_concurrently');
}

const requireSuper = (rights: OperatorRights | undefined) => {
  if (!rights?.superAdministrator) throw forbidden('super_administrator_required');
};

export function grantSuperAdministrator(ctx: AdminContext, rights: OperatorRights | undefined, operator: string) {
  return audited(ctx, 'super_administrator:granted', { id: operator, kind: 'operator' }, async () => {
    requireSuper(rights);
    const p = await resolvePrincipal(await ctx.rt.directory(), operator, ['user']);
    if (!p) throw badRequest('operator_not_found', { operator });
    if ((p.userAccountControl ?? 0) & UAC.ACCOUNTDISABLE) throw badRequest('operator_disabled', { operator: p.name });
    await changeList(ctx.rt, (s) => {
      if (s.superAdministrators.some((g) => same(g, p.guid))) throw conflict('already_super_administrator', { guid: p.guid });
      return [...s.superAdministrators, p.guid];
    });
    await ctx.rt.audit.append({ event: 'super_administrator:granted', outcome: 'success', actor: ctx.actor, target: { id: p.guid, name: p.name, dn: p.dn, kind: 'operator' }, correlationId: ctx.correlationId });
    return { guid: p.guid, name: p.name, dn: p.dn };
  });
}

/**
 * Revoke; refused when no other holder would remain that can sign in (an existing, enabled
 * account), so the instance is never left without a Super administrator.
 */
export function revokeSuperAdministrator(ctx: AdminContext, rights: OperatorRights | undefined, guid: string) {
  return audited(ctx, 'super_administrator:revoked', { id: guid, kind: 'operator' }, async () => {
    requireSuper(rights);
    const dir = await ctx.rt.directory();
    let name: string | undefined;
    await changeList(ctx.rt, async (s) => {
      if (!s.superAdministrators.some((g) => same(g, guid))) throw notFound();
      const rest = s.superAdministrators.filter((g) => !same(g, guid));
      const usable = await Promise.all(rest.map(async (g) => resolvePrincipal(dir, g, ['user']).then((p) => !!p && !((p.userAccountControl ?? 0) & UAC.ACCOUNTDISABLE))));
      if (!usable.some(Boolean)) throw conflict('last_super_administrator');
      name = (await resolvePrincipal(dir, guid, ['user']))?.name;
      return rest;
    });
    await ctx.rt.audit.append({ event: 'super_administrator:revoked', outcome: 'success', actor: ctx.actor, target: { id: guid, name, kind: 'operator' }, correlationId: ctx.correlationId });
  });
}
