import { z } from 'zod';
import { clientCodeSchema } from '@lib/fleet/clients';
import { changedConsoleFields, consoleCreateSchema, consoleUpdateSchema } from '@lib/fleet/consoles';
import { hasLevel } from '@lib/fleet/guard';
import { fleetHandler } from '@lib/fleet/http';
import { addConsole, consoleWithDrift, consolesInScope, editConsole, removeConsole, requireRegisteredClient } from '@lib/fleet/register';
import { consoleResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { noContent } from '@lib/http/answers';

const idParams = z.object({ id: z.uuid() });

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/consoles',
  summary: 'Consoles of the clients in scope (optional ?clientCode=)',
  access: 'signed-in',
  query: z.object({ clientCode: clientCodeSchema.optional() }),
  responses: { 200: A.consoles },
  async handle({ rt, access, query }) {
    return { body: { consoles: await consolesInScope(rt, access!, query.clientCode) } };
  },
});

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/consoles',
  summary: "Add a client's console: URL, CA, access token (stored encrypted, never returned); administrators",
  access: 'admin',
  body: consoleCreateSchema,
  responses: { 201: A.consoleView },
  errors: { 400: ['target_refused', 'unknown_client'] },
  async handle(ctx) {
    return { status: 201, body: await addConsole(ctx.rt, ctx.body, ctx) };
  },
});

const get = defineFleetRoute({
  method: 'GET',
  path: '/api/consoles/{id}',
  summary: 'One console (viewer of its client)',
  access: 'client',
  level: 'viewer',
  params: idParams,
  resource: consoleResource,
  responses: { 200: A.consoleWithPoll },
  async handle({ rt, addressed }) {
    return { body: await consoleWithDrift(rt, addressed!.resource) };
  },
});

const update = defineFleetRoute({
  method: 'PUT',
  path: '/api/consoles/{id}',
  summary: 'Edit a console: client code and token (operator of its client); URL and CA (administrators)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: consoleResource,
  body: consoleUpdateSchema,
  responses: { 200: A.consoleView },
  errors: { 400: ['target_refused', 'unknown_client'] },
  async authorize(ctx) {
    const current = ctx.addressed!.resource;
    const changed = changedConsoleFields(current, ctx.body);
    if ((changed.url || changed.ca) && !ctx.access!.identity.admin) await ctx.refuse('admin_required', 'admin', current.clientCode);
    if (changed.clientCode) {
      const target = ctx.body.clientCode!;
      // moving the console names a client: the caller must operate it too (403 client_scope)
      if (!hasLevel(ctx, target, 'operator')) await ctx.refuse('client_scope', 'operator', target);
      await requireRegisteredClient(ctx.rt, target);
    }
  },
  async handle(ctx) {
    return { body: await editConsole(ctx.rt, ctx.addressed!.resource, ctx.body, ctx) };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/consoles/{id}',
  summary: 'Remove a console (administrators)',
  access: 'admin',
  params: idParams,
  responses: { 204: noContent('Removed') },
  async handle(ctx) {
    await removeConsole(ctx.rt, ctx.params.id, ctx);
    return { status: 204 };
  },
});

export const routes = [list, create, get, update, remove];
export const handler = fleetHandler(routes);
