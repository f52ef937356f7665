import { channelView, type ChannelInput } from '../channels';
import { badRequest, isApiError, notFound } from '../errors';
import type { FleetAccess } from './access';
import { getConsole } from './consoles';
import { auditRefusal, hasLevel } from './guard';
import { createFleetChannel, deleteFleetChannel, fleetChannelPolicy, getFleetChannel, listFleetChannels, updateFleetChannel } from './alerts/channels';
import { sendTestNotification } from './alerts/notify';
import { outboundTrust } from '../outbound/https';
import type { AlertSettings } from './alerts/rules';
import { acknowledgeAlert, createSilence, deleteSilence, type Silence, type SilenceInput } from './alerts/silences';
import { readAlertSettings, writeAlertSettings, type Alert } from './alerts/store';
import { alertsView, changeList, channelTarget, takeTestSend } from './alerts/view';
import { requireRegisteredClient, type Acting } from './register';
import type { FleetContext } from './route';
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

// ---- acting on alerts (issue 29): acknowledge, silence; the guard decided who may (operator of the client)

const alertTarget = (a: Alert) => ({ id: a.key, name: a.subject, kind: 'alert' });
const silenceTarget = (s: Silence) => ({ id: s.id, name: [s.kind, s.clientCode, s.consoleId].filter(Boolean).join(' '), kind: 'alert_silence' });
const silenceDetails = (s: Silence) => ({ ...(s.kind ? { kind: s.kind } : {}), ...(s.consoleId ? { consoleId: s.consoleId } : {}), endsAt: s.endsAt, comment: s.comment });

/** Acknowledge an active alert (it stays active, quiet), audited `alerts.acknowledge` with who and why, filed under its client. */
export async function acknowledgeActiveAlert(rt: FleetRuntime, alert: Alert, comment: string, by: Acting) {
  const done = await acknowledgeAlert(rt.store, alert.key, { by: by.actor.name ?? 'unknown', at: new Date().toISOString(), comment });
  if (!done) throw notFound(); // resolved meanwhile
  await rt.audit.append({ event: 'alerts.acknowledge', outcome: 'success', actor: by.actor, ...(alert.clientCode ? { client: alert.clientCode } : {}), target: alertTarget(alert), correlationId: by.correlationId, details: { kind: alert.kind, comment } });
  const { consoleId: _c, proxyId: _p, notified: _n, ...shown } = done;
  return shown;
}

/** Create a silence (the console's client when a console is named), audited `alerts.silence.create`, filed under its client. */
export async function addSilence(rt: FleetRuntime, input: SilenceInput, clientCode: string | undefined, by: Acting): Promise<Silence> {
  const s = await createSilence(rt.store, { ...input, ...(clientCode ? { clientCode } : {}) }, by.actor.name ?? 'unknown');
  await rt.audit.append({ event: 'alerts.silence.create', outcome: 'success', actor: by.actor, ...(s.clientCode ? { client: s.clientCode } : {}), target: silenceTarget(s), correlationId: by.correlationId, details: silenceDetails(s) });
  return s;
}

/** End a silence now, audited `alerts.silence.delete`. */
export async function removeSilence(rt: FleetRuntime, s: Silence, by: Acting): Promise<void> {
  await deleteSilence(rt.store, s.id);
  await rt.audit.append({ event: 'alerts.silence.delete', outcome: 'success', actor: by.actor, ...(s.clientCode ? { client: s.clientCode } : {}), target: silenceTarget(s), correlationId: by.correlationId, details: silenceDetails(s) });
}

/**
 * The client a new silence concerns, decided before anything is written: a named console's client
 * (unknown or out of scope: 404 alike), else the named client (outside the scope: 403 client_scope,
 * viewer: 403 insufficient_level); none (a rule across every client): administrators only.
 */
export async function silenceClientOf(ctx: FleetContext<SilenceInput>): Promise<string | null> {
  const b = ctx.body;
  let client = b.clientCode ?? null;
  if (b.consoleId) {
    const c = await getConsole(ctx.rt.store, b.consoleId);
    if (!c || ctx.access!.levelOn(c.clientCode) === undefined) {
      await auditRefusal(ctx, 'out_of_scope', 'operator', c?.clientCode ?? null);
      throw notFound();
    }
    if (client && client !== c.clientCode) throw badRequest('validation_failed', { errors: [{ field: 'body.clientCode', message: "not the console's client" }] });
    client = c.clientCode;
  }
  if (client === null) {
    if (!ctx.access!.identity.admin) await ctx.refuse('admin_required', 'admin', null);
    return null;
  }
  if (!hasLevel(ctx, client, 'operator')) await ctx.refuse(ctx.access!.levelOn(client) === undefined ? 'client_scope' : 'insufficient_level', 'operator', client);
  await requireRegisteredClient(ctx.rt, client);
  return client;
}
