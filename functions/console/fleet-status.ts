import { checkFleetToken, fleetStatus } from '@lib/fleet-status';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { z } from 'zod';
import { fleetStatus as fleetStatusAnswer } from '@lib/api/console/audit';
import pkg from '../../package.json';

const status = defineRoute({
  method: 'GET',
  path: '/api/fleet/v1/status',
  longRead: true,
  summary: 'Read-only status for the fleet plane (bearer token only)',
  access: 'bearer',
  // the audit sequence the fleet witnessed before: the answer carries this console's hash there
  query: z.object({ witnessSeq: z.coerce.number().int().min(1).max(999_999_999_999).optional() }),
  responses: { 200: fleetStatusAnswer },
  errors: { 401: ['invalid_token'], 503: ['directory_unavailable'] },
  async handle({ rt, header, query }) {
    await checkFleetToken(rt, header('authorization'));
    return { body: await fleetStatus(rt, pkg.version, { witnessSeq: query.witnessSeq }) };
  },
});

export const routes = [status];
export const handler = consoleHandler(routes);
