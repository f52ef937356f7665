import { useState } from 'react';
import { del, get, put } from '../api';
import { AdminList, Empty, FormDialog, Loaded, useAction, useConfirm, useLoaded, useStepUp, when } from '../ui';

// Notification channels of approval requests: the URL, secret and token are write-only (only the
// URL's origin is ever shown); a delete is confirmed in the app's own dialog.

interface ChannelView {
  id: string;
  name: string;
  type: 'webhook' | 'ntfy' | 'teams' | 'chat';
  enabled: boolean;
  topic?: string;
  urlOrigin: string;
  secretSet: boolean;
  tokenSet: boolean;
  events?: string[];
  lastDelivery?: { at?: string; outcome?: string; status?: number };
}
const CHANNEL_TYPES = [
  ['webhook', 'Generic webhook (signed)'],
  ['ntfy', 'Topic push'],
  ['teams', 'Team-chat card'],
  ['chat', 'Chat text'],
] as const;
const EVENTS = [
  ['approval_requested', 'A request waits for approval (to the approvers)'],
  ['approval_decided', 'A request was decided (to the requester)'],
] as const;
const typeWords = (t: string) => CHANNEL_TYPES.find(([k]) => k === t)?.[1] ?? t;

export function Channels() {
  const { data, error, reload } = useLoaded('channels', () => get<{ channels: ChannelView[] }>('/api/admin/notifications/channels').then((r) => r.channels));
  return (
    <>
      <p className="hint">Channel URLs, secrets and tokens are never shown again after they are saved (only the URL's origin).</p>
      <Loaded data={data} error={error} onRetry={reload} loading="Loading the channels…">
        {(list) => (
          <AdminList
            caption="Notification channels"
            rows={list}
            rowKey={(c) => c.id}
            rowTestId={(c) => `channel-${c.id}`}
            name={(c) => c.name}
            empty={<Empty>No channel: approvers see new requests in their inbox only.</Empty>}
            columns={[
              { header: 'Channel', cell: (c) => <strong>{c.name}</strong> },
              { header: 'Kind', cell: (c) => typeWords(c.type) },
              { header: 'Destination', cell: (c) => `${c.urlOrigin}${c.topic ? `, topic ${c.topic}` : ''}` },
              { header: 'Sent when', cell: (c) => c.events?.join(', ') || 'no event' },
              { header: 'State', cell: (c) => (c.enabled ? <span className="badge good">enabled</span> : <span className="badge">disabled</span>) },
              { header: 'Last delivery', cell: (c) => (c.lastDelivery?.at ? `${when(c.lastDelivery.at)}: ${c.lastDelivery.outcome ?? ''}` : '—') },
            ]}
            addLabel="New channel"
            editor={(c, done) => <ChannelEditor channel={c} onClose={done.saved} />}
            editLabel={(c) => `Edit ${c.name}`}
            onChanged={reload}
            buttons="link"
          />
        )}
      </Loaded>
    </>
  );
}

/** Create, replace or delete a notification channel; an empty URL, secret or token keeps the stored one. */
function ChannelEditor({ channel, onClose }: { channel?: ChannelView; onClose: () => void }) {
  const [id, setId] = useState(channel?.id ?? '');
  const [name, setName] = useState(channel?.name ?? '');
  const [type, setType] = useState<ChannelView['type']>(channel?.type ?? 'webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [topic, setTopic] = useState(channel?.topic ?? '');
  const [token, setToken] = useState('');
  const [events, setEvents] = useState<string[]>(channel?.events ?? ['approval_requested']);
  const [enabled, setEnabled] = useState(channel?.enabled ?? true);
  const { withStepUp } = useStepUp();
  const confirm = useConfirm();
  const a = useAction();
  const path = `/api/admin/notifications/channels/${encodeURIComponent(id.trim())}`;
  const keeps = (set: boolean) => (channel && set ? ' (empty keeps the saved one)' : '');
  const submit = async () => {
    const body = {
      name: name.trim(),
      type,
      events,
      enabled,
      ...(url.trim() ? { url: url.trim() } : {}),
      ...(type === 'webhook' && secret ? { secret } : {}),
      ...(type === 'ntfy' ? { topic: topic.trim(), ...(token ? { token } : {}) } : {}),
    };
    const r = await a.run(() => withStepUp(() => put(path, body)));
    if (r) onClose();
  };
  const remove = async () => {
    if (!(await confirm({ title: `Delete the channel ${channel!.name}?`, body: <p>It is sent nothing more. Its URL and secret are forgotten.</p>, confirm: 'Delete the channel', danger: true }))) return;
    const r = await a.run(() => withStepUp(() => del(path).then(() => true)));
    if (r) onClose();
  };
  return (
    <FormDialog
      title={channel ? `Edit channel ${channel.name}` : 'New notification channel'}
      onClose={onClose}
      onSubmit={submit}
      busy={a.busy}
      error={a.error}
      submit="Save channel"
      submitDisabled={events.length === 0}
      extra={
        channel && (
          <button type="button" className="secondary" disabled={a.busy} onClick={() => void remove()}>
            Delete channel
          </button>
        )
      }
      wide
    >
      {!channel && (
        <label>
          Id (lower-case letters, digits, hyphens)
          <input name="channel-id" required pattern="[a-z0-9][a-z0-9\-]{0,63}" value={id} onChange={(e) => setId(e.target.value)} />
        </label>
      )}
      <label>
        Name
        <input name="channel-name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Kind
        <select name="channel-type" value={type} onChange={(e) => setType(e.target.value as ChannelView['type'])}>
          {CHANNEL_TYPES.map(([t, label]) => (
            <option key={t} value={t}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label>
        URL (https){channel && type === channel.type ? ` (now ${channel.urlOrigin}…; empty keeps it)` : ''}
        <input name="channel-url" type="url" autoComplete="off" required={!channel || type !== channel.type} maxLength={2048} value={url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      {type === 'webhook' && (
        <label>
          Signing secret, at least 32 characters{keeps(!!channel?.secretSet)}
          <input name="channel-secret" type="password" autoComplete="new-password" minLength={32} maxLength={512} value={secret} onChange={(e) => setSecret(e.target.value)} />
        </label>
      )}
      {type === 'ntfy' && (
        <>
          <label>
            Topic
            <input name="channel-topic" required pattern="[A-Za-z0-9_\-]{1,64}" value={topic} onChange={(e) => setTopic(e.target.value)} />
          </label>
          <label>
            Access token{keeps(!!channel?.tokenSet)}
            <input name="channel-token" type="password" autoComplete="new-password" maxLength={1024} value={token} onChange={(e) => setToken(e.target.value)} />
          </label>
        </>
      )}
      <fieldset>
        <legend>Sent when</legend>
        {EVENTS.map(([ev, label]) => (
          <label key={ev} className="check">
            <input type="checkbox" name={ev} checked={events.includes(ev)} onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))} />
            {label}
          </label>
        ))}
      </fieldset>
      <label className="check">
        <input type="checkbox" name="channel-enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        Enabled
      </label>
    </FormDialog>
  );
}
