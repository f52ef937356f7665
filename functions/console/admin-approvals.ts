import { z } from 'zod';
import { approvalSettingsInputSchema, approvalSettingsView, saveApprovalSettings } from '@lib/approvals/admin';
import { adminContext, audited } from '@lib/authz/admin';
import { ID_PATTERN } from '@lib/authz/rights';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { channelInputSchema, channelView, deleteChannel, listChannels, saveChannel } from '@lib/notifications';
import { approvalSettings, channelSaved, channels } from '@lib/api/console/admin';
import { noContent } from '@lib/http/answers';

// Approval settings and notification channels (settings.manage; changes need a step-up).
const channelId = z.object({ id: z.string().regex(ID_PATTERN) });

const getSettings = defineRoute({
  method: 'GET',
  path: '/api/admin/approvals/settings',
  summary: 'Approval settings: lifetime, always-require list, instance approvers and count, per-delegation requires-approval',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  responses: { 200: approvalSettings },
  async handle(c) {
    return { body: await approvalSettingsView(c) };
  },
});

const putSettings = defineRoute({
  method: 'PUT',
  path: '/api/admin/approvals/settings',
  summary: 'Replace the approval settings (audited settings.approvals with old and new values)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: approvalSettingsInputSchema,
  responses: { 200: approvalSettings },
  errors: { 400: ['action_not_in_delegation', 'delegation_not_found', 'operator_not_found', 'role_not_found'], 409: ['version_conflict'], 503: ['directory_unavailable'] },
  async handle(c) {
    return { body: await saveApprovalSettings(adminContext(c), c.body) };
  },
});

const getChannels = defineRoute({
  method: 'GET',
  path: '/api/admin/notifications/channels',
  summary: 'Notification channels (signed webhooks); URLs and secrets are never shown',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: channels },
  async handle(c) {
    return { body: { channels: (await listChannels(c.rt)).map(channelView) } };
  },
});

const putChannel = defineRoute({
  method: 'PUT',
  path: '/api/admin/notifications/channels/{id}',
  summary: 'Create or replace a webhook channel: https URL, secret (>= 32 chars), events; audited notifications.channel_saved',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: channelId,
  body: channelInputSchema,
  responses: { 200: channelSaved, 201: channelSaved },
  errors: { 400: ['https_required', 'target_refused', 'url_and_secret_required', 'url_required'], 409: ['too_many_channels'] },
  async handle(c) {
    const ctx = adminContext(c);
    const out = await audited(ctx, 'notifications.channel_saved', { id: c.params.id, kind: 'notification_channel' }, () => saveChannel(c.rt, c.params.id, c.body));
    await c.rt.audit.append({ event: 'notifications.channel_saved', outcome: 'success', reason: out.created ? 'created' : 'replaced', actor: ctx.actor, target: { id: c.params.id, kind: 'notification_channel' }, correlationId: c.correlationId, details: { old: out.old, new: out.channel } });
    return { status: out.created ? 201 : 200, body: { channel: out.channel } };
  },
});

const deleteOne = defineRoute({
  method: 'DELETE',
  path: '/api/admin/notifications/channels/{id}',
  summary: 'Delete a channel (audited notifications.channel_deleted)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: channelId,
  responses: { 204: noContent('Deleted') },
  async handle(c) {
    const ctx = adminContext(c);
    const old = await audited(ctx, 'notifications.channel_deleted', { id: c.params.id, kind: 'notification_channel' }, () => deleteChannel(c.rt, c.params.id));
    await c.rt.audit.append({ event: 'notifications.channel_deleted', outcome: 'success', reason: 'deleted', actor: ctx.actor, target: { id: c.params.id, kind: 'notification_channel' }, correlationId: c.correlationId, details: { old } });
    return { status: 204 };
  },
});

export const routes = [getSettings, putSettings, getChannels, putChannel, deleteOne];
export const handler = consoleHandler(routes);
