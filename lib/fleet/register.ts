import type { z } from 'zod';
import type { AuditActor } from '../audit';
import { badRequest, notFound } from '../errors';
import { outboundTrust, requireAdmittedUrl } from '../outbound/https';
import type { FleetAccess } from './access';
import { appendUnderEachClient } from './audit-filing';
import { removeClientDeployments } from './client-deployments';
import { createClient, deleteClient, getClient, listClients, requireClientRemovable, updateClient, type Client, type clientCreateSchema, type clientUpdateSchema } from './clients';
import { changedConsoleFields, consoleView, createConsole, deleteConsole, listConsoles, updateConsole, type ConsoleRecord, type ConsoleView, type consoleCreateSchema, type consoleUpdateSchema } from './consoles';
import type { FleetRuntime } from './runtime';
import { deleteAssignment, putAssignment, type Assignment } from './technicians';
import { forgetPlan } from './upgrades/plans';
import { withDrift } from './upgrades';

// The fleet plane's register (clients, their consoles, technician assignments) as the routes use
// it: reads filtered by the caller's scope, and every change written with its audit row
// (spec: Audit). The handlers in functions/fleet only parse, call these and answer.

/** Who acts, for the audit row: the route's actor and correlation id. */
export interface Acting {
  actor: AuditActor;
  correlationId: string;
}

const inScope = (access: FleetAccess, code: string) => {
  const visible = access.visibleCodes();
  return !visible || visible.has(code);
};

// ---- clients ----

/** The clients the caller may see, each with the caller's level on it. */
export async function clientsInScope(rt: FleetRuntime, access: FleetAccess): Promise<Array<Client & { level: ReturnType<FleetAccess['levelOn']> }>> {
  return (await listClients(rt.store)).filter((c) => inScope(access, c.code)).map((c) => ({ ...c, level: access.levelOn(c.code) }));
}

export async function registerClient(rt: FleetRuntime, input: z.output<typeof clientCreateSchema>, by: Acting): Promise<Client> {
  const client = await createClient(rt.store, input);
  await rt.audit.append({ event: 'client.create', outcome: 'success', actor: by.actor, client: client.code, target: { id: client.code, name: client.name, kind: 'client' }, correlationId: by.correlationId });
  return client;
}

export async function editClient(rt: FleetRuntime, code: string, patch: z.output<typeof clientUpdateSchema>, by: Acting): Promise<Client> {
  const client = await updateClient(rt.store, code, patch);
  const fields = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
  await rt.audit.append({ event: 'client.update', outcome: 'success', actor: by.actor, client: client.code, target: { id: client.code, name: client.name, kind: 'client' }, correlationId: by.correlationId, details: { fields } });
  return client;
}

/** Delete a client (409 while consoles remain), its proxy deployments and its technician assignments. */
export async function removeClient(rt: FleetRuntime, code: string, by: Acting): Promise<void> {
  const consoles = (await listConsoles(rt.store)).filter((c) => c.clientCode === code).length;
  await requireClientRemovable(rt.store, code, consoles);
  const deployments = await removeClientDeployments(rt, code, by);
  await deleteClient(rt.store, code, consoles);
  await rt.audit.append({ event: 'client.delete', outcome: 'success', actor: by.actor, client: code, target: { id: code, kind: 'client' }, correlationId: by.correlationId, ...(deployments ? { details: { deployments } } : {}) });
}

// ---- consoles ----

const consoleTarget = (c: ConsoleRecord) => ({ id: c.id, name: new URL(c.url).origin, kind: 'console' });

/** The consoles of the clients the caller may see, optionally of one client. */
export async function consolesInScope(rt: FleetRuntime, access: FleetAccess, clientCode?: string) {
  return withDrift(rt.store, (await listConsoles(rt.store)).filter((c) => inScope(access, c.clientCode) && (!clientCode || c.clientCode === clientCode)).map(consoleView));
}

