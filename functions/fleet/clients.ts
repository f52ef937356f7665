import { z } from 'zod';
import { clientCodeSchema, clientCreateSchema, clientUpdateSchema, type Client } from '@lib/fleet/clients';
import { fleetHandler } from '@lib/fleet/http';
import { clientsInScope, editClient, registerClient, removeClient } from '@lib/fleet/register';
import { clientResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const codeParams = z.object({ code: clientCodeSchema });

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/clients',
  summary: 'The client register, filtered by scope',
  access: 'signed-in',
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
  async handle(ctx) {
    return { status: 201, body: await registerClient(ctx.rt, ctx.body, ctx) };
  },
});

const get = defineFleetRoute<undefined, undefined, { code: string }, Client>({
  method: 'GET',
  path: '/api/clients/{code}',
  summary: 'One client (viewer of the client)',
  access: 'client',
  level: 'viewer',
  params: codeParams,
  resource: clientResource,
  async handle({ addressed }) {
    return { body: addressed!.resource };
  },
});

const update = defineFleetRoute<z.output<typeof clientUpdateSchema>, undefined, { code: string }, Client>({
  method: 'PUT',
  path: '/api/clients/{code}',
  summary: "Edit the client's register entry: name, notes, contacts (operator of the client)",
  access: 'client',
  level: 'operator',
  params: codeParams,
  resource: clientResource,
  body: clientUpdateSchema,
  async handle(ctx) {
    return { body: await editClient(ctx.rt, ctx.params.code, ctx.body, ctx) };
  },
});

const remove = defineFleetRoute<undefined, undefined, { code: string }, Client>({
  method: 'DELETE',
  path: '/api/clients/{code}',
  summary: 'Delete a client (administrators); also removes it from every technician assignment',
  access: 'admin',
  params: codeParams,
  async handle(ctx) {
    await removeClient(ctx.rt, ctx.params.code, ctx);
    return { status: 204 };
  },
});

export const routes = [list, create, get, update, remove];
export const handler = fleetHandler(routes);
