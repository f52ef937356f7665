import { z } from 'zod';
import type { ConsoleRecord } from '@lib/fleet/consoles';
import { fleetHandler } from '@lib/fleet/http';
import { consolePollView } from '@lib/fleet/poll/view';
import { consoleResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';

const status = defineFleetRoute<undefined, undefined, { id: string }, ConsoleRecord>({
  method: 'GET',
  path: '/api/consoles/{id}/status',
  summary: "A console's last poll: result, version, health, audit chain, DCs, certificate (viewer of its client)",
  access: 'client',
  level: 'viewer',
  params: z.object({ id: z.uuid() }),
  resource: consoleResource,
  async handle({ rt, params }) {
    return { body: await consolePollView(rt.store, params.id) };
  },
});

export const routes = [status];
export const handler = fleetHandler(routes);
