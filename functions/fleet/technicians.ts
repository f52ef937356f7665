import { z } from 'zod';
import { listClients } from '@lib/fleet/clients';
import { fleetHandler } from '@lib/fleet/http';
import { defineFleetRoute } from '@lib/fleet/route';
import { assignmentSchema, deleteAssignment, listAssignments, putAssignment, technicianNameSchema } from '@lib/fleet/technicians';

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/technicians',
  summary: 'Technician assignments, and how fleet-client-<code> roles are honoured',
  access: 'admin',
  async handle({ rt }) {
    return {
      body: {
        technicians: await listAssignments(rt.store),
        clientRolesEnabled: rt.config.ACCESS_JWT_CLIENT_ROLES,
        clientRoleLevel: rt.config.ACCESS_JWT_CLIENT_ROLE_LEVEL,
      },
    };
  },
});

const put = defineFleetRoute({
  method: 'PUT',
  path: '/api/technicians',
  summary: 'Create or replace the assignments of one user name (exact, case-sensitive); 400 unknown_client',
  access: 'admin',
  body: assignmentSchema,
  async handle({ rt, body, actor, correlationId }) {
    const registered = new Set((await listClients(rt.store)).map((c) => c.code));
    const { created, assignment } = await putAssignment(rt.store, body, registered);
    await rt.audit.append({
      event: created ? 'technician.create' : 'technician.update',
      outcome: 'success',
      actor,
      target: { id: body.username, name: body.username, kind: 'technician' },
      correlationId,
      details: { clients: body.clients },
    });
    return { status: created ? 201 : 200, body: assignment };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/technicians/{username}',
  summary: 'Remove the assignments of a user name',
  access: 'admin',
  params: z.object({ username: technicianNameSchema }),
  async handle({ rt, params, actor, correlationId }) {
    const removed = await deleteAssignment(rt.store, params.username);
    await rt.audit.append({
      event: 'technician.delete',
      outcome: 'success',
      actor,
      target: { id: params.username, name: params.username, kind: 'technician' },
      correlationId,
      details: { clients: removed.clients },
    });
    return { status: 204 };
  },
});

export const routes = [list, put, remove];
export const handler = fleetHandler(routes);
