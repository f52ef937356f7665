import { z } from 'zod';
import { plainText } from '../plain-text';
import { admitChannelUrl, applyChannelInput, CHANNEL_TYPES, channelView, deliverToChannel, MAX_CHANNELS, type ChannelRecord, type NotificationEvent } from '../channels';
import { badRequest, conflict, notFound } from '../errors';
import { logger } from '../log';
import { outboundTrust } from '../outbound/https';
import type { ConsoleRuntime } from '../runtime';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';

// The console's notification channels (console spec, Notifications), on the channels module the
// fleet plane uses too (lib/channels): a generic webhook signed the Standard Webhooks way
// (webhook-id, webhook-timestamp, webhook-signature v1 over id, timestamp and body: a receiver
// verifies with that specification's libraries and refuses replays older than 5 minutes), a
// topic push, a team-chat card, a chat text. Each channel subscribes to `approval_requested`
// (the approvers' channel) and/or `approval_decided` (the requesters' channel). URL, secret and
// token are sealed under the master key and never leave the process again.
//
// This module knows nothing of approvals: the approvals module builds the payload and the
// events and calls `deliverNotification` (the dependency goes one way).

export const NOTIFICATION_KINDS = ['approval_requested', 'approval_decided'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const channelInputSchema = z
  .object({
    name: plainText().trim().min(1).max(100).optional(),
    /** default: generic webhook */
    type: z.enum(CHANNEL_TYPES).optional(),
    /** https only; kept sealed; absent or empty keeps the stored one */
    url: z
      .string()
      .max(2048)
      .refine((u) => u === '' || URL.canParse(u) && new URL(u).protocol === 'https:', { message: 'an https:// URL', params: { code: 'https_required' } })
      .optional(),
    /** generic webhook: at least 32 characters (or a Standard Webhooks `whsec_` key); kept sealed */
    secret: plainText().min(32).max(512).optional(),
    topic: plainText().optional(),
    token: plainText().max(1024).optional(),
    events: z.array(z.enum(NOTIFICATION_KINDS)).min(1).max(2),
    enabled: z.boolean().default(true),
  })
  .strict();
export type ChannelInput = z.infer<typeof channelInputSchema>;

const PK = 'NOTIFY';
/** AAD namespace: `notify:<id>:url|secret|token`, as channels were sealed before the shared module */
const AAD = 'notify';
const SECRET_MIN = 32;

/** Records written before the shared module (webhook only) read as channels. */
interface LegacyRecord {
  id: string;
  kind: 'webhook';
  events: NotificationKind[];
  enabled: boolean;
  urlSealed: string;
  secretSealed: string;
  updatedAt: string;
}
const fromStored = (r: ChannelRecord | LegacyRecord): ChannelRecord =>
  'urlSealed' in r
    ? { id: r.id, name: r.id, type: 'webhook', enabled: r.enabled, urlOrigin: '(set)', sealedUrl: r.urlSealed, sealedSecret: r.secretSealed, events: r.events, createdAt: r.updatedAt, updatedAt: r.updatedAt }
    : r;

export async function listChannels(rt: ConsoleRuntime): Promise<ChannelRecord[]> {
  return (await queryRecords<ChannelRecord | LegacyRecord>(rt.store, PK, 'CHANNEL#')).map((r) => fromStored(r.data));
}

export { channelView };

/** Create or replace a channel; on replace, a URL, secret or token not given keeps the stored one. */
export async function saveChannel(rt: ConsoleRuntime, id: string, input: ChannelInput) {
  const stored = await getRecord<ChannelRecord | LegacyRecord>(rt.store, PK, `CHANNEL#${id}`);
  const existing = stored ? fromStored(stored.data) : undefined;
  const type = input.type ?? existing?.type ?? 'webhook';
  if (!existing && (!input.url || (type === 'webhook' && !input.secret))) throw badRequest('url_and_secret_required');
  if (!existing && (await listChannels(rt)).length >= MAX_CHANNELS) throw conflict('too_many_channels', { max: MAX_CHANNELS });
  await admitChannelUrl(input, { targets: outboundTrust(rt.config.Outbound.AllowedTargets) });
  const { record } = applyChannelInput(existing, { ...input, type, name: input.name ?? existing?.name ?? id }, { key: await rt.masterKey(), aad: AAD, secretMin: SECRET_MIN }, { id, events: [...new Set(input.events)] });
  await putRecord(rt.store, PK, `CHANNEL#${id}`, record);
  return { channel: channelView(record), created: !existing, old: existing ? channelView(existing) : null };
}

export async function deleteChannel(rt: ConsoleRuntime, id: string) {
  const existing = await getRecord<ChannelRecord | LegacyRecord>(rt.store, PK, `CHANNEL#${id}`);
  if (!existing) throw notFound();
  await deleteRecord(rt.store, PK, `CHANNEL#${id}`);
  return channelView(fromStored(existing.data));
}

/**
 * Deliver one notification to every enabled channel subscribed to `kind`: the payload as the
 * generic webhook's JSON body, the events for the human kinds. A failed delivery never fails
 * the transition: it is logged by channel id and status or error code only.
 */
export async function deliverNotification(rt: ConsoleRuntime, kind: NotificationKind, payload: unknown, events: NotificationEvent[], ref: Record<string, string>): Promise<void> {
  try {
    const channels = (await listChannels(rt)).filter((c) => c.enabled && c.events?.includes(kind));
    if (!channels.length) return;
    const key = await rt.masterKey();
    const trust = outboundTrust(rt.config.Outbound.AllowedTargets);
    await Promise.all(
      channels.map(async (c) => {
        const r = await deliverToChannel(c, events, payload, { policy: { key, aad: AAD }, signing: 'standard', trust });
        if (r.ok) logger.info('notification_sent', { channel: c.id, type: c.type, kind, ...ref, status: r.status });
        else logger.warn('notification_failed', { channel: c.id, type: c.type, kind, ...ref, ...(r.status ? { status: r.status } : {}), error: r.error });
      }),
    );
  } catch (e) {
    logger.error('notification_failed', { kind, ...ref, error: (e as Error).name });
  }
}
