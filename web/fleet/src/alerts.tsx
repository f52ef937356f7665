import { useEffect, useState } from 'react';
import { del, get, post, put, type Me } from './api';
import { ErrorText, Link, Modal, useAction, when } from '../../shared/ui';
import { usePolled } from './poll';

// Alerts (active and history, every caller's own clients) and, for administrators, the alert
// settings and the notification channels: create, edit with write-only URL/secret/token, disable,
// delete, and a test send whose result is shown (spec: Alerts, Notification channel).

interface Alert {
  key: string;
  kind: string;
  severity: 'warning' | 'critical';
  clientCode?: string;
  params?: Record<string, unknown>;
  subject: string;
  link?: string;
  firedAt: string;
  resolvedAt?: string;
}
interface Delivery {
  channelId: string;
  name: string;
  type: string;
  ok: boolean;
  status?: number;
  error?: string;
}
interface HistoryEntry {
  id: string;
  at: string;
  event: 'fired' | 'resolved' | 'test';
  alert: Alert | null;
  channelId?: string;
  deliveries?: Delivery[];
}
interface AlertsView {
  active: Alert[];
  history: HistoryEntry[];
  lastEvaluationAt: string | null;
}

const deliveryText = (d: Delivery) => `${d.name}: ${d.ok ? `delivered${d.status ? ` (${d.status})` : ''}` : `failed (${d.error ?? 'error'}${d.status ? ` ${d.status}` : ''})`}`;

function AlertLink({ a }: { a: Alert }) {
  return a.link && a.link !== '/' ? <Link to={a.link}>{a.subject}</Link> : <>{a.subject}</>;
}

/**
 * The client an alert concerns. Without a client code: a proxy serving several clients (or none)
 * names those it serves; only the fleet plane's own alerts (identity, access proxy certificate)
 * are "fleet plane".
 */
function AlertClient({ a }: { a: Alert }) {
  if (a.clientCode) return <Link to={`/clients/${a.clientCode}`}>{a.clientCode}</Link>;
  const served = Array.isArray(a.params?.clientCodes) ? (a.params.clientCodes as unknown[]).filter((c): c is string => typeof c === 'string') : [];
  if (served.length) return <>{served.join(', ')}</>;
  if (a.kind.startsWith('identity') || a.key === 'access:cert') return <>fleet plane</>;
  return <span className="muted">no client</span>;
}

