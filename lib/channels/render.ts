import { createHmac, randomUUID } from 'node:crypto';

// What each kind of channel receives for a batch of events (pure; tests check the shapes as a
// real receiver would). The generic webhook's JSON body is the application's own payload; the
// human kinds (topic push, team-chat card, chat text) are rendered from the events.

export const TEXT_EVENT_LIMIT = 30;

export interface NotificationEvent {
  /** fired, resolved, test (fleet); approval_requested, approval_decided (console) */
  event: string;
  severity?: 'info' | 'warning' | 'critical';
  /** one line: severity, kind label, client, subject */
  text: string;
  /** absolute https link into the application, when its public URL is known */
  link?: string;
  facts?: Array<{ title: string; value: string }>;
}

/**
 * How a generic webhook is signed:
 * - `fleet`: `X-Fleet-Timestamp` (Unix seconds) and `X-Fleet-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>` (fleet spec);
 * - `standard`: Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>`),
 *   the key being the base64 after `whsec_` when the secret has that form, else the secret's UTF-8 bytes.
 */
export type Signing = 'fleet' | 'standard';

export const fleetSignature = (secret: string, timestamp: number, body: string) => `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

export const standardWebhookKey = (secret: string): Buffer => (secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8'));
export const standardSignature = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', standardWebhookKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;

export function signWebhook(signing: Signing, secret: string, body: string, now = Date.now()): Record<string, string> {
  const ts = Math.floor(now / 1000);
  if (signing === 'fleet') return { 'x-fleet-timestamp': String(ts), 'x-fleet-signature': fleetSignature(secret, ts, body) };
  const id = `msg_${randomUUID().replace(/-/g, '')}`;
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': standardSignature(secret, id, ts, body) };
}

/** The chat text: one line per event, at most 30, then "... and N more". */
export function chatText(title: string, events: NotificationEvent[]): string {
  const shown = events.slice(0, TEXT_EVENT_LIMIT).map((e) => `- ${e.text}${e.link ? ` (${e.link})` : ''}`);
  const more = events.length > TEXT_EVENT_LIMIT ? [`... and ${events.length - TEXT_EVENT_LIMIT} more`] : [];
  return [title, ...shown, ...more].join('\n');
}

const colorOf = (e: NotificationEvent) => (e.event === 'resolved' ? 'Good' : e.severity === 'critical' ? 'Attention' : e.severity === 'warning' ? 'Warning' : 'Default');

/** A team-chat incoming-webhook message carrying one Adaptive Card 1.4. */
export function adaptiveCardMessage(title: string, events: NotificationEvent[]) {
  const shown = events.slice(0, TEXT_EVENT_LIMIT);
  const body: unknown[] = [{ type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true }];
  for (const e of shown) {
    const items: unknown[] = [{ type: 'TextBlock', text: e.text, wrap: true, color: colorOf(e), weight: e.event === 'fired' ? 'Bolder' : 'Default' }];
    if (e.facts?.length) items.push({ type: 'FactSet', facts: e.facts.slice(0, 10).map((f) => ({ title: f.title, value: f.value })) });
    body.push({ type: 'Container', separator: true, items, ...(e.link ? { selectAction: { type: 'Action.OpenUrl', url: e.link, title: 'Open' } } : {}) });
  }
  if (events.length > shown.length) body.push({ type: 'TextBlock', text: `... and ${events.length - shown.length} more`, wrap: true, isSubtle: true });
  const links = shown.filter((e) => e.link);
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body,
    ...(links.length === 1 ? { actions: [{ type: 'Action.OpenUrl', title: 'Open', url: links[0].link }] } : {}),
  };
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] };
}

/** HTTP header values of the product's own words (tags): one line of printable ASCII. */
const headerValue = (s: string, max = 250) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, max);

/** UTF-8 bytes per encoded word: 45 bytes are 60 base64 characters, 72 with `=?UTF-8?B?` and `?=` (RFC 2047: at most 75). */
const ENCODED_WORD_BYTES = 45;

/**
 * A header value that may hold any text (ntfy's Title): printable ASCII as it is, anything else as
 * RFC 2047 encoded words (`=?UTF-8?B?…?=`, split between characters, never inside one), which
 * ntfy decodes. Control characters and line or paragraph separators become a space first: a header
 * is one line. At most `max` characters.
 */
export function encodedHeaderText(s: string, max = 250): string {
  const chars = Array.from(s.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ')).slice(0, max);
  const text = chars.join('');
  if (/^[\x20-\x7e]*$/.test(text) && !text.includes('=?')) return text;
  const words: string[] = [];
  let bytes: Buffer[] = [];
  let size = 0;
  const flush = () => {
    if (size) words.push(`=?UTF-8?B?${Buffer.concat(bytes).toString('base64')}?=`);
    bytes = [];
    size = 0;
  };
  for (const c of chars) {
    const b = Buffer.from(c, 'utf8');
    if (size + b.length > ENCODED_WORD_BYTES) flush();
    bytes.push(b);
    size += b.length;
  }
  flush();
  return words.join(' ');
}

export function ntfyHeaders(title: string, events: NotificationEvent[], token: string | undefined): Record<string, string> {
  const critical = events.some((e) => e.event !== 'resolved' && e.severity === 'critical');
  const warning = events.some((e) => e.event !== 'resolved' && e.severity === 'warning');
  const allResolved = events.length > 0 && events.every((e) => e.event === 'resolved');
  const tags = [critical ? 'rotating_light' : warning ? 'warning' : allResolved ? 'white_check_mark' : 'information_source', ...new Set(events.map((e) => e.event))];
  const links = events.filter((e) => e.link);
  return {
    'content-type': 'text/plain; charset=utf-8',
    title: encodedHeaderText(title),
    priority: critical ? 'urgent' : warning ? 'high' : 'default',
    tags: headerValue(tags.join(',')),
    ...(links.length === 1 ? { click: links[0].link! } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

export interface ChannelTarget {
  type: 'webhook' | 'ntfy' | 'teams' | 'chat';
  url: string;
  secret?: string;
  token?: string;
  topic?: string;
}

export function batchTitle(events: NotificationEvent[], app: string): string {
  const fired = events.filter((e) => e.event === 'fired').length;
  const resolved = events.filter((e) => e.event === 'resolved').length;
  if (events.length === 1) return `[${app}] ${events[0].text}`.slice(0, 200);
  const parts = [fired ? `${fired} fired` : '', resolved ? `${resolved} resolved` : '', events.length - fired - resolved ? `${events.length - fired - resolved} other` : ''].filter(Boolean);
  return `[${app}] ${parts.join(', ')}`;
}

/** The one request a channel receives for a batch. */
export function renderChannelRequest(t: ChannelTarget, events: NotificationEvent[], webhookPayload: unknown, signing: Signing, app = signing === 'fleet' ? 'fleet' : 'hdc'): { url: string; headers: Record<string, string>; body: string } {
  const title = batchTitle(events, app);
  switch (t.type) {
    case 'webhook': {
      const body = JSON.stringify(webhookPayload);
      return { url: t.url, headers: { 'content-type': 'application/json', ...(t.secret ? signWebhook(signing, t.secret, body) : {}) }, body };
    }
    case 'ntfy':
      return { url: `${t.url.replace(/\/+$/, '')}/${t.topic}`, headers: ntfyHeaders(title, events, t.token), body: chatText(title, events) };
    case 'teams':
      return { url: t.url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(adaptiveCardMessage(title, events)) };
    case 'chat':
      return { url: t.url, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: chatText(title, events) }) };
  }
}