/** One console as GET /api/consoles/{id} answers it: with its version and drift badge. */
export async function consoleWithDrift(rt: FleetRuntime, c: ConsoleRecord) {
  return (await withDrift(rt.store, [consoleView(c)]))[0];
}

/** A registered client, else 404 (an administrators' route naming a client in its path). */
export async function requireClient(rt: FleetRuntime, code: string): Promise<Client> {
  const c = await getClient(rt.store, code);
  if (!c) throw notFound();
  return c;
}

/** 400 unknown_client unless the client is registered. */
export async function requireRegisteredClient(rt: FleetRuntime, code: string): Promise<void> {
  if (!(await getClient(rt.store, code))) throw badRequest('unknown_client', { codes: [code] });
}

export async function addConsole(rt: FleetRuntime, input: z.output<typeof consoleCreateSchema>, by: Acting): Promise<ConsoleView> {
  await requireRegisteredClient(rt, input.clientCode);
  await requireAdmittedUrl(input.url, outboundTrust(rt.config.FLEET_OUTBOUND_ALLOWED_TARGETS));
  const c = await createConsole(rt.store, await rt.masterKey(), input);
  await rt.audit.append({ event: 'console.create', outcome: 'success', actor: by.actor, client: c.clientCode, target: consoleTarget(c), correlationId: by.correlationId });
  return consoleView(c);
}

/** Edit a console the guard resolved (`current`); a move to another client is filed under both. */
export async function editConsole(rt: FleetRuntime, current: ConsoleRecord, patch: z.output<typeof consoleUpdateSchema>, by: Acting): Promise<ConsoleView> {
  const changed = changedConsoleFields(current, patch);
  if (changed.url) await requireAdmittedUrl(patch.url!, outboundTrust(rt.config.FLEET_OUTBOUND_ALLOWED_TARGETS));
  const c = await updateConsole(rt.store, await rt.masterKey(), current.id, patch);
  const details: Record<string, unknown> = { fields: Object.keys(changed).filter((k) => changed[k as keyof typeof changed]) };
  if (changed.clientCode) details.from = current.clientCode;
  // a move concerns both clients: filed under each
  const clients = changed.clientCode ? [current.clientCode, c.clientCode] : [c.clientCode];
  await appendUnderEachClient(rt, { event: 'console.update', outcome: 'success', actor: by.actor, target: consoleTarget(c), correlationId: by.correlationId, details }, clients);
  return consoleView(c);
}

export async function removeConsole(rt: FleetRuntime, id: string, by: Acting): Promise<void> {
  const c = await deleteConsole(rt.store, id);
  await forgetPlan(rt.store, c.id); // its upgrade plan is forgotten at once (fleet spec, plan states)
  await rt.audit.append({ event: 'console.delete', outcome: 'success', actor: by.actor, client: c.clientCode, target: consoleTarget(c), correlationId: by.correlationId });
}

// ---- technician assignments ----

/** Create or replace one user name's assignments (registered clients only: 400 unknown_client). */
export async function assignTechnician(rt: FleetRuntime, input: Assignment, by: Acting): Promise<{ created: boolean; assignment: Assignment }> {
  const registered = new Set((await listClients(rt.store)).map((c) => c.code));
  const r = await putAssignment(rt.store, input, registered);
  await rt.audit.append({
    event: r.created ? 'technician.create' : 'technician.update',
    outcome: 'success',
    actor: by.actor,
    target: { id: input.username, name: input.username, kind: 'technician' },
    correlationId: by.correlationId,
    details: { clients: input.clients },
  });
  return r;
}

export async function unassignTechnician(rt: FleetRuntime, username: string, by: Acting): Promise<void> {
  const removed = await deleteAssignment(rt.store, username);
  await rt.audit.append({
    event: 'technician.delete',
    outcome: 'success',
    actor: by.actor,
    target: { id: username, name: username, kind: 'technician' },
    correlationId: by.correlationId,
    details: { clients: removed.clients },
  });
}
