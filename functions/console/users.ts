import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { actorOf } from '@lib/authz/engine';
import { decisionContext } from '@lib/runtime';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, objectIdParams, type RouteContext } from '@lib/http/route';
import { getUser, searchUsers, userSearchQuerySchema } from '@lib/users';
import { actionOutcome, managementResult, passwordReset, userDetail, userPage } from '@lib/api/console/directory';
import { ACTIONS, DIRECTORY_READ, MANAGEMENT, SCOPED_LIST } from '@lib/api/console/errors';
import { errorCodes } from '@lib/http/answers';
import { actionAnswer, attributesSchema, loginRenameBodySchema, moveBodySchema, moveUser, performAction, renameBodySchema, renameLogin, renameUser, type ActionParams } from '@lib/actions';

// Users: read views (users.read) and the approvable actions, each decided again by the engine.
const ticketBody = z.object({ ticket: plainText().trim().max(200).optional() });

async function run(c: RouteContext<{ ticket?: string }, unknown, { id: string }>, params: ActionParams) {
  const result = await performAction(await decisionContext(c.rt), actorOf(c), c.params.id, params, { correlationId: c.correlationId, ticket: c.body.ticket || undefined });
  return { body: actionAnswer(result) };
}

const search = defineRoute({
  method: 'GET',
  path: '/api/users',
  summary: "Search users (q), or list the operator's scope; pages of 50, `truncated` with a cursor for the next 50",
  access: 'operator',
  permission: 'users.read',
  query: userSearchQuerySchema,
  responses: { 200: userPage },
  errors: SCOPED_LIST,
  async handle(c) {
    return { body: await searchUsers(await decisionContext(c.rt), actorOf(c), c.query, await c.rt.masterKey()) };
  },
});

const detail = defineRoute({
  method: 'GET',
  path: '/api/users/{id}',
  summary: 'One user (read view with action hints: direct, approval or no); 404 when not readable',
  access: 'operator',
  permission: 'users.read',
  params: objectIdParams,
  responses: { 200: userDetail },
  errors: DIRECTORY_READ,
  async handle(c) {
    return { body: await getUser(await decisionContext(c.rt), actorOf(c), c.params.id, c.correlationId) };
  },
});

const simple = (verb: 'unlock' | 'disable' | 'enable') =>
  defineRoute({
    method: 'POST',
    path: `/api/users/{id}/${verb}`,
    summary: `users.${verb} (step-up; 403 approval_required when held only with approval: file a request)`,
    access: 'operator',
    permission: `users.${verb}`,
    stepUp: true,
    params: objectIdParams,
    body: ticketBody,
    responses: { 200: actionOutcome },
    errors: ACTIONS,
    handle: (c) => run(c, { action: `users.${verb}` }),
  });

const resetPassword = defineRoute({
  method: 'POST',
  path: '/api/users/{id}/reset-password',
  summary: 'users.password.reset: the password service generates and sets a password, shown once in this answer',
  access: 'operator',
  permission: 'users.password.reset',
  helpdesk: true,
  stepUp: true,
  params: objectIdParams,
  body: ticketBody.extend({ mustChange: z.boolean().default(true), unlock: z.boolean().default(false) }),
  responses: { 200: passwordReset },
  errors: ACTIONS,
  async handle(c) {
    const { body } = await run(c, { action: 'users.password.reset', mustChange: c.body.mustChange, unlock: c.body.unlock });
    // a reset that succeeded generated the password (lib/actions): it is shown in this answer only
    if (body.password === undefined) throw new Error('a reset answered without its password');
    return { body: { ...body, password: body.password } };
  },
});

const attributes = defineRoute({
  method: 'PUT',
  path: '/api/users/{id}/attributes',
  summary: 'users.attributes.write: description, displayName, givenName, sn, mail, telephoneNumber (null clears)',
  access: 'operator',
  permission: 'users.attributes.write',
  stepUp: true,
  params: objectIdParams,
  body: ticketBody.extend({ attributes: attributesSchema }),
  responses: { 200: actionOutcome },
  errors: ACTIONS,
  handle: (c) => run(c, { action: 'users.attributes.write', attributes: c.body.attributes }),
});

// Moves and renames (console spec, Moves, renames and groups): never approvable, decided by the engine.

const move = defineRoute({
  method: 'POST',
  path: '/api/users/{id}/move',
  summary: 'users.move: move a user to another OU of the users.move scope (destination: OU GUID or DN); Tier 0/1 OUs and containers answer 404',
  access: 'operator',
  permission: 'users.move',
  params: objectIdParams,
  body: moveBodySchema,
  responses: { 200: managementResult },
  errors: errorCodes(MANAGEMENT, { 400: ['same_ou'], 409: ['name_taken'] }),
  async handle(c) {
    return { body: await moveUser(await decisionContext(c.rt), actorOf(c), c.params.id, c.body.destination, { correlationId: c.correlationId, ticket: c.body.ticket || undefined }) };
  },
});

const rename = defineRoute({
  method: 'POST',
  path: '/api/users/{id}/rename',
  summary: 'users.rename: cn (the object name), displayName, givenName, sn; 409 name_taken when the OU already holds that cn',
  access: 'operator',
  permission: 'users.rename',
  params: objectIdParams,
  body: renameBodySchema,
  responses: { 200: managementResult },
  errors: errorCodes(MANAGEMENT, { 409: ['name_taken'] }),
  async handle(c) {
    return { body: await renameUser(await decisionContext(c.rt), actorOf(c), c.params.id, c.body, { correlationId: c.correlationId, ticket: c.body.ticket || undefined }) };
  },
});

const renameLoginRoute = defineRoute({
  method: 'POST',
  path: '/api/users/{id}/rename-login',
  summary: 'users.rename.login: sAMAccountName and/or userPrincipalName, unique in the domain (409 login_taken); step-up',
  access: 'operator',
  permission: 'users.rename.login',
  stepUp: true,
  params: objectIdParams,
  body: loginRenameBodySchema,
  responses: { 200: managementResult },
  errors: errorCodes(MANAGEMENT, { 400: ['upn_suffix_unknown'], 409: ['login_taken'] }),
  async handle(c) {
    return { body: await renameLogin(await decisionContext(c.rt), actorOf(c), c.params.id, c.body, { correlationId: c.correlationId, ticket: c.body.ticket || undefined }) };
  },
});

export const routes = [search, detail, simple('unlock'), simple('disable'), simple('enable'), resetPassword, attributes, move, rename, renameLoginRoute];
export const handler = consoleHandler(routes);
