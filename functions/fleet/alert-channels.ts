import { z } from 'zod';
import { channelInputSchema } from '@lib/channels';
import { addAlertChannel, alertChannelsView, alertSettingsView, changeAlertSettings, editAlertChannel, removeAlertChannel, testAlertChannel } from '@lib/fleet/alerts-admin';
import { alertSettingsSchema } from '@lib/fleet/alerts/store';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';

// Alert settings and channels: administrators only, reads included (fleet spec, Alerts). Served by
// the alerts function (functions/fleet/alerts.ts); audit rows and secrets in lib/fleet/alerts-admin.ts.
const idParams = z.object({ id: z.uuid() });

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

export const channelRoutes = [getSettings, putSettings, listChannels, create, update, remove, test];
