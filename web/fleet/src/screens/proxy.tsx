import { useState } from 'react';
import { ApiFailure, get, operatesAll, post, type Me } from '../api';
import { ago, DataTable, Empty, FormDialog, Link, Loaded, useAction, when } from '../../../shared/ui';
import { usePolled } from '../poll';
import { NotFound } from '../app';
import { StatusBadge, type NodeRow } from './proxies';

// One proxy: its facts, the Windows servers it serves (Connect links), its locks, and the lock /
// unlock dialogs for the operators of every client it serves.

interface NodeDetail extends NodeRow {
  services: string[];
  desktops: Array<{ name: string; addr: string; domain?: string; nonAd?: boolean; connectUrl: string | null }>;
  locks: Array<{ name: string; message?: string; expires?: string | null; createdBy?: string; createdAt?: string }>;
}

/** Why the cluster cannot lock it, whoever asks (Auth/Proxy, unsupported kinds): the button says so. */
function lockRefusal(p: Pick<NodeDetail, 'services' | 'kind'>) {
  if (p.services.includes('Auth') || p.services.includes('Proxy')) return 'An Auth or Proxy node cannot be locked: locking it would cut the whole cluster.';
  if (!['gateway', 'ssh', 'app'].includes(p.kind) || p.services.includes('Kube')) return 'This kind of node cannot be locked.';
  return undefined;
}

