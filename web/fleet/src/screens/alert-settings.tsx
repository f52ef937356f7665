import { useEffect, useState } from 'react';
import { del, get, post, put } from '../api';
import { usePolled } from '../poll';
import { AdminList, Busy, Empty, ErrorText, FormDialog, Loaded, useAction, when } from '../../../shared/ui';

// Alert settings (administrators): the failed sign-ins threshold and the notification channels,
// create, edit with write-only URL/secret/token, disable, delete (confirmed in the app's own
// dialog), and a test send whose result is shown (spec: Alerts, Notification channel).

interface Channel {
  id: string;
  name: string;
  type: 'webhook' | 'ntfy' | 'teams' | 'chat';
  enabled: boolean;
  topic?: string;
  urlOrigin: string;
  secretSet: boolean;
  tokenSet: boolean;
  lastDelivery?: { at: string; ok: boolean; status?: number; error?: string };
}
const TYPES: Record<Channel['type'], string> = { webhook: 'Generic webhook', ntfy: 'Topic push (ntfy)', teams: 'Team-chat card webhook', chat: 'Chat text webhook' };

export function AlertSettingsPage() {
  const { data, error, refresh } = usePolled(() => get<{ failedLoginsThreshold: number; channels: Channel[] }>('/api/alerts/settings'), []);
  const [threshold, setThreshold] = useState('');
  const [results, setResults] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const row = useAction();
  useEffect(() => {
    if (data && threshold === '') setThreshold(String(data.failedLoginsThreshold));
  }, [data, threshold]);
  const test = async (c: Channel) => {
    setResults((r) => ({ ...r, [c.id]: 'Sending…' }));
    const r = await row.run(() => post<{ ok: boolean; status?: number; error?: string }>(`/api/alerts/channels/${c.id}/test`));
    setResults((x) => ({ ...x, [c.id]: r ? (r.ok ? `Test delivered${r.status ? ` (HTTP ${r.status})` : ''}.` : `Test failed: ${r.error}${r.status ? ` (HTTP ${r.status})` : ''}.`) : 'Not sent.' }));
    void refresh();
  };
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Alert settings</h1>
      <form
        className="filters"
        aria-label="Threshold"
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          if (await save.run(() => put('/api/alerts/settings', { failedLoginsThreshold: Number(threshold) }))) setSaved(true);
        }}
      >
        <label>
          Failed sign-ins in 24 h before an alert
          <input name="failedLoginsThreshold" type="number" min={1} max={100000} required value={threshold} onChange={(e) => setThreshold(e.target.value)} />
        </label>
        <Busy type="submit" busy={save.busy}>
          Save threshold
        </Busy>
      </form>
      <ErrorText error={save.error} />
      <div aria-live="polite">{saved && <p className="ok">Saved.</p>}</div>
      <h2>Notification channels</h2>
      <p className="hint">Up to 20. The URL, secret and token are write-only: only the URL's origin is shown.</p>
      <ErrorText error={row.error} />
      <Loaded data={data} error={error} onRetry={refresh} loading="Loading the channels…">
        {(d) => (
          <AdminList
            caption="Notification channels"
            testId="channels"
            rows={d.channels}
            rowKey={(c) => c.id}
            rowTestId={(c) => `channel-${c.name}`}
            name={(c) => c.name}
            empty={<Empty>No channel: alerts show here only.</Empty>}
            columns={[
              { header: 'Name', cell: (c) => c.name },
              { header: 'Type', cell: (c) => TYPES[c.type] },
              {
                header: 'Destination',
                cell: (c) => (
                  <>
                    {c.urlOrigin}
                    {c.topic ? ` · topic ${c.topic}` : ''}
                    {c.secretSet ? ' · secret set' : ''}
                    {c.tokenSet ? ' · token set' : ''}
                  </>
                ),
              },
              { header: 'State', cell: (c) => (c.enabled ? <span className="badge good">enabled</span> : <span className="badge">disabled</span>) },
              { header: 'Last delivery', cell: (c) => (c.lastDelivery ? `${when(c.lastDelivery.at)}: ${c.lastDelivery.ok ? 'ok' : (c.lastDelivery.error ?? 'failed')}` : '—') },
            ]}
            addLabel="New channel"
            addDisabled={d.channels.length >= 20}
            editor={(c, done) => <ChannelDialog channel={c} onClose={done.close} onSaved={done.saved} />}
            more={(c) => (
              <>
                <button type="button" className="secondary" onClick={() => void test(c)}>
                  Send test<span className="sr-only"> to {c.name}</span>
                </button>
                <button type="button" className="secondary" onClick={async () => (await row.run(() => put(`/api/alerts/channels/${c.id}`, { enabled: !c.enabled }))) && refresh()}>
                  {c.enabled ? 'Disable' : 'Enable'}
                  <span className="sr-only"> {c.name}</span>
                </button>
              </>
            )}
            below={(c) =>
              results[c.id] && (
                <p role="status" data-testid={`test-result-${c.name}`}>
                  {results[c.id]}
                </p>
              )
            }
            remove={{
              ask: (c) => ({ title: `Delete the channel ${c.name}?`, body: <p>It is sent nothing more; its URL and secret are forgotten.</p>, confirm: 'Delete the channel', danger: true }),
              run: (c) => del(`/api/alerts/channels/${c.id}`),
            }}
            removeLabel="Delete"
            onChanged={() => void refresh()}
          />
        )}
      </Loaded>
    </section>
  );
}

