import { z } from 'zod';
import { badRequest } from '@lib/errors';
import { appendUnderEachClient } from '@lib/fleet/audit-filing';
import { clientCodeSchema, getClient } from '@lib/fleet/clients';
import { changedConsoleFields, consoleCreateSchema, consoleUpdateSchema, consoleView, createConsole, deleteConsole, listConsoles, updateConsole, type ConsoleRecord } from '@lib/fleet/consoles';
import { hasLevel } from '@lib/fleet/guard';
import { fleetHandler } from '@lib/fleet/http';
import { consoleResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const idParams = z.object({ id: z.uuid() });
type Update = z.output<typeof consoleUpdateSchema>;

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/consoles',
  summary: 'Consoles of the clients in scope (optional ?clientCode=)',
  access: 'signed-in',
  query: z.object({ clientCode: clientCodeSchema.optional() }),
  async handle({ rt, access, query }) {
    const visible = access!.visibleCodes();
    const consoles = (await listConsoles(rt.store)).filter((c) => (!visible || visible.has(c.clientCode)) && (!query.clientCode || c.clientCode === query.clientCode));
    return { body: { consoles: consoles.map(consoleView) } };
  },
});

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/consoles',
  summary: "Add a client's console: URL, CA, access token (stored encrypted, never returned); administrators",
  access: 'admin',
  body: consoleCreateSchema,
  async handle({ rt, body, actor, correlationId }) {
    if (!(await getClient(rt.store, body.clientCode))) throw badRequest('unknown_client', { codes: [body.clientCode] });
    const c = await createConsole(rt.store, await rt.masterKey(), body);
    await rt.audit.append({ event: 'console.create', outcome: 'success', actor, client: c.clientCode, target: { id: c.id, name: new URL(c.url).origin, kind: 'console' }, correlationId });
    return { status: 201, body: consoleView(c) };
  },
});

const get = defineFleetRoute<undefined, undefined, { id: string }, ConsoleRecord>({
  method: 'GET',
  path: '/api/consoles/{id}',
  summary: 'One console (viewer of its client)',
  access: 'client',
  level: 'viewer',
  params: idParams,
  resource: consoleResource,
  async handle({ addressed }) {
    return { body: consoleView(addressed!.resource) };
  },
});

const update = defineFleetRoute<Update, undefined, { id: string }, ConsoleRecord>({
  method: 'PUT',
  path: '/api/consoles/{id}',
  summary: 'Edit a console: client code and token (operator of its client); URL and CA (administrators)',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: consoleResource,
  body: consoleUpdateSchema,
  async authorize(ctx) {
    const current = ctx.addressed!.resource;
    const changed = changedConsoleFields(current, ctx.body);
    if ((changed.url || changed.ca) && !ctx.access!.identity.admin) await ctx.refuse('admin_required', 'admin', current.clientCode);
    if (changed.clientCode) {
      const target = ctx.body.clientCode!;
      // moving the console names a client: the caller must operate it too (403 client_scope)
      if (!hasLevel(ctx, target, 'operator')) await ctx.refuse('client_scope', 'operator', target);
      if (!(await getClient(ctx.rt.store, target))) throw badRequest('unknown_client', { codes: [target] });
    }
  },
  async handle({ rt, params, body, addressed, actor, correlationId }) {
    const changed = changedConsoleFields(addressed!.resource, body);
    const c = await updateConsole(rt.store, await rt.masterKey(), params.id, body);
    const details: Record<string, unknown> = { fields: Object.keys(changed).filter((k) => changed[k as keyof typeof changed]) };
    if (changed.clientCode) details.from = addressed!.resource.clientCode;
    // a move concerns both clients: filed under each
    const clients = changed.clientCode ? [addressed!.resource.clientCode, c.clientCode] : [c.clientCode];
    await appendUnderEachClient(rt, { event: 'console.update', outcome: 'success', actor, target: { id: c.id, name: new URL(c.url).origin, kind: 'console' }, correlationId, details }, clients);
    return { body: consoleView(c) };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/consoles/{id}',
  summary: 'Remove a console (administrators)',
  access: 'admin',
  params: idParams,
  async handle({ rt, params, actor, correlationId }) {
    const c = await deleteConsole(rt.store, params.id);
    await rt.audit.append({ event: 'console.delete', outcome: 'success', actor, client: c.clientCode, target: { id: c.id, name: new URL(c.url).origin, kind: 'console' }, correlationId });
    return { status: 204 };
  },
});

export const routes = [list, create, get, update, remove];
export const handler = fleetHandler(routes);
