import { z } from 'zod';
import { auditQuerySchema, objectHistoryQuerySchema, queryAudit } from '@lib/audit/query';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';

const list = defineRoute({
  method: 'GET',
  path: '/api/audit',
  summary: 'Audit rows newest first, as stored; filters from, to, actor, event, target, outcome; opaque cursor',
  access: 'operator',
  permission: 'audit.read',
  query: auditQuerySchema,
  async handle({ rt, query }) {
    return { body: await queryAudit(rt.audit, query) };
  },
});

const objectHistory = defineRoute({
  method: 'GET',
  path: '/api/audit/objects/{id}',
  summary: "One object's history: the rows whose target is this id (objectGUID) or name; same filters and paging",
  access: 'operator',
  permission: 'audit.read',
  params: z.object({ id: z.string().trim().min(1).max(256) }),
  query: objectHistoryQuerySchema,
  async handle({ rt, params, query }) {
    return { body: await queryAudit(rt.audit, { ...query, target: params.id }) };
  },
});

const verify = defineRoute({
  method: 'GET',
  path: '/api/audit/verify',
  summary: 'Whether the audit hash chain verifies: one bounded incremental check now, and the last background full walk',
  access: 'operator',
  permission: 'audit.read',
  async handle({ rt }) {
    return { body: await rt.audit.check() };
  },
});

export const routes = [list, objectHistory, verify];
export const handler = consoleHandler(routes);
