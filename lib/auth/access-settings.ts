import { z } from 'zod';
import { plainText } from '../plain-text';
import type { AuditActor } from '../audit';
import { badRequest, conflict } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { readSettings, writeSettings, type AccessMapping } from '../setup/settings';
import { accessSignInConfigured } from './access-signin';
import { readSignInPolicy, setAccessOnly } from './access-only';

// The access-platform settings an administrator changes in the console (settings.manage and a
// step-up): the mapping set (platform role or trait value → directory group, the group protected)
// and the access-platform only mode. The host-level keys (JWKS, StepUp, AdAccountClaims) are
// configuration and shown read-only.

const SID = /^S-1-5-21-\d+-\d+-\d+-\d+$/i;

export const mappingInput = z
  .object({
    role: plainText().trim().min(1).max(128).optional(),
    trait: z.string().trim().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),
    value: plainText().trim().min(1).max(256).optional(),
    /** the group's DN or SID */
    group: plainText().trim().min(1).max(1024),
  })
  .refine((m) => (m.role !== undefined) !== (m.trait !== undefined), 'give a role or a trait')
  .refine((m) => m.trait === undefined || m.value !== undefined, 'a trait mapping needs a value');
export const mappingSetInput = z.object({ mappings: z.array(mappingInput).max(100) });
export type MappingInput = z.infer<typeof mappingInput>;

const describe = (m: AccessMapping) => `${m.role !== undefined ? `role:${m.role}` : `trait:${m.trait}=${m.value}`} -> ${m.group.dn}`;

export async function accessSettingsView(rt: ConsoleRuntime) {
  const [settings, policy] = await Promise.all([rt.settings(), readSignInPolicy(rt.store)]);
  const a = rt.config.Authentication.Access;
  return {
    configured: accessSignInConfigured(rt.config),
    accessOnly: policy.accessOnly,
    passwordSignInAllowedByHost: rt.config.Authentication.ActiveDirectory.Enabled,
    stepUp: a.StepUp,
    adAccountClaims: a.AdAccountClaims,
    superAdministratorsRequireRoleMapping: a.SuperAdministratorsRequireRoleMapping,
    mappings: settings?.accessMappings ?? [],
  };
}

/**
 * Save the mapping set: every group resolved now (DN or SID → DN, GUID, SID) and protected from
 * then on; one unresolvable group refuses the whole set (400 `group_not_found` with its index,
 * nothing stored). Audited `settings.access_mappings` with the old and new mappings (group DNs).
 */
export async function saveAccessMappings(rt: ConsoleRuntime, input: MappingInput[], ctx: { actor: AuditActor; correlationId: string }) {
  const dir = await rt.directory();
  const resolved: AccessMapping[] = [];
  for (const [index, m] of input.entries()) {
    const isSid = SID.test(m.group);
    const p = isSid || m.group.includes('=') ? await dir.resolvePrincipal(m.group, ['group']) : undefined;
    if (!p) {
      await rt.audit.append({ event: 'settings.access_mappings', outcome: 'denied', reason: 'group_not_found', actor: ctx.actor, correlationId: ctx.correlationId, details: { index } });
      throw badRequest('group_not_found', { index, expected: 'a group DN or SID' });
    }
    resolved.push({ ...(m.role !== undefined ? { role: m.role } : { trait: m.trait, value: m.value }), group: { dn: p.dn, guid: p.guid, sid: p.sid } });
  }
  const current = await readSettings(rt.store);
  if (!current) throw badRequest('not_configured');
  const old = current.settings.accessMappings ?? [];
  if (!(await writeSettings(rt.store, { ...current.settings, accessMappings: resolved }, current.version))) throw conflict('settings_changed_concurrently');
  await rt.audit.append({
    event: 'settings.access_mappings',
    outcome: 'success',
    actor: ctx.actor,
    correlationId: ctx.correlationId,
    details: { old: old.map(describe), new: resolved.map(describe) },
  });
  return { mappings: resolved };
}

/**
 * Switch the access-platform only mode from the console. Turning it on needs access-platform
 * sign-in configured on this host (409 `access_signin_not_configured`): otherwise nobody could
 * sign in until the recovery command ran.
 */
export async function changeAccessOnly(rt: ConsoleRuntime, enabled: boolean, ctx: { actor: AuditActor; correlationId: string }) {
  if (enabled && !accessSignInConfigured(rt.config)) {
    await rt.audit.append({ event: 'settings.teleport_only', outcome: 'denied', reason: 'access_signin_not_configured', actor: ctx.actor, correlationId: ctx.correlationId });
    throw conflict('access_signin_not_configured');
  }
  const { changed, policy } = await setAccessOnly(rt, enabled, ctx);
  return { accessOnly: policy.accessOnly, changed };
}
