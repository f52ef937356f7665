import { z } from 'zod';
import { fleetHandler } from '@lib/fleet/http';
import { pollConsoleNow } from '@lib/fleet/poll/now';
import { consolePollView } from '@lib/fleet/poll/view';
import { consoleResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';

const idParams = z.object({ id: z.uuid() });

const status = defineFleetRoute({
  method: 'GET',
  path: '/api/consoles/{id}/status',
  summary: "A console's last poll: result, version, health, audit chain, DCs, certificate (viewer of its client)",
  access: 'client',
  level: 'viewer',
  params: idParams,
  resource: consoleResource,
  responses: { 200: A.consolePoll },
  async handle({ rt, params }) {
    return { body: await consolePollView(rt.store, params.id) };
  },
});

const pollNow = defineFleetRoute({
  method: 'POST',
  path: '/api/consoles/{id}/poll',
  summary: 'Poll the console now (operator of its client; 6 a minute per console; audited console.poll); answers its last poll as GET .../status does',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: consoleResource,
  responses: { 200: A.consolePoll },
  errors: { 429: ['too_many_requests'] },
  async handle({ rt, addressed, actor, correlationId }) {
    return { body: await pollConsoleNow(rt, addressed!.resource, { actor, correlationId }) };
  },
});

export const routes = [status, pollNow];
export const handler = fleetHandler(routes);
