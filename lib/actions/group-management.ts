import { createHash } from 'node:crypto';
import { z } from 'zod';
import { plainText } from '../plain-text';
import { classifyTarget, decideOnOu, type Actor, type DecisionContext } from '../authz/engine';
import { escapeFilterValue, isDirectoryError, isGuid, type DirectoryChange } from '../directory';
import { badRequest, conflict, forbidden, notFound } from '../errors';
import { auditRow, decided, destinationGuid, escapeRdnValue, failed, first, groupSamSchema, optionalText, targetOf, ticketField, type ManagementOptions, type ManagementResult } from './management';

// Group management (console spec, Moves, renames and groups): groups.create, groups.delete,
// groups.attributes.write; never approvable, decided by the engine, audited (./management).

// ---- groups.create

const GROUP_SCOPES = { global: 0x2, domainLocal: 0x4, universal: 0x8 } as const;
export const createGroupBodySchema = z.object({
  ou: plainText().trim().min(1).max(1024),
  name: groupSamSchema,
  description: plainText().trim().max(1024).optional(),
  scope: z.enum(['global', 'domainLocal', 'universal']).default('global'),
  security: z.boolean().default(true),
  ticket: ticketField,
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

export const deleteGroupBodySchema = z.object({ confirmMembers: z.string().max(64).optional(), ticket: ticketField }).default({});

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
/** The body of PUT /api/groups/{id}/attributes. */
export const groupAttributesBodySchema = z.object({ attributes: groupAttributesSchema, ticket: ticketField });

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
