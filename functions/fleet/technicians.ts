import { z } from 'zod';
import { fleetHandler } from '@lib/fleet/http';
import { assignTechnician, unassignTechnician } from '@lib/fleet/register';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { noContent } from '@lib/http/answers';
import { assignmentSchema, listAssignments, technicianNameSchema } from '@lib/fleet/technicians';

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/technicians',
  summary: 'Technician assignments, and how fleet-client-<code> roles are honoured',
  access: 'admin',
  responses: { 200: A.technicians },
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
  responses: { 200: A.technicianSaved, 201: A.technicianSaved },
  errors: { 400: ['unknown_client'], 409: ['concurrent_update'] },
  async handle(ctx) {
    const { created, assignment } = await assignTechnician(ctx.rt, ctx.body, ctx);
    return { status: created ? 201 : 200, body: assignment };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/technicians/{username}',
  summary: 'Remove the assignments of a user name',
  access: 'admin',
  params: z.object({ username: technicianNameSchema }),
  responses: { 204: noContent('Removed') },
  async handle(ctx) {
    await unassignTechnician(ctx.rt, ctx.params.username, ctx);
    return { status: 204 };
  },
});

export const routes = [list, put, remove];
export const handler = fleetHandler(routes);
