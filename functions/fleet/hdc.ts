import { z } from 'zod';
import { fleetHandler } from '@lib/fleet/http';
import { consoleRegistration, consoleRegistrations } from '@lib/fleet/hdc';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';

// Console integration routes (/api/hdc/*): administrators only (fleet spec, Levels); shapes in
// docs/decisions.md (issue 31).

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/hdc/consoles',
  summary: "Every registered console's integration: status URL, access-platform app, CA, token set (never the token), last poll",
  access: 'admin',
  responses: { 200: A.consoleRegistrations },
  async handle({ rt }) {
    return { body: await consoleRegistrations(rt) };
  },
});

const one = defineFleetRoute({
  method: 'GET',
  path: '/api/hdc/consoles/{id}/registration',
  summary: "One console's registration as the fleet plane holds and polls it",
  access: 'admin',
  params: z.object({ id: z.uuid() }),
  responses: { 200: A.consoleRegistration },
  async handle({ rt, params }) {
    return { body: await consoleRegistration(rt, params.id) };
  },
});

export const routes = [list, one];
export const handler = fleetHandler(routes);