export function ProxyPage({ me, id }: { me: Me; id: string }) {
  const { data, error, refresh } = usePolled(() => get<NodeDetail>(`/api/nodes/${encodeURIComponent(id)}`), [id]);
  const [dialog, setDialog] = useState<'lock' | 'unlock'>();
  const [notice, setNotice] = useState<string>();
  if (error instanceof ApiFailure && error.status === 404) return <NotFound />;
  if (!data)
    return (
      <section aria-labelledby="proxy-title">
        <p>
          <Link to="/proxies">← Proxies</Link>
        </p>
        <h1 id="proxy-title">Proxy</h1>
        <Loaded data={data} error={error} onRetry={refresh} loading="Reading the proxy from the cluster…">
          {() => null}
        </Loaded>
      </section>
    );
  const n = data;
  const mayOperate = operatesAll(me, n.clientCodes);
  const refusal = lockRefusal(n);
  return (
    <section aria-labelledby="proxy-title">
      <p>
        <Link to="/proxies">← Proxies</Link>
      </p>
      <h1 id="proxy-title">{n.hostname}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid="proxy-status">
          <StatusBadge n={n} />
        </dd>
        <dt>Client</dt>
        <dd>{n.clientCodes.length ? n.clientCodes.map((c) => <Link key={c} to={`/clients/${encodeURIComponent(c)}`}>{c === n.clientCode && n.clientName ? `${n.clientName} (${c})` : c}</Link>) : '—'}</dd>
        <dt>Kind</dt>
        <dd>
          {n.kind} ({n.services.join(', ') || 'no service'})
        </dd>
        <dt>Version</dt>
        <dd>
          {n.version ?? '—'} {n.updateNeeded && <span className="badge warn">Update needed</span>} {n.incompatible && <span className="badge bad">Incompatible</span>}
        </dd>
        <dt>Last seen</dt>
        <dd>
          {when(n.lastSeen)} <span className="muted">({ago(n.lastSeen)})</span>
        </dd>
        <dt>Node id</dt>
        <dd>
          <code>{n.id}</code>
        </dd>
      </dl>
      {notice && (
        <p role="status" className="ok" data-testid="lock-notice">
          {notice}
        </p>
      )}
      {mayOperate && (
        <div className="actions">
          {refusal ? (
            <p className="muted">{refusal}</p>
          ) : (
            <button type="button" className="danger" onClick={() => setDialog('lock')}>
              {n.locked ? 'Add a lock' : 'Lock proxy'}
            </button>
          )}
          {n.locked && (
            <button type="button" className="secondary" onClick={() => setDialog('unlock')}>
              Unlock proxy
            </button>
          )}
        </div>
      )}
      <h2>Windows servers ({n.desktops.length})</h2>
      <DataTable
        caption={`Windows servers of ${n.hostname}`}
        rows={n.desktops}
        rowKey={(d) => d.name}
        empty={<Empty>This proxy serves no Windows server you can see.</Empty>}
        columns={[
          { header: 'Name', cell: (d) => d.name },
          { header: 'Address', cell: (d) => d.addr },
          { header: 'Domain', cell: (d) => (d.nonAd ? 'not in a domain' : (d.domain ?? '—')) },
          {
            header: 'Connect',
            cell: (d) =>
              d.connectUrl ? (
                <a href={d.connectUrl} target="_blank" rel="noopener noreferrer">
                  Connect<span className="sr-only"> to {d.name}</span>
                </a>
              ) : (
                <span className="muted">—</span>
              ),
          },
        ]}
      />
      <h2>Active locks</h2>
      {n.locks.length ? (
        <ul className="plain" data-testid="locks">
          {n.locks.map((l) => (
            <li key={l.name}>
              {l.message || 'No message'} · {l.expires ? `until ${when(l.expires)}` : 'no expiry'}
              {l.createdBy ? ` · by ${l.createdBy}` : ''}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">None.</p>
      )}
      {dialog === 'lock' && (
        <LockDialog
          node={n}
          onClose={() => setDialog(undefined)}
          onDone={(pending) => {
            setDialog(undefined);
            setNotice(pending ? 'Locked. The cluster has not listed the lock yet: it shows within a minute.' : 'Locked.');
            void refresh();
          }}
        />
      )}
      {dialog === 'unlock' && (
        <UnlockDialog
          node={n}
          onClose={() => setDialog(undefined)}
          onDone={(removed) => {
            setDialog(undefined);
            setNotice(`Unlocked (${removed} lock${removed === 1 ? '' : 's'} removed).`);
            void refresh();
          }}
        />
      )}
    </section>
  );
}

const DURATIONS = [
  { v: '1', label: '1 hour' },
  { v: '4', label: '4 hours' },
  { v: '12', label: '12 hours' },
  { v: '24', label: '24 hours' },
  { v: '72', label: '3 days (72 hours)' },
  { v: '168', label: '7 days (168 hours)' },
  { v: 'none', label: 'No expiry' },
];

function LockDialog({ node, onClose, onDone }: { node: NodeDetail; onClose: () => void; onDone: (pending: boolean) => void }) {
  const [duration, setDuration] = useState('24');
  const [message, setMessage] = useState('');
  const a = useAction();
  const submit = async () => {
    const r = await a.run(() => post<{ locked: boolean; pending?: boolean }>(`/api/nodes/${encodeURIComponent(node.id)}/lock`, { duration: duration === 'none' ? 'none' : Number(duration), ...(message.trim() ? { message: message.trim() } : {}) }));
    if (r) onDone(!!r.pending);
  };
  return (
    <FormDialog title={`Lock ${node.hostname}`} onClose={onClose} onSubmit={submit} busy={a.busy} error={a.error} submit="Lock" danger>
      <p>
        A lock cuts every connection going through this proxy{node.clientCodes.length > 1 ? `, for every client it serves (${node.clientCodes.join(', ')})` : ''}: the {node.desktops.length} Windows server
        {node.desktops.length === 1 ? '' : 's'} it serves cannot be reached until it is unlocked or the lock expires.
      </p>
      <label>
        Duration
        <select name="duration" value={duration} onChange={(e) => setDuration(e.target.value)}>
          {DURATIONS.map((d) => (
            <option key={d.v} value={d.v}>
              {d.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Message (shown to the people cut off)
        <textarea name="message" maxLength={200} value={message} onChange={(e) => setMessage(e.target.value)} />
        <span className="hint">{200 - message.length} characters left</span>
      </label>
    </FormDialog>
  );
}

function UnlockDialog({ node, onClose, onDone }: { node: NodeDetail; onClose: () => void; onDone: (removed: number) => void }) {
  const a = useAction();
  const submit = async () => {
    const r = await a.run(() => post<{ removed: string[] }>(`/api/nodes/${encodeURIComponent(node.id)}/unlock`));
    if (r) onDone(r.removed?.length ?? 0);
  };
  return (
    <FormDialog title={`Unlock ${node.hostname}`} onClose={onClose} onSubmit={submit} busy={a.busy} error={a.error} submit="Unlock">
      <p>Every active lock on this proxy is removed ({node.locks.length}); connections through it work again.</p>
    </FormDialog>
  );
}
