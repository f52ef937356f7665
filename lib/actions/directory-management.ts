import { createHash } from 'node:crypto';
import { z } from 'zod';
import { plainText } from '../plain-text';
import { classifyTarget, decideOn, decideOnOu, type Actor, type Decision, type DecisionContext } from '../authz/engine';
import { directoryApiError, escapeFilterValue, isDirectoryError, isGuid, type DirectoryChange } from '../directory';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../errors';
import { auditActor, nameOf, refusalError } from './common';

// Moves, renames and groups (console spec, "Moves, renames and groups"; work without the password
// service). Each is decided by the one engine on fresh facts read by GUID (audited
// `authz.decision`), refused or executed with the write account, and audited under its own name
// (`users.move`, `users.rename`, `users.rename.login`, `groups.create`, `groups.delete`,
// `groups.attributes.write`) with old and new values. Never approvable: they run directly or not.

export interface ManagementOptions {
  correlationId: string;
  ticket?: string;
}

export interface ManagementResult {
  outcome: 'succeeded' | 'partial';
  id?: string;
  dn?: string;
  code?: string;
}

// ---- names: what the directory would refuse or mangle is refused first (400)
/** sAMAccountName: at most 20 characters (user logon name, pre-Windows 2000), none of "/\[]:;|=,+*?<>@, no final dot. */
export const samAccountNameSchema = plainText()
  .trim()
  .min(1)
  .max(20)
  .refine((s) => !/["/\\[\]:;|=,+*?<>@]/.test(s) && !s.endsWith('.'), 'characters a sAMAccountName cannot hold');
const groupSamSchema = plainText()
  .trim()
  .min(1)
  .max(64)
  .refine((s) => !/["/\\[\]:;|=,+*?<>@]/.test(s) && !s.endsWith('.'), 'characters a group name cannot hold');
/** cn: at most 64 characters, no control characters and no backslash (the RDN is escaped, never a backslash sequence). */
export const cnSchema = plainText()
  .trim()
  .min(1)
  .max(64)
  .refine((s) => !s.includes('\\'), 'characters a name cannot hold');
const upnSchema = plainText()
  .trim()
  .max(256)
  .regex(/^[^\s@"\\]{1,64}@[A-Za-z0-9.-]{1,190}$/, 'name@suffix');
const optionalText = (max: number) => plainText().trim().max(max).nullable().optional();

/** An RDN value escaped for a DN (RFC 4514). */
export function escapeRdnValue(v: string): string {
  let s = v.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
  if (s.startsWith('#') || s.startsWith(' ')) s = `\\${s}`;
  if (s.endsWith(' ')) s = `${s.slice(0, -1)}\\ `;
  return s;
}
/** The first RDN of a DN (up to its first unescaped comma), and the parent DN. */
export function splitDn(dn: string): { rdn: string; parent: string } {
  for (let i = 0; i < dn.length; i++) {
    if (dn[i] === '\\') i++;
    else if (dn[i] === ',') return { rdn: dn.slice(0, i), parent: dn.slice(i + 1) };
  }
  return { rdn: dn, parent: '' };
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;
const isWriteDenied = (e: unknown) => isDirectoryError(e, 'denied');

/** The audit row of one management action (refusals included), with the ticket and the correlation id. */
function auditRow(ctx: DecisionContext, actor: Actor, event: string, kind: 'user' | 'group' | 'ou', opts: ManagementOptions) {
  return (outcome: string, reason: string, target: { id?: string; dn?: string; name?: string }, details?: Record<string, unknown>) =>
    ctx.rt.audit.append({ event, outcome, reason, ticket: opts.ticket, actor: auditActor(actor), target: { kind, ...target }, correlationId: opts.correlationId, details });
}

/** Decide on the target (audited), or audit the refusal under the action's name and throw it. */
async function decided(ctx: DecisionContext, actor: Actor, kind: 'user' | 'group', action: Parameters<typeof decideOn>[3], guid: string, opts: ManagementOptions, audit: ReturnType<typeof auditRow>) {
  if (!isGuid(guid)) {
    await audit('denied', 'not_found', { id: guid });
    throw notFound();
  }
  const d = await decideOn(ctx, actor, kind, action, guid, { audit: true, correlationId: opts.correlationId });
  if (!d.allowed) {
    const error = refusalError(d);
    await audit('denied', error.code === 'forbidden' ? d.reason : error.code, targetOf(guid, d));
    throw error;
  }
  return d;
}
const targetOf = (guid: string, d: Decision) => ({ id: guid, ...(d.target ? { dn: d.target.dn, name: nameOf(d) } : {}) });

/** A directory failure of a write: audited as failed (or unknown), thrown as the API's error. */
async function failed(e: unknown, audit: ReturnType<typeof auditRow>, target: { id?: string; dn?: string; name?: string }, details: Record<string, unknown>, mapped?: ApiError): Promise<never> {
  const error = mapped ?? directoryApiError(e);
  await audit(error.code === 'directory_outcome_unknown' ? 'unknown' : 'failed', error.code, target, details);
  throw error;
}

// ---- users.move

export const moveBodySchema = z.object({ destination: plainText().trim().min(1).max(1024), ticket: plainText().trim().max(200).optional() });

/**
 * Move a user to another managed OU: the user decided on fresh facts (`users.move` in a delegation
 * covering where it is now), the destination OU decided too (`users.move` there; `vip.manage`
 * with it for a protected account); Tier 0/1 OUs, containers that are not OUs and OUs outside the
 * scope answer 404. The destination is given by GUID or DN.
 */
export async function moveUser(ctx: DecisionContext, actor: Actor, userGuid: string, destination: string, opts: ManagementOptions): Promise<ManagementResult> {
  const audit = auditRow(ctx, actor, 'users.move', 'user', opts);
  const d = await decided(ctx, actor, 'user', 'users.move', userGuid, opts, audit);
  const target = targetOf(userGuid, d);
  const destGuid = isGuid(destination) ? destination : await destinationGuid(ctx, destination);
  if (!destGuid) {
    await audit('denied', 'destination:not_found', target, { destination });
    throw notFound();
  }
  const dest = await decideOnOu(ctx, actor, 'users.move', destGuid, { correlationId: opts.correlationId, vip: d.cls.kind === 'vip', audit: true });
  if (!dest.allowed) {
    await audit('denied', `destination:${dest.reason}`, target, { destination: dest.ou?.dn ?? destination });
    throw dest.status === 404 ? notFound() : forbidden('forbidden', { reason: `destination:${dest.reason}` });
  }
  const { rdn, parent } = splitDn(d.target.dn);
  const details = { from: parent, to: dest.ou.dn };
  if (parent.toLowerCase() === dest.ou.dn.toLowerCase()) {
    await audit('denied', 'same_ou', target, details);
    throw badRequest('same_ou');
  }
  try {
    await ctx.dir.moveObject(d.target.dn, rdn, dest.ou.dn, { as: await ctx.rt.writeCreds() });
  } catch (e) {
    await failed(e, audit, target, details, isDirectoryError(e, 'value_exists') ? conflict('name_taken', { at: dest.ou.dn }) : undefined);
  }
  const dn = `${rdn},${dest.ou.dn}`;
  await audit('success', 'succeeded', { ...target, dn }, details);
  return { outcome: 'succeeded', dn };
}

/** A destination given as a DN: the GUID of the OU there (undefined: no OU answers to it). */
async function destinationGuid(ctx: DecisionContext, ref: string): Promise<string | undefined> {
  const dn = await ctx.dir.filterOuDn(ref);
  return dn ? (await ctx.dir.readFactsByDn(dn, ['objectGUID']))?.guid : undefined;
}

// ---- users.rename

export const renameBodySchema = z
  .object({ cn: cnSchema.optional(), displayName: optionalText(256), givenName: optionalText(64), sn: optionalText(64), ticket: plainText().trim().max(200).optional() })
  .refine((b) => b.cn !== undefined || b.displayName !== undefined || b.givenName !== undefined || b.sn !== undefined, { message: 'at least one of cn, displayName, givenName, sn' });
export type RenameBody = z.infer<typeof renameBodySchema>;

/**
 * Rename a user: cn (the RDN: a modifyDN in place; `name` follows), displayName, givenName, sn
 * (null or '' clears the last three). Old and new values audited.
 */
export async function renameUser(ctx: DecisionContext, actor: Actor, userGuid: string, body: RenameBody, opts: ManagementOptions): Promise<ManagementResult> {
  const audit = auditRow(ctx, actor, 'users.rename', 'user', opts);
  const d = await decided(ctx, actor, 'user', 'users.rename', userGuid, opts, audit);
  let target = targetOf(userGuid, d);
  const a = d.target.attributes;
  const old: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  const changes: DirectoryChange[] = [];
  for (const k of ['displayName', 'givenName', 'sn'] as const) {
    const v = body[k];
    if (v === undefined) continue;
    old[k] = first(a[k]);
    now[k] = v === null || v === '' ? null : v;
    changes.push({ operation: 'replace', attribute: k, values: now[k] === null ? [] : [v as string] });
  }
  const { rdn, parent } = splitDn(d.target.dn);
  const newRdn = body.cn !== undefined ? `CN=${escapeRdnValue(body.cn)}` : undefined;
  if (newRdn && newRdn !== rdn) {
    old.cn = first(a.cn);
    now.cn = body.cn;
  }
  const details = { old, new: now };
  if (!changes.length && !('cn' in now)) {
    await audit('success', 'unchanged', target, details);
    return { outcome: 'succeeded', dn: d.target.dn };
  }
  const creds = await ctx.rt.writeCreds();
  let dn = d.target.dn;
  if ('cn' in now) {
    try {
      await ctx.dir.moveObject(dn, newRdn!, undefined, { as: creds });
    } catch (e) {
      await failed(e, audit, target, details, isDirectoryError(e, 'value_exists') ? conflict('name_taken', { at: parent }) : undefined);
    }
    dn = `${newRdn},${parent}`;
    target = { ...target, dn };
  }
  if (changes.length) {
    try {
      await ctx.dir.modify(dn, changes, { as: creds });
    } catch (e) {
      // the cn may already have changed: the row says partial, the answer names the failure
      if ('cn' in now) {
        const error = isWriteDenied(e) ? new ApiError(403, 'ad_denied') : directoryApiError(e);
        await audit('partial', error.code, target, details);
        return { outcome: 'partial', dn, code: error.code };
      }
      await failed(e, audit, target, details);
    }
  }
  await audit('success', 'succeeded', target, details);
  return { outcome: 'succeeded', dn };
}

// ---- users.rename.login

export const loginRenameBodySchema = z
  .object({ sAMAccountName: samAccountNameSchema.optional(), userPrincipalName: upnSchema.optional(), ticket: plainText().trim().max(200).optional() })
  .refine((b) => b.sAMAccountName !== undefined || b.userPrincipalName !== undefined, { message: 'sAMAccountName and/or userPrincipalName' });
export type LoginRenameBody = z.infer<typeof loginRenameBodySchema>;

/** The UPN suffixes the forest accepts: the domain's DNS name and the Partitions container's uPNSuffixes. */
async function upnSuffixes(ctx: DecisionContext): Promise<string[]> {
  const partitions = await ctx.dir.readAttributes(`CN=Partitions,CN=Configuration,${ctx.dir.baseDn}`, ['uPNSuffixes']).catch(() => undefined);
  const extra = ([] as unknown[]).concat(partitions?.uPNSuffixes ?? []).map(String);
  return [ctx.settings.domain, ...extra].map((s) => s.toLowerCase());
}

/**
 * Change a user's sign-in names (sAMAccountName, userPrincipalName): `users.rename.login` with
 * `users.rename` in the same delegation; step-up (route). Each new name must be unused in the whole
 * domain (any object): 409 `login_taken` naming the attribute; a UPN suffix the forest does not
 * know: 400 `upn_suffix_unknown`.
 */
export async function renameLogin(ctx: DecisionContext, actor: Actor, userGuid: string, body: LoginRenameBody, opts: ManagementOptions): Promise<ManagementResult> {
  const audit = auditRow(ctx, actor, 'users.rename.login', 'user', opts);
  const d = await decided(ctx, actor, 'user', 'users.rename.login', userGuid, opts, audit);
  const target = targetOf(userGuid, d);
  const a = d.target.attributes;
  const wanted: Array<['sAMAccountName' | 'userPrincipalName', string]> = [];
  if (body.sAMAccountName !== undefined && body.sAMAccountName !== first(a.sAMAccountName)) wanted.push(['sAMAccountName', body.sAMAccountName]);
  if (body.userPrincipalName !== undefined && body.userPrincipalName.toLowerCase() !== String(first(a.userPrincipalName) ?? '').toLowerCase()) wanted.push(['userPrincipalName', body.userPrincipalName]);
  const details = { old: Object.fromEntries(wanted.map(([k]) => [k, first(a[k])])), new: Object.fromEntries(wanted) };
  if (!wanted.length) {
    await audit('success', 'unchanged', target, details);
    return { outcome: 'succeeded', dn: d.target.dn };
  }
  const upn = wanted.find(([k]) => k === 'userPrincipalName')?.[1];
  if (upn && !(await upnSuffixes(ctx)).includes(upn.split('@')[1].toLowerCase())) {
    await audit('denied', 'upn_suffix_unknown', target, details);
    throw badRequest('upn_suffix_unknown', { suffix: upn.split('@')[1] });
  }
  // uniqueness over the whole domain, any object (computers share the sAMAccountName space)
  const filter = `(|${wanted.map(([k, v]) => `(${k}=${escapeFilterValue(v)})`).join('')})`;
  const clash = (await ctx.dir.search({ base: ctx.dir.baseDn, filter, attributes: ['objectGUID', 'sAMAccountName', 'userPrincipalName'], max: 5 })).entries.filter(
    (e) => e.guid.toLowerCase() !== userGuid.toLowerCase(),
  );
  if (clash.length) {
    const taken = wanted.filter(([k, v]) => clash.some((e) => String(first(e.attributes[k]) ?? '').toLowerCase() === v.toLowerCase())).map(([k]) => k);
    await audit('denied', 'login_taken', target, { ...details, taken });
    throw conflict('login_taken', { attributes: taken });
  }
  try {
    await ctx.dir.modify(
      d.target.dn,
      wanted.map(([k, v]) => ({ operation: 'replace', attribute: k, values: [v] })),
      { as: await ctx.rt.writeCreds() },
    );
  } catch (e) {
    // the directory's own uniqueness check (a name taken since, or hidden from the read account)
    await failed(e, audit, target, details, isDirectoryError(e, 'value_exists', 'constraint') ? conflict('login_taken', { attributes: wanted.map(([k]) => k) }) : undefined);
  }
  await audit('success', 'succeeded', target, details);
  return { outcome: 'succeeded', dn: d.target.dn };
}

// ---- groups.create

const GROUP_SCOPES = { global: 0x2, domainLocal: 0x4, universal: 0x8 } as const;
export const createGroupBodySchema = z.object({
  ou: plainText().trim().min(1).max(1024),
  name: groupSamSchema,
  description: plainText().trim().max(1024).optional(),
  scope: z.enum(['global', 'domainLocal', 'universal']).default('global'),
  security: z.boolean().default(true),
  ticket: plainText().trim().max(200).optional(),
});
export type CreateGroupBody = z.infer<typeof createGroupBodySchema>;

/** Create a group in an OU of the operator's `groups.create` scope (never a Tier 0/1 OU or a container that is not an OU). */
export async function createGroup(ctx: DecisionContext, actor: Actor, body: CreateGroupBody, opts: ManagementOptions): Promise<ManagementResult> {
  const audit = auditRow(ctx, actor, 'groups.create', 'group', opts);
  const ouGuid = isGuid(body.ou) ? body.ou : await destinationGuid(ctx, body.ou);
  const details = { ou: body.ou, name: body.name, scope: body.scope, security: body.security, ...(body.description ? { description: body.description } : {}) };
  if (!ouGuid) {
    await audit('denied', 'ou:not_found', { name: body.name }, details);
    throw notFound();
  }
  const ou = await decideOnOu(ctx, actor, 'groups.create', ouGuid, { correlationId: opts.correlationId, audit: true });
  if (!ou.allowed) {
    await audit('denied', `ou:${ou.reason}`, { name: body.name }, details);
    throw ou.status === 404 ? notFound() : forbidden('forbidden', { reason: ou.reason });
  }
  const dn = `CN=${escapeRdnValue(body.name)},${ou.ou.dn}`;
  const target = { name: body.name, dn };
  const taken = await ctx.dir.search({ base: ctx.dir.baseDn, filter: `(sAMAccountName=${escapeFilterValue(body.name)})`, attributes: ['objectGUID'], max: 1 });
  if (taken.entries.length) {
    await audit('denied', 'name_taken', target, details);
    throw conflict('name_taken');
  }
  const groupType = GROUP_SCOPES[body.scope] | (body.security ? 0x80000000 : 0);
  try {
    await ctx.dir.addObject(
      dn,
      { objectClass: ['top', 'group'], sAMAccountName: body.name, groupType: String(groupType | 0), ...(body.description ? { description: body.description } : {}) },
      { as: await ctx.rt.writeCreds() },
    );
  } catch (e) {
    await failed(e, audit, target, details, isDirectoryError(e, 'value_exists') ? conflict('name_taken') : undefined);
  }
  const id = (await ctx.dir.readFactsByDn(dn, ['objectGUID']))?.guid;
  await audit('success', 'succeeded', { ...target, id }, { ...details, ou: ou.ou.dn });
  return { outcome: 'succeeded', id, dn };
}

// ---- groups.delete

/** What an operator confirms before a group with members is deleted: this exact member list. */
export const membersConfirmation = (memberDns: string[]) =>
  createHash('sha256')
    .update(
      memberDns
        .map((m) => m.toLowerCase())
        .sort()
        .join('\n'),
    )
    .digest('base64url')
    .slice(0, 22);

export const deleteGroupBodySchema = z.object({ confirmMembers: z.string().max(64).optional(), ticket: plainText().trim().max(200).optional() }).default({});

/** Every member DN of a group (ranged values included). */
async function memberDns(ctx: DecisionContext, dn: string): Promise<string[]> {
  const g = await ctx.dir.readAttributes(dn, ['member']);
  const raw = Object.entries(g ?? {}).find(([k]) => k.toLowerCase().startsWith('member'))?.[1];
  return raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
}

/**
 * Delete a standard group (`groups.delete`; step-up at the route). A group with members only
 * after seeing and confirming them: without `confirmMembers` equal to the confirmation of the
 * current member list (GET /api/groups/{id}/members answers it), 409 `members_not_confirmed`
 * with the member count and the confirmation to send back.
 */
export async function deleteGroup(ctx: DecisionContext, actor: Actor, groupGuid: string, confirm: string | undefined, opts: ManagementOptions): Promise<ManagementResult> {
  const audit = auditRow(ctx, actor, 'groups.delete', 'group', opts);
  const d = await decided(ctx, actor, 'group', 'groups.delete', groupGuid, opts, audit);
  const target = targetOf(groupGuid, d);
  const members = await memberDns(ctx, d.target.dn);
  const details = { members: members.length, memberDns: members.slice(0, 50), old: { description: first(d.target.attributes.description) } };
  if (members.length && confirm !== membersConfirmation(members)) {
    await audit('denied', 'members_not_confirmed', target, details);
    throw conflict('members_not_confirmed', { count: members.length, confirmMembers: membersConfirmation(members) });
  }
  try {
    await ctx.dir.deleteObject(d.target.dn, { as: await ctx.rt.writeCreds() });
  } catch (e) {
    await failed(e, audit, target, details);
  }
  await audit('success', 'succeeded', target, details);
  return { outcome: 'succeeded' };
}

// ---- groups.attributes.write

export const groupAttributesSchema = z
  .object({ description: optionalText(1024), managedBy: z.string().refine(isGuid, 'a user or group GUID').nullable().optional(), mail: optionalText(256), info: optionalText(1024) })
  .strict()
  .refine((o) => Object.values(o).some((v) => v !== undefined), { message: 'at least one attribute' });
export type GroupAttributes = z.infer<typeof groupAttributesSchema>;

/**
 * Write a group's description, managedBy, mail, info (null or '' clears). managedBy names a user
 * or group by GUID: never a never-manageable one (400 `manager_not_allowed`), never the operator's
 * own account (403 `own_account`: nobody makes themselves a group's owner).
 */
export async function writeGroupAttributes(ctx: DecisionContext, actor: Actor, groupGuid: string, attrs: GroupAttributes, opts: ManagementOptions): Promise<ManagementResult> {
  const audit = auditRow(ctx, actor, 'groups.attributes.write', 'group', opts);
  const d = await decided(ctx, actor, 'group', 'groups.attributes.write', groupGuid, opts, audit);
  const target = targetOf(groupGuid, d);
  const a = d.target.attributes;
  const old: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  const changes: DirectoryChange[] = [];
  for (const [k, v] of Object.entries(attrs) as Array<[keyof GroupAttributes, string | null | undefined]>) {
    if (v === undefined) continue;
    let value = v === null || v === '' ? null : v;
    if (k === 'managedBy' && value !== null) {
      if (value.toLowerCase() === actor.identity.guid.toLowerCase()) {
        await audit('denied', 'own_account', target, { managedBy: value });
        throw forbidden('own_account');
      }
      const manager = (await classifyTarget(ctx, 'user', value)) ?? undefined;
      const asGroup = !manager || manager.cls.kind === 'never' ? await classifyTarget(ctx, 'group', value) : undefined;
      const m = manager && manager.cls.kind !== 'never' ? manager : asGroup;
      if (!m || m.cls.kind === 'never') {
        await audit('denied', 'manager_not_allowed', target, { managedBy: value });
        throw badRequest('manager_not_allowed');
      }
      value = m.target.dn;
    }
    old[k] = first(a[k]);
    now[k] = value;
    changes.push({ operation: 'replace', attribute: k, values: value === null ? [] : [value] });
  }
  const details = { old, new: now };
  try {
    await ctx.dir.modify(d.target.dn, changes, { as: await ctx.rt.writeCreds() });
  } catch (e) {
    await failed(e, audit, target, details);
  }
  await audit('success', 'succeeded', target, details);
  return { outcome: 'succeeded' };
}
