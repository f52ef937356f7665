import { z } from 'zod';
import { actorOf } from '@lib/authz/engine';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, type RouteResult } from '@lib/http/route';
import { decisionContext } from '@lib/runtime';
import { csvHeaders, watchList, watchLists } from '@lib/api/console/directory';
import { SCOPED_LIST } from '@lib/api/console/errors';
import { file } from '@lib/http/answers';
import { exportUsers, exportWatchList, readWatchList, watchListParams, watchListsIndex, type ExportAnswer } from '@lib/users/exports';

// Watch lists and the CSV exports of users (users.read; audited users.export / users.watch.export).
const csv = (a: ExportAnswer): RouteResult<never> => ({
  text: a.csv,
  contentType: 'text/csv; charset=utf-8',
  headers: { 'content-disposition': `attachment; filename="${a.filename}"`, 'x-row-count': String(a.rows) },
});

const lists = defineRoute({
  method: 'GET',
  path: '/api/watch-lists',
  summary: 'The watch lists: locked out, disabled, password never expires, no sign-in for 90 days',
  access: 'operator',
  permission: 'users.read',
  responses: { 200: watchLists },
  async handle() {
    return { body: watchListsIndex() };
  },
});

const list = defineRoute({
  method: 'GET',
  path: '/api/watch-lists/{list}',
  summary: "One watch list: the operator's readable users that match, at most Directory:MaxResults, `truncated` when cut",
  access: 'operator',
  permission: 'users.read',
  params: watchListParams,
  responses: { 200: watchList },
  errors: SCOPED_LIST,
  async handle(c) {
    return { body: await readWatchList(await decisionContext(c.rt), actorOf(c), c.params.list, await c.rt.masterKey()) };
  },
});

const usersCsv = defineRoute({
  method: 'GET',
  path: '/api/exports/users',
  longRead: true,
  summary: "The operator's readable users (or those of the search q, the ou filter) as CSV, at most Directory:SearchMaxResults; audited users.export with the row count",
  access: 'operator',
  permission: 'users.read',
  query: z.object({ q: z.string().trim().max(64).optional(), ou: z.string().trim().max(1024).optional() }),
  responses: { 200: file('text/csv', 'The users as CSV (UTF-8, a header line)', csvHeaders) },
  errors: SCOPED_LIST,
  async handle(c) {
    return csv(await exportUsers(await decisionContext(c.rt), actorOf(c), c.query, await c.rt.masterKey(), c.correlationId));
  },
});

const watchCsv = defineRoute({
  method: 'GET',
  path: '/api/exports/watch-lists/{list}',
  longRead: true,
  summary: 'One watch list as CSV; audited users.watch.export with the list and the row count',
  access: 'operator',
  permission: 'users.read',
  params: watchListParams,
  responses: { 200: file('text/csv', 'The watch list as CSV (UTF-8, a header line)', csvHeaders) },
  errors: SCOPED_LIST,
  async handle(c) {
    return csv(await exportWatchList(await decisionContext(c.rt), actorOf(c), c.params.list, await c.rt.masterKey(), c.correlationId));
  },
});

export const routes = [lists, list, usersCsv, watchCsv];
export const handler = consoleHandler(routes);
