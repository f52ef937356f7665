import { z } from 'zod';
import { channelInputSchema } from '@lib/channels';
import { acknowledgeActiveAlert, addAlertChannel, addSilence, silenceClientOf, alertChannelsView, alertSettingsView, alertsInScope, changeAlertSettings, editAlertChannel, removeAlertChannel, removeSilence, testAlertChannel } from '@lib/fleet/alerts-admin';
import { acknowledgeInputSchema, silenceInputSchema } from '@lib/fleet/alerts/silences';
import { alertSettingsSchema } from '@lib/fleet/alerts/store';
import { fleetHandler } from '@lib/fleet/http';
import { alertResource, silenceResource } from '@lib/fleet/resources';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';

// Alerts (scoped read) and alert settings and channels (administrators only, reads included).
// Acting on alerts (acknowledge, silence): operators of the alert's client. Scoping and audit rows
// live in lib/fleet/alerts-admin.ts.
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

const getSettings = defineFleetRoute({
  method: 'GET',
  path: '/api/alerts/settings',
  summary: 'Alert settings and channels (administrators)',
  access: 'admin',
  responses: { 200: A.alertSettingsView },
  async handle({ rt }) {
    return { body: await alertSettingsView(rt) };
  },
});

const putSettings = defineFleetRoute({
  method: 'PUT',
  path: '/api/alerts/settings',
  summary: '{ failedLoginsThreshold: 1..100000 } (administrators; audited alerts.settings)',
  access: 'admin',
  body: alertSettingsSchema,
  responses: { 200: A.alertSettings },
  async handle({ rt, body, actor, correlationId }) {
    return { body: await changeAlertSettings(rt, body, { actor, correlationId }) };
  },
});

const listChannels = defineFleetRoute({
  method: 'GET',
  path: '/api/alerts/channels',
  summary: 'Notification channels: type, name, URL origin, secret set (administrators)',
  access: 'admin',
  responses: { 200: A.channels },
  async handle({ rt }) {
    return { body: await alertChannelsView(rt) };
  },
});

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/alerts/channels',
  summary: 'Create a channel (at most 20): { name, type, url, secret?, topic?, token?, enabled? }; audited alerts.channel.create',
  access: 'admin',
  body: channelInputSchema,
  responses: { 201: A.channel },
  errors: { ...A.channelErrors, 409: ['too_many_channels'] },
  async handle({ rt, body, actor, correlationId }) {
    return { status: 201, body: await addAlertChannel(rt, body, { actor, correlationId }) };
  },
});

const update = defineFleetRoute({
  method: 'PUT',
  path: '/api/alerts/channels/{id}',
  summary: 'Edit a channel: empty url/secret/token keep them, removeSecret clears, a new type needs the URL; audited alerts.channel.update',
  access: 'admin',
  params: idParams,
  body: channelInputSchema,
  responses: { 200: A.channel },
  errors: A.channelErrors,
  async handle({ rt, params, body, actor, correlationId }) {
    return { body: await editAlertChannel(rt, params.id, body, { actor, correlationId }) };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/alerts/channels/{id}',
  summary: 'Delete a channel (audited alerts.channel.delete)',
  access: 'admin',
  params: idParams,
  responses: { 204: A.deleted },
  async handle({ rt, params, actor, correlationId }) {
    await removeAlertChannel(rt, params.id, { actor, correlationId });
    return { status: 204 };
  },
});

const test = defineFleetRoute({
  method: 'POST',
  path: '/api/alerts/channels/{id}/test',
  summary: 'Send one test notification (10 per minute); recorded in history as test, audited alerts.channel.test',
  access: 'admin',
  params: idParams,
  responses: { 200: A.channelTested },
  errors: { 429: ['too_many_requests'], 503: ['secrets_key_missing'] },
  async handle({ rt, params, actor, correlationId }) {
    return { body: await testAlertChannel(rt, params.id, { actor, correlationId }) };
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

export const routes = [list, getSettings, putSettings, listChannels, create, update, remove, test, acknowledge, silence, unsilence];
export const handler = fleetHandler(routes);
