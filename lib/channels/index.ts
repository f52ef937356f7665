import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { plainText } from '../plain-text';
import { openString, seal } from '../crypto/seal';
import { badRequest } from '../errors';
import { httpsRequest, requireAdmittedUrl, type OutboundTrust } from '../outbound/https';
import { renderChannelRequest, type NotificationEvent, type Signing } from './render';

// Notification channels, one module for both applications: the fleet plane's alert channels and
// the console's approval notifications. Four kinds (fleet spec, Notification channel): a generic
// signed webhook, a topic push (ntfy-style), a team-chat webhook (Adaptive Card 1.4) and a chat
// webhook (`{ text }`). The URL, the HMAC secret and the access token are write-only: sealed
// (AES-256-GCM, AAD bound to the channel and field), never returned, logged or audited; views
// show the URL's origin and whether a secret is set. Each application keeps its records where it
// wants (the functions below take and return records) and picks its key and signing scheme.

export * from './render';

export const CHANNEL_TYPES = ['webhook', 'ntfy', 'teams', 'chat'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const MAX_CHANNELS = 20;
export const TOPIC_RE = /^[A-Za-z0-9_-]{1,64}$/;

export interface ChannelRecord {
  id: string;
  name: string;
  type: ChannelType;
  enabled: boolean;
  /** topic push: the topic (not a secret: shown) */
  topic?: string;
  /** shown: scheme://host[:port] of the URL, never its path or query */
  urlOrigin: string;
  sealedUrl: string;
  sealedSecret?: string;
  sealedToken?: string;
  createdAt: string;
  updatedAt: string;
  /** the console's channels: which approval notifications it receives */
  events?: string[];
  lastDelivery?: { at: string; ok: boolean; status?: number; error?: string };
}

export interface ChannelView {
  id: string;
  name: string;
  type: ChannelType;
  enabled: boolean;
  topic?: string;
  urlOrigin: string;
  secretSet: boolean;
  tokenSet: boolean;
  events?: string[];
  createdAt: string;
  updatedAt: string;
  lastDelivery?: ChannelRecord['lastDelivery'];
}

export const channelView = (c: ChannelRecord): ChannelView => ({
  id: c.id,
  name: c.name,
  type: c.type,
  enabled: c.enabled,
  ...(c.topic ? { topic: c.topic } : {}),
  urlOrigin: c.urlOrigin,
  secretSet: !!c.sealedSecret,
  tokenSet: !!c.sealedToken,
  ...(c.events ? { events: c.events } : {}),
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
  ...(c.lastDelivery ? { lastDelivery: c.lastDelivery } : {}),
});

/** The request body of create and update (fleet: POST/PUT /api/alerts/channels). */
export const channelInputSchema = z
  .object({
    name: plainText().trim().min(1).max(100).optional(),
    type: z.enum(CHANNEL_TYPES).optional(),
    /** empty on update: keep the stored URL */
    url: z.string().max(2048).optional(),
    /** generic webhook HMAC secret; empty on update: keep it */
    secret: plainText().max(512).optional(),
    removeSecret: z.boolean().optional(),
    topic: plainText().optional(),
    /** topic push access token; empty on update: keep it */
    token: plainText().max(1024).optional(),
    removeToken: z.boolean().optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type ChannelInput = z.output<typeof channelInputSchema>;

export interface ChannelPolicy {
  /** sealing key (fleet: SECRETS_ENCRYPTION_KEY; console: its master key) */
  key: Buffer;
  /** AAD namespace, e.g. `fleet-channel` */
  aad: string;
  /** the shortest HMAC secret accepted (fleet spec: 8) */
  secretMin: number;
  /** what a channel URL may reach (the application's allow-list); default: public addresses only */
  targets?: OutboundTrust;
}

/** 400 `target_refused` (field url) when a URL given on create or edit names a target the outbound policy refuses. */
export async function admitChannelUrl(input: Pick<ChannelInput, 'url'>, policy: Pick<ChannelPolicy, 'targets'>): Promise<void> {
  const url = input.url?.trim();
  if (url) await requireAdmittedUrl(url, policy.targets);
}

const aadOf = (p: ChannelPolicy, id: string, field: 'url' | 'secret' | 'token') => `${p.aad}:${id}:${field}`;

function checkUrl(u: string): URL {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    throw badRequest('validation_failed', { fields: { url: 'an https:// URL' } });
  }
  if (url.protocol !== 'https:') throw badRequest('https_required', { fields: { url: 'https only' } });
  if (url.username || url.password) throw badRequest('validation_failed', { fields: { url: 'no credentials in the URL' } });
  return url;
}

export interface ChannelChange {
  record: ChannelRecord;
  /** audit detail of an update (spec: enabled, type, url=replaced, secret=replaced|cleared) */
  changes: Record<string, unknown>;
}

/**
 * Apply a create (existing undefined) or an update. Edit semantics (fleet spec): an empty URL
 * keeps the URL, an empty secret keeps the secret, `removeSecret` clears it, and changing the
 * type requires the URL again.
 */
export function applyChannelInput(existing: ChannelRecord | undefined, input: ChannelInput, policy: ChannelPolicy, extra: { events?: string[]; id?: string } = {}): ChannelChange {
  const now = new Date().toISOString();
  const id = existing?.id ?? extra.id ?? randomUUID();
  const type = input.type ?? existing?.type;
  const name = input.name ?? existing?.name;
  if (!type) throw badRequest('validation_failed', { fields: { type: 'required' } });
  if (!name) throw badRequest('validation_failed', { fields: { name: 'required' } });
  const url = input.url?.trim() || undefined;
  const typeChanged = !!existing && type !== existing.type;
  if ((!existing || typeChanged) && !url) throw badRequest('url_required', { fields: { url: existing ? 'changing the type requires the URL again' : 'required' } });
  const parsed = url ? checkUrl(url) : undefined;

  const secret = input.secret || undefined;
  const token = input.token || undefined;
  if (secret !== undefined && type !== 'webhook') throw badRequest('validation_failed', { fields: { secret: 'only a generic webhook has an HMAC secret' } });
  if (secret !== undefined && (secret.length < policy.secretMin || secret.length > 512)) throw badRequest('validation_failed', { fields: { secret: `${policy.secretMin} to 512 characters` } });
  if (token !== undefined && type !== 'ntfy') throw badRequest('validation_failed', { fields: { token: 'only a topic push has an access token' } });
  const topic = input.topic ?? (typeChanged ? undefined : existing?.topic);
  if (type === 'ntfy' && (!topic || !TOPIC_RE.test(topic))) throw badRequest('validation_failed', { fields: { topic: '[A-Za-z0-9_-]{1,64}' } });
  if (type !== 'ntfy' && input.topic !== undefined) throw badRequest('validation_failed', { fields: { topic: 'only a topic push has a topic' } });

  const rec: ChannelRecord = {
    id,
    name,
    type,
    enabled: input.enabled ?? existing?.enabled ?? true,
    ...(type === 'ntfy' ? { topic } : {}),
    urlOrigin: parsed ? parsed.origin : existing!.urlOrigin,
    sealedUrl: url ? seal(policy.key, url, aadOf(policy, id, 'url')) : existing!.sealedUrl,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    ...(extra.events ? { events: extra.events } : existing?.events ? { events: existing.events } : {}),
    ...(existing?.lastDelivery ? { lastDelivery: existing.lastDelivery } : {}),
  };
  // a secret survives an edit only on the same kind of channel
  const keepSecret = !typeChanged && !input.removeSecret && existing?.sealedSecret;
  if (secret) rec.sealedSecret = seal(policy.key, secret, aadOf(policy, id, 'secret'));
  else if (keepSecret) rec.sealedSecret = existing!.sealedSecret;
  const keepToken = !typeChanged && !input.removeToken && existing?.sealedToken;
  if (token) rec.sealedToken = seal(policy.key, token, aadOf(policy, id, 'token'));
  else if (keepToken) rec.sealedToken = existing!.sealedToken;

  const changes: Record<string, unknown> = {};
  if (existing) {
    if (rec.enabled !== existing.enabled) changes.enabled = rec.enabled;
    if (typeChanged) changes.type = type;
    if (name !== existing.name) changes.name = name;
    if (url) changes.url = 'replaced';
    if (secret) changes.secret = 'replaced';
    else if (existing.sealedSecret && !rec.sealedSecret) changes.secret = 'cleared';
    if (token) changes.token = 'replaced';
    else if (existing.sealedToken && !rec.sealedToken) changes.token = 'cleared';
    if (rec.topic !== existing.topic) changes.topic = rec.topic ?? null;
  }
  return { record: rec, changes };
}

export interface DeliveryResult {
  channelId: string;
  name: string;
  type: ChannelType;
  ok: boolean;
  status?: number;
  /** http_error, redirect_refused, connect_error (no verified session: lib/outbound/https.ts), timeout, secret_unreadable, ... */
  error?: string;
  at: string;
}

export interface DeliverOptions {
  policy: Pick<ChannelPolicy, 'key' | 'aad'>;
  signing: Signing;
  trust?: OutboundTrust;
  timeoutMs?: number;
}

/** One request to one channel with every event of the batch. Never throws. */
export async function deliverToChannel(c: ChannelRecord, events: NotificationEvent[], webhookPayload: unknown, opts: DeliverOptions): Promise<DeliveryResult> {
  const at = new Date().toISOString();
  const base = { channelId: c.id, name: c.name, type: c.type, at };
  let url: string;
  let secret: string | undefined;
  let token: string | undefined;
  try {
    url = openString(opts.policy.key, c.sealedUrl, `${opts.policy.aad}:${c.id}:url`);
    secret = c.sealedSecret ? openString(opts.policy.key, c.sealedSecret, `${opts.policy.aad}:${c.id}:secret`) : undefined;
    token = c.sealedToken ? openString(opts.policy.key, c.sealedToken, `${opts.policy.aad}:${c.id}:token`) : undefined;
  } catch {
    return { ...base, ok: false, error: 'secret_unreadable' };
  }
  const req = renderChannelRequest({ type: c.type, url, secret, token, topic: c.topic }, events, webhookPayload, opts.signing);
  const r = await httpsRequest({ url: req.url, method: 'POST', headers: req.headers, body: req.body, timeoutMs: opts.timeoutMs, logContext: { channel: c.id } }, opts.trust);
  return { ...base, ok: r.ok, ...(r.status ? { status: r.status } : {}), ...(r.ok ? {} : { error: r.error ?? 'error' }) };
}

/** One request per enabled channel, in parallel (at most 20 channels). */
export async function deliverToAll(channels: ChannelRecord[], events: NotificationEvent[], webhookPayload: unknown, opts: DeliverOptions): Promise<DeliveryResult[]> {
  return Promise.all(channels.filter((c) => c.enabled).map((c) => deliverToChannel(c, events, webhookPayload, opts)));
}
