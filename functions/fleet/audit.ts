import { z } from 'zod';
import { auditView } from '@lib/fleet/audit-view';
import { fleetHandler } from '@lib/fleet/http';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/audit',
  summary: "Audit entries, newest first: all for administrators; a technician's clients plus his own actions",
  access: 'signed-in',
  query: z.object({
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    beforeSeq: z.coerce.number().int().min(1).optional(),
  }),
  responses: { 200: A.auditEntries },
  async handle({ rt, access, query }) {
    return { body: await auditView(rt.audit, access!, query) };
  },
});

const verify = defineFleetRoute({
  method: 'GET',
  path: '/api/audit/verify',
  summary: "Whether the fleet plane's audit hash chain verifies; if not, the first bad row (administrators)",
  access: 'admin',
  responses: { 200: A.auditVerified },
  async handle({ rt }) {
    return { body: await rt.audit.verify() };
  },
});

export const routes = [list, verify];
export const handler = fleetHandler(routes);