function ChannelDialog({ channel, onClose, onSaved }: { channel?: Channel; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(channel?.name ?? '');
  const [type, setType] = useState<Channel['type']>(channel?.type ?? 'webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [topic, setTopic] = useState(channel?.topic ?? '');
  const [token, setToken] = useState('');
  const [enabled, setEnabled] = useState(channel?.enabled ?? true);
  const a = useAction();
  const typeChanged = !!channel && type !== channel.type;
  const submit = async () => {
    const body: Record<string, unknown> = { name: name.trim(), type, enabled };
    if (url.trim()) body.url = url.trim();
    if (type === 'webhook') {
      if (secret) body.secret = secret;
      if (removeSecret) body.removeSecret = true;
    }
    if (type === 'ntfy') {
      body.topic = topic.trim();
      if (token) body.token = token;
    }
    const r = await a.run(() => (channel ? put(`/api/alerts/channels/${channel.id}`, body) : post('/api/alerts/channels', body)));
    if (r !== undefined) onSaved();
  };
  return (
    <FormDialog title={channel ? `Edit channel ${channel.name}` : 'New notification channel'} onClose={onClose} onSubmit={submit} busy={a.busy} error={a.error} submit="Save channel">
      <label>
        Name
        <input name="name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Type
        <select name="type" value={type} onChange={(e) => setType(e.target.value as Channel['type'])}>
          {Object.entries(TYPES).map(([k, v]) => (
            <option key={k} value={k}>
              {v}
            </option>
          ))}
        </select>
      </label>
      <label>
        {type === 'ntfy' ? 'Server URL' : 'URL'} {channel && !typeChanged ? `(now ${channel.urlOrigin}…; empty keeps it)` : ''}
        <input name="url" type="url" autoComplete="off" required={!channel || typeChanged} value={url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      {type === 'webhook' && (
        <>
          <label>
            Signing secret (HMAC, 8 to 512 characters, optional) {channel?.secretSet ? '(set; empty keeps it)' : ''}
            <input name="secret" type="password" autoComplete="off" minLength={8} maxLength={512} value={secret} onChange={(e) => setSecret(e.target.value)} />
          </label>
          {channel?.secretSet && (
            <label className="check">
              <input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.target.checked)} />
              Remove the secret
            </label>
          )}
        </>
      )}
      {type === 'ntfy' && (
        <>
          <label>
            Topic
            <input name="topic" required pattern="[A-Za-z0-9_\-]{1,64}" value={topic} onChange={(e) => setTopic(e.target.value)} />
          </label>
          <label>
            Access token (optional) {channel?.tokenSet ? '(set; empty keeps it)' : ''}
            <input name="token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
          </label>
        </>
      )}
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        Enabled
      </label>
    </FormDialog>
  );
}
