import { z } from 'zod';
import { plainText } from '../plain-text';
import { constantTimeEqual, randomToken, seal, sha256Hex } from '../crypto/seal';
import { DirectoryInvalidCredentials, DirectoryPool, LdapDirectory, type DcEndpoint, type Directory } from '../directory';
import { poolOptions } from '../directory/pool';
import { ApiError, badRequest, conflict, forbidden } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';
import { caPemSchema, dcUrlSchema } from './connection';
import { readSettings, writeSettings, type InstanceSettings } from './settings';

// First-run setup: the console starts unconfigured with a one-time setup token (printed by the
// admin CLI / the local starter); setup stores the directory connection and designates the first
// Super administrator. `reset-setup --confirm` re-opens it with a new token, keeping the data.

interface SetupState {
  tokenHash?: string;
  issuedAt?: string;
}

export const setupInputSchema = z.object({
  domain: z.string().regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a DNS domain name'),
  dcs: z.array(z.object({ name: plainText().min(1).max(64), url: dcUrlSchema })).min(1).max(20),
  caPem: caPemSchema,
  readAccount: z.object({ user: plainText().min(1).max(256), password: z.string().min(1).max(256) }),
  writeAccount: z.object({ user: plainText().min(1).max(256), password: z.string().min(1).max(256) }),
  lapsIdentityUpn: plainText().max(256).optional(),
  managedOus: z.array(plainText().min(1).max(1024)).min(1).max(200),
  tierOus: z.array(plainText().min(1).max(1024)).max(200).default([]),
  protectedGroups: z.array(plainText().min(1).max(1024)).max(200).default([]),
  superAdministrator: plainText().min(1).max(256),
});
export type SetupInput = z.infer<typeof setupInputSchema>;

export const baseDnOf = (domain: string) => domain.split('.').map((p) => `DC=${p}`).join(',');

export async function issueSetupToken(store: Store): Promise<string> {
  const token = randomToken(24);
  await putRecord<SetupState>(store, 'INSTANCE', 'SETUP', { tokenHash: sha256Hex(token), issuedAt: new Date().toISOString() });
  return token;
}

export async function setupOpen(store: Store): Promise<boolean> {
  return !!(await getRecord<SetupState>(store, 'INSTANCE', 'SETUP'))?.data.tokenHash;
}

export interface DcCheck {
  name: string;
  url: string;
  ok: boolean;
  problem?: 'unreachable_or_untrusted' | 'bind_refused';
}

/** TLS handshake with the configured CA and host name, then a read-account bind, on each DC. */
export async function checkDcs(rt: ConsoleRuntime, dcs: DcEndpoint[], caPem: string, creds: { user: string; password: string }): Promise<DcCheck[]> {
  return Promise.all(
    dcs.map(async (dc) => {
      const pool = new DirectoryPool([dc], poolOptions(rt.config.Directory, caPem, { cooldown: false }));
      try {
        await pool.run(creds, 'read', async () => undefined);
        return { ...dc, ok: true };
      } catch (e) {
        return { ...dc, ok: false, problem: e instanceof DirectoryInvalidCredentials ? ('bind_refused' as const) : ('unreachable_or_untrusted' as const) };
      }
    }),
  );
}

