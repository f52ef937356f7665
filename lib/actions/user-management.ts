import { z } from 'zod';
import { plainText } from '../plain-text';
import { decideOnOu, type Actor, type DecisionContext } from '../authz/engine';
import { directoryApiError, escapeFilterValue, isDirectoryError, isGuid, type DirectoryChange } from '../directory';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../errors';
import { auditRow, cnSchema, decided, destinationGuid, escapeRdnValue, failed, first, isWriteDenied, optionalText, samAccountNameSchema, splitDn, upnSchema, targetOf, ticketField, type ManagementOptions, type ManagementResult } from './management';

// Users' moves and renames (console spec, Moves, renames and groups): users.move, users.rename,
// users.rename.login, each decided, executed with the write account and audited (./management).

// ---- users.move

export const moveBodySchema = z.object({ destination: plainText().trim().min(1).max(1024), ticket: ticketField });

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

// ---- users.rename

export const renameBodySchema = z
  .object({ cn: cnSchema.optional(), displayName: optionalText(256), givenName: optionalText(64), sn: optionalText(64), ticket: ticketField })
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
  .object({ sAMAccountName: samAccountNameSchema.optional(), userPrincipalName: upnSchema.optional(), ticket: ticketField })
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

