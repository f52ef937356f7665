import { actorOf } from '@lib/authz/engine';
import { decisionContext } from '@lib/runtime';
import { getGroup, groupMembers, groupSearchQuerySchema, searchGroups } from '@lib/groups';
import { groupDetail, groupMembersPage, groupMembersResult, groupPage, managementResult } from '@lib/api/console/directory';
import { ACTIONS, DIRECTORY_READ, MANAGEMENT, SCOPED_LIST } from '@lib/api/console/errors';
import { errorCodes } from '@lib/http/answers';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, objectIdParams } from '@lib/http/route';
import { changeGroupMembers, createGroup, createGroupBodySchema, deleteGroup, deleteGroupBodySchema, groupAttributesBodySchema, groupMembersChangeSchema, managementOptions, membersAnswer, performAction, removeMemberParams, writeGroupAttributes } from '@lib/actions';

// Groups: read views (groups.read) and member changes (groups.members.write, approvable).
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
    return { body: membersAnswer(await performAction(await decisionContext(c.rt), actorOf(c), c.params.id, { action: 'groups.members.write', add: c.body.add, remove: c.body.remove }, managementOptions(c.correlationId, c.body.ticket))) };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/api/groups/{id}/members/{memberId}',
  summary: 'groups.members.write: remove one member; step-up',
  access: 'operator',
  permission: 'groups.members.write',
  stepUp: true,
  params: removeMemberParams,
  responses: { 200: groupMembersResult },
  errors: ACTIONS,
  async handle(c) {
    return { body: membersAnswer(await performAction(await decisionContext(c.rt), actorOf(c), c.params.id, { action: 'groups.members.write', add: [], remove: [c.params.memberId] }, managementOptions(c.correlationId))) };
  },
});

// Group management (console spec, Moves, renames and groups): never approvable, decided by the engine.

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
    return { status: 201, body: await createGroup(await decisionContext(c.rt), actorOf(c), c.body, managementOptions(c.correlationId, c.body.ticket)) };
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
    return { body: await deleteGroup(await decisionContext(c.rt), actorOf(c), c.params.id, c.body?.confirmMembers, managementOptions(c.correlationId, c.body?.ticket)) };
  },
});

const attributes = defineRoute({
  method: 'PUT',
  path: '/api/groups/{id}/attributes',
  summary: 'groups.attributes.write: description, managedBy (a user or group GUID), mail, info (null clears)',
  access: 'operator',
  permission: 'groups.attributes.write',
  params: objectIdParams,
  body: groupAttributesBodySchema,
  responses: { 200: managementResult },
  errors: errorCodes(MANAGEMENT, { 400: ['manager_not_allowed'] }),
  async handle(c) {
    return { body: await writeGroupAttributes(await decisionContext(c.rt), actorOf(c), c.params.id, c.body.attributes, managementOptions(c.correlationId, c.body.ticket)) };
  },
});

const owned = defineRoute({
  method: 'POST',
  path: '/api/groups/{id}/owned-members',
  summary: "groups.owned.members.write: add and/or remove members of a group whose manager (managedBy) is the operator's own account",
  access: 'operator',
  permission: 'groups.owned.members.write',
  params: objectIdParams,
  body: groupMembersChangeSchema,
  responses: { 200: groupMembersResult },
  errors: ACTIONS,
  async handle(c) {
    return { body: membersAnswer(await changeGroupMembers(await decisionContext(c.rt), actorOf(c), c.params.id, { add: c.body.add, remove: c.body.remove }, managementOptions(c.correlationId, c.body.ticket), 'groups.owned.members.write')) };
  },
});

export const routes = [search, detail, members, change, remove, create, destroy, attributes, owned];
export const handler = consoleHandler(routes);
