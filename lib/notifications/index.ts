import { createHmac, randomUUID } from 'node:crypto';
import https from 'node:https';
import { z } from 'zod';
import type { ApprovalRequest } from '../approvals/requests';
import { openString, seal } from '../crypto/seal';
import { badRequest, notFound } from '../errors';
import { logger } from '../log';
import type { ConsoleRuntime } from '../runtime';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';

// Notification channels (console spec, Notifications): a signed webhook. Each channel subscribes
// to `approval_requested` (the approvers' channel) and/or `approval_decided` (the requesters'
// channel). The URL and the secret are stored sealed under the master key and never leave the
// process again (not in an answer, a log line, an audit row or an error body). A delivery is an
// HTTPS POST of a JSON body signed with HMAC-SHA256 under the channel's secret.

export const NOTIFICATION_KINDS = ['approval_requested', 'approval_decided'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const channelInputSchema = z.object({
  /** https only; kept sealed */
  url: z
    .string()
    .max(2048)
    .refine((u) => {
      try {
        return new URL(u).protocol === 'https:';
      } catch {
        return false;
      }
    }, { message: 'an https:// URL', params: { code: 'https_required' } })
    .optional(),
  /** at least 32 characters; kept sealed */
  secret: z.string().min(32).max(512).optional(),
  events: z.array(z.enum(NOTIFICATION_KINDS)).min(1).max(2),
  enabled: z.boolean().default(true),
});
export type ChannelInput = z.infer<typeof channelInputSchema>;

interface ChannelRecord {
  id: string;
  kind: 'webhook';
  events: NotificationKind[];
  enabled: boolean;
  urlSealed: string;
  secretSealed: string;
  updatedAt: string;
}

const PK = 'NOTIFY';
const urlAad = (id: string) => `notify:${id}:url`;
const secretAad = (id: string) => `notify:${id}:secret`;

export const channelView = (c: ChannelRecord) => ({ id: c.id, kind: c.kind, events: c.events, enabled: c.enabled, urlConfigured: true, secretConfigured: true, updatedAt: c.updatedAt });

export async function listChannels(rt: ConsoleRuntime) {
  return (await queryRecords<ChannelRecord>(rt.store, PK, 'CHANNEL#')).map((r) => r.data);
}

/** Create or replace a channel; on replace, a URL or secret not given keeps the stored one. */
export async function saveChannel(rt: ConsoleRuntime, id: string, input: ChannelInput) {
  const key = await rt.masterKey();
  const existing = await getRecord<ChannelRecord>(rt.store, PK, `CHANNEL#${id}`);
  if (!existing && (!input.url || !input.secret)) throw badRequest('url_and_secret_required');
  const rec: ChannelRecord = {
    id,
    kind: 'webhook',
    events: [...new Set(input.events)],
    enabled: input.enabled,
    urlSealed: input.url ? seal(key, input.url, urlAad(id)) : existing!.data.urlSealed,
    secretSealed: input.secret ? seal(key, input.secret, secretAad(id)) : existing!.data.secretSealed,
    updatedAt: new Date().toISOString(),
  };
  await putRecord(rt.store, PK, `CHANNEL#${id}`, rec);
  return { channel: channelView(rec), created: !existing, old: existing ? channelView(existing.data) : null };
}

export async function deleteChannel(rt: ConsoleRuntime, id: string) {
  const existing = await getRecord<ChannelRecord>(rt.store, PK, `CHANNEL#${id}`);
  if (!existing) throw notFound();
  await deleteRecord(rt.store, PK, `CHANNEL#${id}`);
  return channelView(existing.data);
}

/** The signature header value: `sha256=<hex HMAC-SHA256 of the raw body under the channel secret>`. */
export const signBody = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * `<consoleUrl>/approvals/<id>` under the console's base path: a console served at
 * https://host/hdc links to https://host/hdc/approvals/<id> (URL resolution of an absolute path
 * would drop /hdc). Query and fragment of the setting are not part of the base.
 */
export function approvalLink(consoleUrl: string | undefined, path: string): string {
  if (!consoleUrl) return path;
  const base = new URL(consoleUrl);
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}`;
}

/** The payload of a notification: what the request is, and a link that opens it in the SPA. */
export function notificationPayload(kind: NotificationKind, r: ApprovalRequest, consoleUrl: string | undefined) {
  const path = `/approvals/${encodeURIComponent(r.id)}`;
  return {
    id: randomUUID(),
    kind,
    sentAt: new Date().toISOString(),
    request: {
      id: r.id,
      kind: r.kind,
      action: r.action,
      state: r.state,
      ...(r.outcome ? { outcome: r.outcome } : {}),
      target: { kind: r.target.kind, name: r.target.name },
      requester: r.requester.username,
      reason: r.reason,
      ...(r.ticket ? { ticket: r.ticket } : {}),
      approvalsNeeded: r.approvalsNeeded,
      approvals: r.approvals.map((a) => a.username),
      approvers: r.approvers,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      ...(r.closedBy ? { closedBy: r.closedBy.username } : {}),
    },
    link: approvalLink(consoleUrl, path),
  };
}

const DELIVERY_TIMEOUT_MS = 5000;

function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers }, timeout: DELIVERY_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Deliver `kind` about request `r` to every enabled channel subscribed to it. A failed delivery
 * never fails the transition: it is logged by channel id and status or error code only.
 */
export async function notify(rt: ConsoleRuntime, kind: NotificationKind, r: ApprovalRequest): Promise<void> {
  try {
    const channels = (await listChannels(rt)).filter((c) => c.enabled && c.events.includes(kind));
    if (!channels.length) return;
    const key = await rt.masterKey();
    const { readApprovalSettings } = await import('../approvals/settings');
    const { settings } = await readApprovalSettings(rt.store);
    const body = JSON.stringify(notificationPayload(kind, r, settings.consoleUrl));
    await Promise.all(
      channels.map(async (c) => {
        try {
          const status = await post(openString(key, c.urlSealed, urlAad(c.id)), body, {
            'x-hdc-event': kind,
            'x-hdc-signature': signBody(openString(key, c.secretSealed, secretAad(c.id)), body),
          });
          if (status < 200 || status >= 300) logger.warn('notification_failed', { channel: c.id, kind, request: r.id, status });
          else logger.info('notification_sent', { channel: c.id, kind, request: r.id, status });
        } catch (e) {
          logger.warn('notification_failed', { channel: c.id, kind, request: r.id, error: String((e as { code?: string }).code ?? 'error') });
        }
      }),
    );
  } catch (e) {
    logger.error('notification_failed', { kind, request: r.id, error: (e as Error).name });
  }
}
