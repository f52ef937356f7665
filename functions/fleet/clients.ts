import { z } from 'zod';
import { applyClientRoleAudited, clientRoleName, clientRoleYaml } from '@lib/fleet/client-role';
import { clientCodeSchema, clientCreateSchema, clientUpdateSchema } from '@lib/fleet/clients';
import { fleetHandler } from '@lib/fleet/http';
import { clientsInScope, editClient, registerClient, removeClient, requireClient } from '@lib/fleet/register';
import { clientResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { CLUSTER, TOKEN_REVOKE } from '@lib/api/fleet/errors';
import { errorCodes, noContent } from '@lib/http/answers';

const codeParams = z.object({ code: clientCodeSchema });
const applyRoleSchema = z.object({ overwrite: z.boolean().optional() }).strict();

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/clients',
  summary: 'The client register, filtered by scope',
  access: 'signed-in',
  responses: { 200: A.clients },
  async handle({ rt, access }) {
    return { body: { clients: await clientsInScope(rt, access!) } };
  },
});

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/clients',
  summary: 'Register a client (administrators); 409 client_exists',
  access: 'admin',
  body: clientCreateSchema,
  responses: { 201: A.client },
  errors: { 409: ['client_exists'] },
  async handle(ctx) {
    return { status: 201, body: await registerClient(ctx.rt, ctx.body, ctx) };
  },
});

const get = defineFleetRoute({
  method: 'GET',
  path: '/api/clients/{code}',
  summary: 'One client (viewer of the client)',
  access: 'client',
  level: 'viewer',
  params: codeParams,
  resource: clientResource,
  responses: { 200: A.client },
  async handle({ addressed }) {
    return { body: addressed!.resource };
  },
});

const update = defineFleetRoute({
  method: 'PUT',
  path: '/api/clients/{code}',
  summary: "Edit the client's register entry: name, notes, contacts (operator of the client)",
  access: 'client',
  level: 'operator',
  params: codeParams,
  resource: clientResource,
  body: clientUpdateSchema,
  responses: { 200: A.client },
  errors: { 409: ['concurrent_update'] },
  async handle(ctx) {
    return { body: await editClient(ctx.rt, ctx.params.code, ctx.body, ctx) };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/clients/{code}',
  summary: 'Delete a client (administrators); also removes it from every technician assignment',
  access: 'admin',
  params: codeParams,
  responses: { 204: noContent('Removed, with its technician assignments and open deployments') },
  errors: errorCodes(TOKEN_REVOKE, { 409: ['client_has_consoles'] }),
  async handle(ctx) {
    await removeClient(ctx.rt, ctx.params.code, ctx);
    return { status: 204 };
  },
});

const accessRole = defineFleetRoute({
  method: 'GET',
  path: '/api/clients/{code}/access-role',
  summary: "The client's access role as the cluster takes it: { name, yaml } (role v7; viewer of the client)",
  access: 'client',
  level: 'viewer',
  params: codeParams,
  resource: clientResource,
  responses: { 200: A.accessRole },
  async handle({ addressed }) {
    const client = addressed!.resource;
    return { body: { name: clientRoleName(client.code), yaml: clientRoleYaml(client) } };
  },
});

const applyAccessRole = defineFleetRoute({
  method: 'POST',
  path: '/api/clients/{code}/access-role',
  summary: "Create or refresh the client's access role in the cluster (administrators; audited client.role.apply); 409 would_overwrite for a role the fleet did not create, unless { overwrite: true }",
  access: 'admin',
  params: codeParams,
  body: applyRoleSchema,
  responses: { 200: A.accessRoleApplied, 201: A.accessRoleApplied },
  errors: errorCodes(CLUSTER, { 409: ['would_overwrite'] }),
  async handle(ctx) {
    const client = await requireClient(ctx.rt, ctx.params.code);
    const r = await applyClientRoleAudited(ctx.rt, client, ctx.body.overwrite === true, ctx);
    return { status: r.outcome === 'created' ? 201 : 200, body: r };
  },
});

export const routes = [list, create, get, update, remove, accessRole, applyAccessRole];
export const handler = fleetHandler(routes);
