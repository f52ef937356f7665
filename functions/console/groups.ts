import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { actorOf } from '@lib/authz/engine';
import { decisionContext } from '@lib/runtime';
import { isGuid } from '@lib/directory/guid';
import { getGroup, groupMembers, groupSearchQuerySchema, searchGroups } from '@lib/groups';
import { groupDetail, groupMembersPage, groupMembersResult, groupPage, managementResult } from '@lib/api/console/directory';
import { ACTIONS, DIRECTORY_READ, MANAGEMENT, SCOPED_LIST } from '@lib/api/console/errors';
import { errorCodes } from '@lib/http/answers';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, objectIdParams } from '@lib/http/route';
import type { ActionResult } from '@lib/actions';
import { actionAnswer, changeGroupMembers, createGroup, createGroupBodySchema, deleteGroup, deleteGroupBodySchema, groupAttributesSchema, groupMembersChangeSchema, performAction, writeGroupAttributes } from '@lib/actions';

// Groups: read views (groups.read) and member changes (groups.members.write, approvable).
const guid = z.string().refine(isGuid, 'a GUID');

/** A members change answers each member's outcome. */
const membersAnswer = (result: ActionResult) => ({ ...actionAnswer(result), members: result.members ?? [] });

const search = defineRoute({
  method: 'GET',
  path: '/api/groups',
  summary: "Search groups (q), or list the operator's scope; Directory:MaxResults per page, `truncated` with a cursor",
  access: 'operator',
  permission: 'groups.read',
  query: groupSearchQuerySchema,
  responses: { 200: groupPage },
  errors: SCOPED_LIST,
  async handle(c) {
    return { body: await searchGroups(await decisionContext(c.rt), actorOf(c), c.query, await c.rt.masterKey()) };
  },
});

const detail = defineRoute({
  method: 'GET',
  path: '/api/groups/{id}',
  summary: 'One group (read view with action hints); 404 when not readable',
  access: 'operator',
  permission: 'groups.read',
  params: objectIdParams,
  responses: { 200: groupDetail },
  errors: DIRECTORY_READ,
  async handle(c) {
    return { body: await getGroup(await decisionContext(c.rt), actorOf(c), c.params.id, c.correlationId) };
  },
});

const members = defineRoute({
  method: 'GET',
  path: '/api/groups/{id}/members',
  summary: 'Members of a group, at most Directory:MaxResults; never-manageable members only counted (`omitted`)',
  access: 'operator',
  permission: 'groups.read',
  params: objectIdParams,
  responses: { 200: groupMembersPage },
  errors: DIRECTORY_READ,
  async handle(c) {
    return { body: await groupMembers(await decisionContext(c.rt), actorOf(c), c.params.id, c.correlationId) };
  },
});

const change = defineRoute({
  method: 'POST',
  path: '/api/groups/{id}/members',
  summary: 'groups.members.write: add and/or remove members (GUIDs); step-up; one audit row per member',
  access: 'operator',
  permission: 'groups.members.write',
  stepUp: true,
  params: objectIdParams,
  body: groupMembersChangeSchema,
  responses: { 200: groupMembersResult },
  errors: ACTIONS,
  async handle(c) {
    const result = await performAction(await decisionContext(c.rt), actorOf(c), c.params.id, { action: 'groups.members.write', add: c.body.add, remove: c.body.remove }, { correlationId: c.correlationId, ticket: c.body.ticket || undefined });
    return { body: membersAnswer(result) };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/api/groups/{id}/members/{memberId}',
  summary: 'groups.members.write: remove one member; step-up',
  access: 'operator',
  permission: 'groups.members.write',
  stepUp: true,
  params: z.object({ id: z.string(), memberId: guid }),
  responses: { 200: groupMembersResult },
  errors: ACTIONS,
  async handle(c) {
    const result = await performAction(await decisionContext(c.rt), actorOf(c), c.params.id, { action: 'groups.members.write', add: [], remove: [c.params.memberId] }, { correlationId: c.correlationId });
    return { body: membersAnswer(result) };
  },
});

// Group management (console spec, Moves, renames and groups): never approvable, decided by the engine.
const ticket = plainText().trim().max(200).optional();
const opts = (c: { correlationId: string }, t?: string) => ({ correlationId: c.correlationId, ticket: t || undefined });

const create = defineRoute({
  method: 'POST',
  path: '/api/groups',
  summary: 'groups.create: a group in an OU of the scope (ou: GUID or DN); 409 name_taken; Tier 0/1 OUs and containers answer 404',
  access: 'operator',
  permission: 'groups.create',
  body: createGroupBodySchema,
  responses: { 201: managementResult },
  errors: errorCodes(MANAGEMENT, { 409: ['name_taken'] }),
  async handle(c) {
    return { status: 201, body: await createGroup(await decisionContext(c.rt), actorOf(c), c.body, opts(c, c.body.ticket)) };
  },
});

const destroy = defineRoute({
  method: 'DELETE',
  path: '/api/groups/{id}',
  summary: 'groups.delete: a standard group; with members only with confirmMembers from GET /api/groups/{id}/members (409 members_not_confirmed otherwise); step-up',
  access: 'operator',
  permission: 'groups.delete',
  stepUp: true,
  params: objectIdParams,
  body: deleteGroupBodySchema,
  responses: { 200: managementResult },
  errors: errorCodes(MANAGEMENT, { 409: ['members_not_confirmed'] }),
  async handle(c) {
    return { body: await deleteGroup(await decisionContext(c.rt), actorOf(c), c.params.id, c.body?.confirmMembers, opts(c, c.body?.ticket)) };
  },
});

const attributes = defineRoute({
  method: 'PUT',
  path: '/api/groups/{id}/attributes',
  summary: 'groups.attributes.write: description, managedBy (a user or group GUID), mail, info (null clears)',
  access: 'operator',
  permission: 'groups.attributes.write',
  params: objectIdParams,
  body: z.object({ attributes: groupAttributesSchema, ticket }),
  responses: { 200: managementResult },
  errors: errorCodes(MANAGEMENT, { 400: ['manager_not_allowed'] }),
  async handle(c) {
    return { body: await writeGroupAttributes(await decisionContext(c.rt), actorOf(c), c.params.id, c.body.attributes, opts(c, c.body.ticket)) };
  },
});

const owned = defineRoute({
  method: 'POST',
  path: '/api/groups/{id}/owned-members',
  summary: "groups.owned.members.write: add and/or remove members of a group whose manager (managedBy) is the operator's own account",
  access: 'operator',
  permission: 'groups.owned.members.write',
  params: objectIdParams,
  body: z.object({ add: z.array(guid).max(50).default([]), remove: z.array(guid).max(50).default([]), ticket }),
  responses: { 200: groupMembersResult },
  errors: ACTIONS,
  async handle(c) {
    const result = await changeGroupMembers(await decisionContext(c.rt), actorOf(c), c.params.id, { add: c.body.add, remove: c.body.remove }, opts(c, c.body.ticket), 'groups.owned.members.write');
    return { body: membersAnswer(result) };
  },
});

export const routes = [search, detail, members, change, remove, create, destroy, attributes, owned];
export const handler = consoleHandler(routes);
