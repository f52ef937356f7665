import { z } from 'zod';
import { acknowledgeActiveAlert, addSilence, alertsInScope, removeSilence, silenceClientOf } from '@lib/fleet/alerts-admin';
import { acknowledgeInputSchema, silenceInputSchema } from '@lib/fleet/alerts/silences';
import { fleetHandler } from '@lib/fleet/http';
import { alertResource, silenceResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';
import { channelRoutes } from './alert-channels';
import * as A from '@lib/api/fleet/answers';

// Alerts (scoped read); acting on alerts (acknowledge, silence): operators of the alert's client.
// The same function serves the alert settings and channels (./alert-channels.ts, administrators
// only). Scoping and audit rows live in lib/fleet/alerts-admin.ts.
const idParams = z.object({ id: z.uuid() });

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/alerts',
  summary: 'Active alerts and history (200) of the clients in scope, last evaluation',
  access: 'signed-in',
  responses: { 200: A.alerts },
  async handle({ rt, access }) {
    return { body: await alertsInScope(rt, access!) };
  },
});

// ---- acting on alerts (issue 29): operators of the alert's client; alerts and silences without a client, administrators
const keyParams = z.object({ key: z.string().regex(/^[A-Za-z0-9:._-]{1,400}$/) });

const acknowledge = defineFleetRoute({
  method: 'POST',
  path: '/api/alerts/{key}/acknowledge',
  summary: 'Acknowledge an active alert: it stays active, its resolve is not notified; { comment }; audited alerts.acknowledge (operator of its client)',
  access: 'client',
  level: 'operator',
  params: keyParams,
  resource: alertResource,
  body: acknowledgeInputSchema,
  responses: { 200: A.alert },
  async handle({ rt, addressed, body, actor, correlationId }) {
    return { body: await acknowledgeActiveAlert(rt, addressed!.resource, body.comment, { actor, correlationId }) };
  },
});

const silence = defineFleetRoute({
  method: 'POST',
  path: '/api/alerts/silences',
  summary: 'Silence alerts of a rule (kind), client and/or console until endsAt (at most 30 days): { kind?, clientCode?, consoleId?, endsAt, comment }; audited alerts.silence.create',
  access: 'signed-in',
  body: silenceInputSchema,
  responses: { 201: A.silence },
  errors: { 400: ['unknown_client'], 404: ['not_found'] },
  async authorize(ctx) {
    ctx.addressed = { clientCode: await silenceClientOf(ctx), resource: undefined };
  },
  async handle({ rt, body, addressed, actor, correlationId }) {
    return { status: 201, body: await addSilence(rt, body, addressed!.clientCode ?? undefined, { actor, correlationId }) };
  },
});

const unsilence = defineFleetRoute({
  method: 'DELETE',
  path: '/api/alerts/silences/{id}',
  summary: 'End a silence now (operator of its client; a silence without a client: administrators); audited alerts.silence.delete',
  access: 'client',
  level: 'operator',
  params: idParams,
  resource: silenceResource,
  responses: { 204: A.silenceEnded },
  async handle({ rt, addressed, actor, correlationId }) {
    await removeSilence(rt, addressed!.resource, { actor, correlationId });
    return { status: 204 };
  },
});

export const routes = [list, ...channelRoutes, acknowledge, silence, unsilence];
export const handler = fleetHandler(routes);
