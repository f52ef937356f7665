import { z } from 'zod';
import { auditQuerySchema, objectHistoryQuerySchema, queryAudit } from '@lib/audit/query';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { auditPage, auditVerify } from '@lib/api/console/audit';

// a cursor from another query, a time range ending before it starts
const QUERY_ERRORS = { 400: ['invalid_cursor', 'invalid_time_range'] };

const list = defineRoute({
  method: 'GET',
  path: '/api/audit',
  summary: 'Audit rows newest first, as stored; filters from, to, actor, event, target, outcome; opaque cursor',
  access: 'operator',
  permission: 'audit.read',
  query: auditQuerySchema,
  responses: { 200: auditPage },
  errors: QUERY_ERRORS,
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
  responses: { 200: auditPage },
  errors: QUERY_ERRORS,
  async handle({ rt, params, query }) {
    return { body: await queryAudit(rt.audit, { ...query, target: params.id }) };
  },
});

const verify = defineRoute({
  method: 'GET',
  path: '/api/audit/verify',
  longRead: true,
  summary: 'Whether the audit hash chain verifies: one bounded incremental check now, and the last background full walk',
  access: 'operator',
  permission: 'audit.read',
  responses: { 200: auditVerify },
  async handle({ rt }) {
    return { body: await rt.audit.check() };
  },
});

export const routes = [list, objectHistory, verify];
export const handler = consoleHandler(routes);
