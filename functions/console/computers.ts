import { actorOf } from '@lib/authz/engine';
import { bitlockerPassword, computerDetail, computerPage, lapsExpired, lapsPassword } from '@lib/api/console/directory';
import { BITLOCKER, DIRECTORY_READ, LAPS, SCOPED_LIST } from '@lib/api/console/errors';
import { listRecoveryEntries, recoveryEntriesSchema } from '@lib/bitlocker';
import { decisionContext } from '@lib/runtime';
import { getComputer, searchComputers, searchQuerySchema } from '@lib/computers';
import { lapsAction, lapsRefusalAudit, lapsRequestSchema } from '@lib/laps/reveal';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, objectIdParams } from '@lib/http/route';
import { z } from 'zod';

const search = defineRoute({
  method: 'GET',
  path: '/api/computers',
  summary: "Search computers (q), or list the operator's scope; bounded, `truncated` with a cursor when cut",
  access: 'operator',
  permission: 'computers.read',
  query: searchQuerySchema,
  responses: { 200: computerPage },
  errors: SCOPED_LIST,
  async handle(c) {
    return { body: await searchComputers(await decisionContext(c.rt), actorOf(c), c.query, await c.rt.masterKey()) };
  },
});

const detail = defineRoute({
  method: 'GET',
  path: '/api/computers/{id}',
  summary: 'One computer (read view with display hints); 404 when not readable',
  access: 'operator',
  permission: 'computers.read',
  params: objectIdParams,
  responses: { 200: computerDetail },
  errors: DIRECTORY_READ,
  async handle(c) {
    return { body: await getComputer(await decisionContext(c.rt), actorOf(c), c.params.id, c.correlationId) };
  },
});

const reveal = defineRoute({
  method: 'POST',
  path: '/api/computers/{id}/laps',
  summary: 'Reveal the LAPS password once: ticket, strict step-up, confirmation',
  access: 'operator',
  permission: 'computers.laps.read',
  helpdesk: true,
  refusalAudit: lapsRefusalAudit('laps.read'),
  params: objectIdParams,
  body: lapsRequestSchema,
  responses: { 200: lapsPassword },
  errors: LAPS,
  async handle(c) {
    return { body: await lapsAction(await decisionContext(c.rt), actorOf(c), c.session!, 'laps.read', c.params.id, c.body, c.correlationId) };
  },
});

const expire = defineRoute({
  method: 'POST',
  path: '/api/computers/{id}/laps/expire',
  summary: 'Set the LAPS expiration time to now: ticket, strict step-up, confirmation',
  access: 'operator',
  permission: 'computers.laps.expire',
  helpdesk: true,
  refusalAudit: lapsRefusalAudit('laps.expire'),
  params: objectIdParams,
  body: lapsRequestSchema,
  responses: { 200: lapsExpired },
  errors: LAPS,
  async handle(c) {
    return { body: await lapsAction(await decisionContext(c.rt), actorOf(c), c.session!, 'laps.expire', c.params.id, c.body, c.correlationId) };
  },
});

const bitlockerList = defineRoute({
  method: 'GET',
  path: '/api/computers/{id}/bitlocker',
  summary: "A computer's BitLocker recovery entries (key id, volume, date), never the key; 404 when not readable",
  access: 'operator',
  permission: 'computers.bitlocker.read',
  helpdesk: true,
  params: objectIdParams,
  responses: { 200: recoveryEntriesSchema },
  errors: DIRECTORY_READ,
  async handle(c) {
    return { body: await listRecoveryEntries(await decisionContext(c.rt), actorOf(c), c.params.id, c.correlationId) };
  },
});

const bitlockerReveal = defineRoute({
  method: 'POST',
  path: '/api/computers/{id}/bitlocker/{keyId}',
  summary: 'Reveal one BitLocker recovery password once: ticket, strict step-up, confirmation',
  access: 'operator',
  permission: 'computers.bitlocker.read',
  helpdesk: true,
  refusalAudit: lapsRefusalAudit('bitlocker.read'),
  params: z.object({ id: z.string(), keyId: z.string() }),
  body: lapsRequestSchema,
  responses: { 200: bitlockerPassword },
  errors: BITLOCKER,
  async handle(c) {
    return { body: await lapsAction(await decisionContext(c.rt), actorOf(c), c.session!, 'bitlocker.read', c.params.id, c.body, c.correlationId, c.params.keyId) };
  },
});

export const routes = [search, detail, reveal, expire, bitlockerList, bitlockerReveal];
export const handler = consoleHandler(routes);