export async function completeSetup(rt: ConsoleRuntime, token: string | undefined, input: SetupInput, actorIp: string, correlationId: string) {
  const state = await getRecord<SetupState>(rt.store, 'INSTANCE', 'SETUP');
  if (!state?.data.tokenHash) throw conflict('setup_closed');
  if (!token || !constantTimeEqual(sha256Hex(token), state.data.tokenHash)) {
    await rt.audit.append({ event: 'setup.completed', outcome: 'denied', reason: 'bad_setup_token', actor: { ip: actorIp }, correlationId });
    throw forbidden('setup_token_invalid');
  }
  const checks = await checkDcs(rt, input.dcs, input.caPem, input.readAccount);
  if (checks.some((c) => c.problem === 'bind_refused')) throw badRequest('read_account_rejected', { dcs: checks });
  if (!checks.some((c) => c.ok)) throw badRequest('no_dc_reachable', { dcs: checks });
  const writeChecks = await checkDcs(rt, input.dcs.filter((_, i) => checks[i].ok), input.caPem, input.writeAccount);
  if (writeChecks.some((c) => c.problem === 'bind_refused')) throw badRequest('write_account_rejected');

  const baseDn = baseDnOf(input.domain);
  const working = input.dcs.filter((_, i) => checks[i].ok);
  const pool = new DirectoryPool(working, poolOptions(rt.config.Directory, input.caPem));
  const dir = new LdapDirectory(pool, baseDn, async () => input.readAccount);
  const reused = await lapsAccountReusedAs(dir, input.lapsIdentityUpn || rt.config.Helpdesk.LapsIdentityUpn, { read: input.readAccount.user, write: input.writeAccount.user });
  if (reused) {
    await rt.audit.append({ event: 'setup.completed', outcome: 'denied', reason: `laps_account_not_allowed:${reused}`, actor: { ip: actorIp }, correlationId });
    throw badRequest('laps_account_not_allowed', { account: reused });
  }
  const managedOus = await Promise.all(input.managedOus.map((o) => dir.resolveOu(o)));
  const tierOus = await Promise.all(input.tierOus.map((o) => dir.resolveOu(o)));
  const protectedGroups = await Promise.all(input.protectedGroups.map((g) => dir.resolveGroup(g)));
  const superDn = await dir.findUserDn(input.superAdministrator);
  const superFacts = superDn ? await dir.principalFacts(superDn) : undefined;
  if (!superFacts) throw badRequest('super_administrator_not_found');

  const key = await rt.masterKey();
  const previous = await readSettings(rt.store);
  // a setup re-opened by `reset-setup --confirm` keeps the data: the settings the wizard does not
  // ask for (UPN suffixes, access-platform mappings, step-up mode) and the Super administrators
  // already designated; the one named now is added
  const earlierSupers = previous?.settings.superAdministrators ?? [];
  const newlyGranted = !earlierSupers.some((g) => g.toLowerCase() === superFacts.guid.toLowerCase());
  const settings: InstanceSettings = {
    ...previous?.settings,
    domain: input.domain.toLowerCase(),
    baseDn,
    dcs: input.dcs,
    caPem: input.caPem,
    readAccount: { user: input.readAccount.user, sealedPassword: seal(key, input.readAccount.password, 'tech-account:read') },
    writeAccount: { user: input.writeAccount.user, sealedPassword: seal(key, input.writeAccount.password, 'tech-account:write') },
    lapsIdentityUpn: input.lapsIdentityUpn,
    managedOus,
    tierOus,
    protectedGroups,
    superAdministrators: newlyGranted ? [...earlierSupers, superFacts.guid] : earlierSupers,
    stepUpMode: previous?.settings.stepUpMode ?? 'authenticator',
    configuredAt: new Date().toISOString(),
  };
  if (!(await writeSettings(rt.store, settings, previous?.version ?? 0))) throw conflict('settings_changed_concurrently');
  await putRecord<SetupState>(rt.store, 'INSTANCE', 'SETUP', {});
  await rt.settings();
  const actor = { ip: actorIp, name: 'setup' };
  await rt.audit.append({
    event: 'setup.completed',
    outcome: 'success',
    actor,
    correlationId,
    details: { domain: settings.domain, dcs: settings.dcs.map((d) => d.url), managedOus: managedOus.map((o) => o.dn), readAccount: settings.readAccount.user, writeAccount: settings.writeAccount.user, caFingerprint: sha256Hex(input.caPem).slice(0, 16) },
  });
  if (newlyGranted) await rt.audit.append({ event: 'super_administrator:granted', outcome: 'success', actor, correlationId, target: { id: superFacts.guid, name: superFacts.samAccountName } });
  return { dcs: checks, managedOus, superAdministrator: { guid: superFacts.guid, name: superFacts.samAccountName } };
}

/**
 * The LAPS account is never the read or write account (console spec, Authentication 8): compared
 * as directory accounts (objectGUID), whichever way each is written (UPN, DN, DOMAIN\\name), and
 * as written when one does not resolve. Answers which account it is, if any.
 */
export async function lapsAccountReusedAs(dir: Directory, laps: string | undefined, accounts: Record<'read' | 'write', string>): Promise<'read' | 'write' | undefined> {
  if (!laps) return undefined;
  const guidOf = async (user: string) => {
    const dn = user.includes('=') ? user : await dir.findUserDn(user);
    return dn ? (await dir.principalFacts(dn).catch(() => undefined))?.guid.toLowerCase() : undefined;
  };
  const lapsGuid = await guidOf(laps);
  for (const which of ['read', 'write'] as const) {
    const user = accounts[which];
    if (user.trim().toLowerCase() === laps.trim().toLowerCase()) return which;
    if (lapsGuid && (await guidOf(user)) === lapsGuid) return which;
  }
  return undefined;
}

export async function requireConfigured(rt: ConsoleRuntime): Promise<InstanceSettings> {
  const s = await rt.settings();
  if (!s) throw new ApiError(503, 'not_configured');
  return s;
}
