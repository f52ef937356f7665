import { z } from 'zod';
import { clientCodeSchema, clientCreateSchema, clientUpdateSchema, createClient, deleteClient, listClients, updateClient, type Client } from '@lib/fleet/clients';
import { listConsoles } from '@lib/fleet/consoles';
import { fleetHandler } from '@lib/fleet/http';
import { clientResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const codeParams = z.object({ code: clientCodeSchema });

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/clients',
  summary: 'The client register, filtered by scope',
  access: 'signed-in',
  async handle({ rt, access }) {
    const visible = access!.visibleCodes();
    const clients = (await listClients(rt.store)).filter((c) => !visible || visible.has(c.code));
    return { body: { clients: clients.map((c) => ({ ...c, level: access!.levelOn(c.code) })) } };
  },
});

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/clients',
  summary: 'Register a client (administrators); 409 client_exists',
  access: 'admin',
  body: clientCreateSchema,
  async handle({ rt, body, actor, correlationId }) {
    const client = await createClient(rt.store, body);
    await rt.audit.append({ event: 'client.create', outcome: 'success', actor, client: client.code, target: { id: client.code, name: client.name, kind: 'client' }, correlationId });
    return { status: 201, body: client };
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
  async handle({ rt, params, body, actor, correlationId }) {
    const client = await updateClient(rt.store, params.code, body);
    const fields = Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined);
    await rt.audit.append({ event: 'client.update', outcome: 'success', actor, client: client.code, target: { id: client.code, name: client.name, kind: 'client' }, correlationId, details: { fields } });
    return { body: client };
  },
});

const remove = defineFleetRoute<undefined, undefined, { code: string }, Client>({
  method: 'DELETE',
  path: '/api/clients/{code}',
  summary: 'Delete a client (administrators); also removes it from every technician assignment',
  access: 'admin',
  params: codeParams,
  async handle({ rt, params, actor, correlationId }) {
    const consoles = (await listConsoles(rt.store)).filter((c) => c.clientCode === params.code).length;
    await deleteClient(rt.store, params.code, consoles);
    await rt.audit.append({ event: 'client.delete', outcome: 'success', actor, client: params.code, target: { id: params.code, kind: 'client' }, correlationId });
    return { status: 204 };
  },
});

export const routes = [list, create, get, update, remove];
export const handler = fleetHandler(routes);
