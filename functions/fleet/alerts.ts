import { z } from 'zod';
import { channelInputSchema, channelView } from '@lib/channels';
import { isApiError } from '@lib/errors';
import { createFleetChannel, deleteFleetChannel, fleetChannelPolicy, getFleetChannel, listFleetChannels, updateFleetChannel } from '@lib/fleet/alerts/channels';
import { sendTestNotification } from '@lib/fleet/alerts/notify';
import { alertSettingsSchema, readAlertSettings, writeAlertSettings } from '@lib/fleet/alerts/store';
import { alertsView, changeList, channelTarget, takeTestSend } from '@lib/fleet/alerts/view';
import { fleetHandler } from '@lib/fleet/http';
import { defineFleetRoute } from '@lib/fleet/route';
import { notFound } from '@lib/errors';

// Alerts (scoped read) and alert settings and channels (administrators only, reads included).
const idParams = z.object({ id: z.uuid() });

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/alerts',
  summary: 'Active alerts and history (200) of the clients in scope, last evaluation',
  access: 'signed-in',
  async handle({ rt, access }) {
    return { body: await alertsView(rt.store, access!.visibleCodes()) };
  },
});

const getSettings = defineFleetRoute({
  method: 'GET',
  path: '/api/alerts/settings',
  summary: 'Alert settings and channels (administrators)',
  access: 'admin',
  async handle({ rt }) {
    const [settings, channels] = await Promise.all([readAlertSettings(rt.store), listFleetChannels(rt.store)]);
    return { body: { ...settings, channels: channels.map(channelView) } };
  },
});

const putSettings = defineFleetRoute({
  method: 'PUT',
  path: '/api/alerts/settings',
  summary: '{ failedLoginsThreshold: 1..100000 } (administrators; audited alerts.settings)',
  access: 'admin',
  body: alertSettingsSchema,
  async handle({ rt, body, actor, correlationId }) {
    const out = await writeAlertSettings(rt.store, body);
    await rt.audit.append({ event: 'alerts.settings', outcome: 'success', actor, correlationId, details: { old: out.old, new: out.new } });
    return { body: out.new };
  },
});

const listChannels = defineFleetRoute({
  method: 'GET',
  path: '/api/alerts/channels',
  summary: 'Notification channels: type, name, URL origin, secret set (administrators)',
  access: 'admin',
  async handle({ rt }) {
    return { body: { channels: (await listFleetChannels(rt.store)).map(channelView) } };
  },
});

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/alerts/channels',
  summary: 'Create a channel (at most 20): { name, type, url, secret?, topic?, token?, enabled? }; audited alerts.channel.create',
  access: 'admin',
  body: channelInputSchema,
  async handle({ rt, body, actor, correlationId }) {
    const c = await createFleetChannel(rt.store, fleetChannelPolicy(rt.config), body);
    await rt.audit.append({ event: 'alerts.channel.create', outcome: 'success', actor, target: channelTarget(c), correlationId, details: { type: c.type, urlOrigin: c.urlOrigin, enabled: c.enabled, signed: !!c.sealedSecret, ...(c.topic ? { topic: c.topic } : {}) } });
    return { status: 201, body: channelView(c) };
  },
});

const update = defineFleetRoute({
  method: 'PUT',
  path: '/api/alerts/channels/{id}',
  summary: 'Edit a channel: empty url/secret/token keep them, removeSecret clears, a new type needs the URL; audited alerts.channel.update',
  access: 'admin',
  params: idParams,
  body: channelInputSchema,
  async handle({ rt, params, body, actor, correlationId }) {
    const out = await updateFleetChannel(rt.store, fleetChannelPolicy(rt.config), params.id, body);
    await rt.audit.append({ event: 'alerts.channel.update', outcome: 'success', actor, target: channelTarget(out.record), correlationId, details: { changes: changeList(out.changes) } });
    return { body: channelView(out.record) };
  },
});

const remove = defineFleetRoute({
  method: 'DELETE',
  path: '/api/alerts/channels/{id}',
  summary: 'Delete a channel (audited alerts.channel.delete)',
  access: 'admin',
  params: idParams,
  async handle({ rt, params, actor, correlationId }) {
    const c = await deleteFleetChannel(rt.store, params.id);
    await rt.audit.append({ event: 'alerts.channel.delete', outcome: 'success', actor, target: channelTarget(c), correlationId });
    return { status: 204 };
  },
});

const test = defineFleetRoute({
  method: 'POST',
  path: '/api/alerts/channels/{id}/test',
  summary: 'Send one test notification (10 per minute); recorded in history as test, audited alerts.channel.test',
  access: 'admin',
  params: idParams,
  async handle({ rt, params, actor, correlationId }) {
    const c = await getFleetChannel(rt.store, params.id);
    if (!c) throw notFound();
    try {
      await takeTestSend(rt.store);
    } catch (e) {
      if (isApiError(e)) await rt.audit.append({ event: 'alerts.channel.test', outcome: 'denied', reason: e.code, actor, target: channelTarget(c), correlationId });
      throw e;
    }
    let policy;
    try {
      policy = fleetChannelPolicy(rt.config);
    } catch {
      policy = undefined; // recorded as secret_unreadable
    }
    const { result } = await sendTestNotification({ store: rt.store, policy, publicOrigin: rt.config.FLEET_PUBLIC_ORIGIN }, c);
    await rt.audit.append({ event: 'alerts.channel.test', outcome: result.ok ? 'success' : 'error', ...(result.error ? { reason: result.error } : {}), actor, target: channelTarget(c), correlationId, details: { ...(result.status ? { status: result.status } : {}) } });
    return { body: { ok: result.ok, ...(result.status ? { status: result.status } : {}), ...(result.error ? { error: result.error } : {}) } };
  },
});

export const routes = [list, getSettings, putSettings, listChannels, create, update, remove, test];
export const handler = fleetHandler(routes);
