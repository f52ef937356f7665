import type { AuditActor } from '../audit';
import { dnOfObjectGuid, resolvePrincipal } from '../directory/principals';
import { badRequest, conflict, isApiError, notFound } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { readSettings, writeSettings, type InstanceSettings } from './settings';

// The protection list (console spec, Computer classification 2): members of a protected group are
// VIP objects, listed with the read permission but acted on only with `vip.manage` in the same
// delegation. Administrators see and change the list (settings.manage + step-up); each change is
// audited `settings.protected_groups` with the old and new lists. The LAPS account is shown
// read-only beside it (Authentication 8): it is set on the host, never in the web UI.

type ProtectedGroup = InstanceSettings['protectedGroups'][number];

export interface ProtectionContext {
  rt: ConsoleRuntime;
  actor: AuditActor;
  correlationId: string;
}

/** The list with each group's current DN (followed by GUID: a renamed or moved group stays protected). */
export async function protectedGroupsView(rt: ConsoleRuntime) {
  const settings = await rt.settings();
  if (!settings) throw conflict('not_configured');
  const dir = await rt.directory();
  const groups = await Promise.all(
    settings.protectedGroups.map(async (g) => {
      const dn = await dnOfObjectGuid(dir, g.guid);
      return { id: g.guid, dn: dn ?? g.dn, sid: g.sid, found: !!dn };
    }),
  );
  return { groups };
}

/** The LAPS account as the console knows it: its UPN only (Helpdesk:LapsIdentityUpn, else the one given at setup). */
export async function lapsAccountView(rt: ConsoleRuntime) {
  const settings = await rt.settings();
  const fromConfig = rt.config.Helpdesk.LapsIdentityUpn;
  const upn = fromConfig || settings?.lapsIdentityUpn || null;
  return {
    upn,
    source: fromConfig ? 'Helpdesk:LapsIdentityUpn' : settings?.lapsIdentityUpn ? 'setup' : null,
    helpdeskEnabled: rt.config.Helpdesk.Enabled,
    readOnly: true as const,
  };
}

const viewOf = (groups: ProtectedGroup[]) => groups.map((g) => g.dn);

/** Change the list on the current settings (optimistic version, retried a few times), then audit it. */
async function changeList(ctx: ProtectionContext, reason: 'added' | 'removed', target: { id: string; name?: string; kind: string }, change: (groups: ProtectedGroup[]) => Promise<ProtectedGroup[]>) {
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await readSettings(ctx.rt.store);
      if (!current) throw conflict('not_configured');
      const old = current.settings.protectedGroups;
      const next = await change(old);
      if (await writeSettings(ctx.rt.store, { ...current.settings, protectedGroups: next }, current.version)) {
        await ctx.rt.audit.append({ event: 'settings.protected_groups', outcome: 'success', reason, actor: ctx.actor, target, correlationId: ctx.correlationId, details: { old: viewOf(old), new: viewOf(next) } });
        return { groups: next.map((g) => ({ id: g.guid, dn: g.dn, sid: g.sid })) };
      }
    }
    throw conflict('settings_changed_concurrently');
  } catch (e) {
    if (isApiError(e)) await ctx.rt.audit.append({ event: 'settings.protected_groups', outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: e.details });
    throw e;
  }
}

/** Add a security group (DN, sAMAccountName or objectGUID) to the protection list. */
export async function addProtectedGroup(ctx: ProtectionContext, ref: string) {
  const target: { id: string; name?: string; kind: string } = { id: ref, kind: 'protected_group' };
  return changeList(ctx, 'added', target, async (groups) => {
    const dir = await ctx.rt.directory();
    const p = await resolvePrincipal(dir, ref, ['group']);
    if (!p) throw badRequest('group_not_found', { group: ref });
    // a distribution group is never in a token: its members could not be recognised as VIP
    if (!p.securityGroup) throw badRequest('group_not_security_group', { group: p.dn });
    target.id = p.guid;
    target.name = p.name;
    if (groups.some((g) => g.guid.toLowerCase() === p.guid.toLowerCase())) throw conflict('already_protected', { group: p.dn });
    return [...groups, { dn: p.dn, guid: p.guid, sid: p.sid }];
  });
}

/** Remove a group (by its objectGUID) from the protection list; one not on it answers 404. */
export async function removeProtectedGroup(ctx: ProtectionContext, guid: string) {
  const target: { id: string; name?: string; kind: string } = { id: guid, kind: 'protected_group' };
  return changeList(ctx, 'removed', target, async (groups) => {
    const found = groups.find((g) => g.guid.toLowerCase() === guid.toLowerCase());
    if (!found) throw notFound();
    target.name = found.dn;
    return groups.filter((g) => g !== found);
  });
}