export function AlertsPage({ me }: { me: Me }) {
  const { data, error } = usePolled(() => get<AlertsView>('/api/alerts'), []);
  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <ErrorText error={error} />
      {data && (
        <>
          <p className="muted">Last evaluation: {when(data.lastEvaluationAt)}</p>
          <h2>Active ({data.active.length})</h2>
          <table data-testid="alerts-active">
            <thead>
              <tr>
                <th scope="col">Severity</th>
                <th scope="col">Alert</th>
                <th scope="col">Client</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {data.active.map((a) => (
                <tr key={a.key}>
                  <td>
                    <span className={`badge ${a.severity === 'critical' ? 'bad' : 'warn'}`}>{a.severity}</span>
                  </td>
                  <td>
                    <AlertLink a={a} /> <span className="muted">({a.kind})</span>
                  </td>
                  <td>
                    <AlertClient a={a} />
                  </td>
                  <td className="when">{when(a.firedAt)}</td>
                </tr>
              ))}
              {data.active.length === 0 && (
                <tr>
                  <td colSpan={4}>No active alert.</td>
                </tr>
              )}
            </tbody>
          </table>
          <h2>History</h2>
          <table data-testid="alerts-history">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Alert</th>
                {me.admin && <th scope="col">Deliveries</th>}
              </tr>
            </thead>
            <tbody>
              {data.history.map((h) => (
                <tr key={h.id}>
                  <td className="when">{when(h.at)}</td>
                  <td>{h.event}</td>
                  <td>{h.alert ? <AlertLink a={h.alert} /> : 'Test notification'}</td>
                  {me.admin && <td>{h.deliveries?.map(deliveryText).join('; ') || '—'}</td>}
                </tr>
              ))}
              {data.history.length === 0 && (
                <tr>
                  <td colSpan={me.admin ? 4 : 3}>Nothing yet.</td>
                </tr>
              )}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

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
  const [editing, setEditing] = useState<Channel | 'new'>();
  const [results, setResults] = useState<Record<string, string>>({});
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
      <ErrorText error={error} />
      <form
        className="filters"
        onSubmit={async (e) => {
          e.preventDefault();
          await save.run(() => put('/api/alerts/settings', { failedLoginsThreshold: Number(threshold) }));
        }}
      >
        <label>
          Failed sign-ins in 24 h before an alert
          <input name="failedLoginsThreshold" type="number" min={1} max={100000} required value={threshold} onChange={(e) => setThreshold(e.target.value)} />
        </label>
        <button type="submit" disabled={save.busy}>
          Save threshold
        </button>
      </form>
      <ErrorText error={save.error} />
      <h2>Notification channels</h2>
      <p className="hint">Up to 20. The URL, secret and token are write-only: only the URL's origin is shown.</p>
      <div className="actions">
        <button type="button" onClick={() => setEditing('new')} disabled={(data?.channels.length ?? 0) >= 20}>
          New channel
        </button>
      </div>
      <ErrorText error={row.error} />
      {data && (
        <table data-testid="channels">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Destination</th>
              <th scope="col">State</th>
              <th scope="col">Last delivery</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data.channels.map((c) => (
              <tr key={c.id} data-testid={`channel-${c.name}`}>
                <td>{c.name}</td>
                <td>{TYPES[c.type]}</td>
                <td>
                  {c.urlOrigin}
                  {c.topic ? ` · topic ${c.topic}` : ''}
                  {c.secretSet ? ' · secret set' : ''}
                  {c.tokenSet ? ' · token set' : ''}
                </td>
                <td>{c.enabled ? 'enabled' : 'disabled'}</td>
                <td>{c.lastDelivery ? `${when(c.lastDelivery.at)}: ${c.lastDelivery.ok ? 'ok' : (c.lastDelivery.error ?? 'failed')}` : '—'}</td>
                <td>
                  <div className="actions tight">
                    <button type="button" className="secondary" onClick={() => void test(c)} aria-label={`Send a test to ${c.name}`}>
                      Send test
                    </button>
                    <button type="button" className="secondary" onClick={() => setEditing(c)} aria-label={`Edit ${c.name}`}>
                      Edit
                    </button>
                    <button type="button" className="secondary" onClick={async () => (await row.run(() => put(`/api/alerts/channels/${c.id}`, { enabled: !c.enabled }))) && refresh()}>
                      {c.enabled ? 'Disable' : 'Enable'}
                      <span className="sr-only"> {c.name}</span>
                    </button>
                    <button type="button" className="secondary" onClick={async () => confirm(`Delete the channel ${c.name}?`) && (await row.run(() => del(`/api/alerts/channels/${c.id}`))) !== undefined && refresh()}>
                      Delete<span className="sr-only"> {c.name}</span>
                    </button>
                  </div>
                  {results[c.id] && (
                    <p role="status" data-testid={`test-result-${c.name}`}>
                      {results[c.id]}
                    </p>
                  )}
                </td>
              </tr>
            ))}
            {data.channels.length === 0 && (
              <tr>
                <td colSpan={6}>No channel.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      {editing && <ChannelDialog channel={editing === 'new' ? undefined : editing} onClose={() => setEditing(undefined)} onSaved={() => (setEditing(undefined), void refresh())} />}
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
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
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
    <Modal title={channel ? `Edit channel ${channel.name}` : 'New notification channel'} onClose={onClose}>
      <form onSubmit={submit}>
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
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Save channel
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
