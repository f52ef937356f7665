import { channelView, type ChannelInput } from '../channels';
import { isApiError, notFound } from '../errors';
import type { FleetAccess } from './access';
import { createFleetChannel, deleteFleetChannel, fleetChannelPolicy, getFleetChannel, listFleetChannels, updateFleetChannel } from './alerts/channels';
import { sendTestNotification } from './alerts/notify';
import { outboundTrust } from '../outbound/https';
import type { AlertSettings } from './alerts/rules';
import { readAlertSettings, writeAlertSettings } from './alerts/store';
import { alertsView, changeList, channelTarget, takeTestSend } from './alerts/view';
import type { Acting } from './register';
import type { FleetRuntime } from './runtime';

// Alerts and their settings and channels as the routes use them: the alert view filtered by the
// caller's scope, and every settings or channel change (and test send) written with its audit
// row (spec: Audit). The handler in functions/fleet/alerts.ts only parses, calls these and answers.

/** Active alerts and history of the clients in the caller's scope, last evaluation. */
export const alertsInScope = (rt: FleetRuntime, access: FleetAccess) => alertsView(rt.store, access.visibleCodes());

/** Alert settings and the channels (administrators). */
export async function alertSettingsView(rt: FleetRuntime) {
  const [settings, channels] = await Promise.all([readAlertSettings(rt.store), listFleetChannels(rt.store)]);
  return { ...settings, channels: channels.map(channelView) };
}

/** Writes the settings, audited `alerts.settings` with old and new values. */
export async function changeAlertSettings(rt: FleetRuntime, input: AlertSettings, by: Acting): Promise<AlertSettings> {
  const out = await writeAlertSettings(rt.store, input);
  await rt.audit.append({ event: 'alerts.settings', outcome: 'success', actor: by.actor, correlationId: by.correlationId, details: { old: out.old, new: out.new } });
  return out.new;
}

export const alertChannelsView = async (rt: FleetRuntime) => ({ channels: (await listFleetChannels(rt.store)).map(channelView) });

/** Creates a channel, audited `alerts.channel.create` (type, URL origin, enabled, signed, topic; never the URL or secret). */
export async function addAlertChannel(rt: FleetRuntime, input: ChannelInput, by: Acting) {
  const c = await createFleetChannel(rt.store, fleetChannelPolicy(rt.config), input);
  await rt.audit.append({ event: 'alerts.channel.create', outcome: 'success', actor: by.actor, target: channelTarget(c), correlationId: by.correlationId, details: { type: c.type, urlOrigin: c.urlOrigin, enabled: c.enabled, signed: !!c.sealedSecret, ...(c.topic ? { topic: c.topic } : {}) } });
  return channelView(c);
}

/** Edits a channel, audited `alerts.channel.update` with the list of changes. */
export async function editAlertChannel(rt: FleetRuntime, id: string, input: ChannelInput, by: Acting) {
  const out = await updateFleetChannel(rt.store, fleetChannelPolicy(rt.config), id, input);
  await rt.audit.append({ event: 'alerts.channel.update', outcome: 'success', actor: by.actor, target: channelTarget(out.record), correlationId: by.correlationId, details: { changes: changeList(out.changes) } });
  return channelView(out.record);
}

/** Deletes a channel, audited `alerts.channel.delete`. */
export async function removeAlertChannel(rt: FleetRuntime, id: string, by: Acting): Promise<void> {
  const c = await deleteFleetChannel(rt.store, id);
  await rt.audit.append({ event: 'alerts.channel.delete', outcome: 'success', actor: by.actor, target: channelTarget(c), correlationId: by.correlationId });
}

/**
 * One test notification (10 per minute across administrators), recorded in history as test and
 * audited `alerts.channel.test`: denied with its code when over the rate, else success or error.
 */
export async function testAlertChannel(rt: FleetRuntime, id: string, by: Acting): Promise<{ ok: boolean; status?: number; error?: string }> {
  const c = await getFleetChannel(rt.store, id);
  if (!c) throw notFound();
  try {
    await takeTestSend(rt.store);
  } catch (e) {
    if (isApiError(e)) await rt.audit.append({ event: 'alerts.channel.test', outcome: 'denied', reason: e.code, actor: by.actor, target: channelTarget(c), correlationId: by.correlationId });
    throw e;
  }
  let policy;
  try {
    policy = fleetChannelPolicy(rt.config);
  } catch {
    policy = undefined; // recorded as secret_unreadable
  }
  const { result } = await sendTestNotification({ store: rt.store, policy, publicOrigin: rt.config.FLEET_PUBLIC_ORIGIN, trust: outboundTrust(rt.config.FLEET_OUTBOUND_ALLOWED_TARGETS) }, c);
  await rt.audit.append({ event: 'alerts.channel.test', outcome: result.ok ? 'success' : 'error', ...(result.error ? { reason: result.error } : {}), actor: by.actor, target: channelTarget(c), correlationId: by.correlationId, details: { ...(result.status ? { status: result.status } : {}) } });
  return { ok: result.ok, ...(result.status ? { status: result.status } : {}), ...(result.error ? { error: result.error } : {}) };
}
