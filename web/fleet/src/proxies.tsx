import { useEffect, useMemo, useState } from 'react';
import { ApiFailure, download, get, operatesAll, post, qs, type Me } from './api';
import { ErrorText, Link, Modal, useAction, useRoute, when } from '../../shared/ui';
import { usePolled } from './poll';
import { NotFound } from './app';

// Proxies: the table of GET /api/nodes with the spec's deep links (?status, ?q, ?all, ?kind,
// ?sort, ?dir, ?group), count cards, the inventory CSV; a proxy's page with its desktops (Connect
// links), its locks, and the lock / unlock dialogs for operators of every client it serves.

export interface NodeRow {
  id: string;
  hostname: string;
  kind: 'gateway' | 'proxy' | 'auth' | 'app' | 'ssh' | 'other';
  clientCode: string | null;
  clientName: string | null;
  clientCodes: string[];
  shared: boolean;
  version: string | null;
  lastSeen: string | null;
  status: 'online' | 'slow' | 'unreachable' | 'locked';
  networkStatus: string;
  locked: boolean;
  updateNeeded: boolean;
  incompatible: boolean;
  windowsServers: number;
}
interface Summary {
  total: number;
  online: number;
  slow: number;
  unreachable: number;
  locked: number;
  outdated: number;
}
interface NodeList {
  nodes: NodeRow[];
  summary: Summary;
  groups?: Array<{ clientCode: string | null; clientName: string | null; count: number; nodeIds: string[] }>;
  clusterVersion: string | null;
  readAt: string;
}

const STATUS_WORDS: Record<NodeRow['status'], string> = { online: 'Online', slow: 'Slow to respond', unreachable: 'Unreachable', locked: 'Locked' };
const FILTERS = [
  { status: '', label: 'All proxies', count: (s: Summary) => s.total },
  { status: 'online', label: 'Online', count: (s: Summary) => s.online },
  { status: 'down', label: 'Unreachable', count: (s: Summary) => s.unreachable },
  { status: 'locked', label: 'Locked', count: (s: Summary) => s.locked },
  { status: 'outdated', label: 'Update needed', count: (s: Summary) => s.outdated },
] as const;
const KINDS = ['gateway', 'proxy', 'auth', 'app', 'ssh', 'other'] as const;
const SORTS = { client: 'Client', status: 'Status', version: 'Version', desktops: 'Windows servers' } as const;
/** Rows drawn at once: the rest behind "Show more" (5 000 proxies stay responsive). */
const PAGE = 200;

/** The query the API and the URL share; only the spec's parameters, only known values. */
function viewOf(q: URLSearchParams) {
  const pick = (k: string, allowed: readonly string[]) => (allowed.includes(q.get(k) ?? '') ? q.get(k)! : '');
  const all = q.get('all') === '1' || q.get('all') === 'true';
  return {
    status: pick('status', ['online', 'down', 'locked', 'outdated']),
    q: (q.get('q') ?? '').slice(0, 200),
    all: all ? '1' : '',
    kind: all ? pick('kind', KINDS) : '',
    sort: pick('sort', Object.keys(SORTS)),
    dir: pick('dir', ['asc', 'desc']),
    group: pick('group', ['client']),
  };
}
type View = ReturnType<typeof viewOf>;

export function ProxiesPage({ me, query }: { me: Me; query: URLSearchParams }) {
  const { go } = useRoute();
  const view = viewOf(query);
  const key = qs(view);
  const { data, error, loading } = usePolled(() => get<NodeList>(`/api/nodes${key}`), [key]);
  const [text, setText] = useState(view.q);
  const [shown, setShown] = useState(PAGE);
  const csv = useAction();
  useEffect(() => setText(view.q), [view.q]);
  useEffect(() => setShown(PAGE), [key]);
  const set = (patch: Partial<View>, replace = false) => go(`/proxies${qs({ ...view, ...patch })}`, replace);
  // the search box writes ?q= after a pause in typing (one history entry per search, not per key)
  useEffect(() => {
    if (text.trim() === view.q) return;
    const t = setTimeout(() => set({ q: text.trim() }, true), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text]);

  const byId = useMemo(() => new Map((data?.nodes ?? []).map((n) => [n.id, n])), [data]);
  const rows = data?.nodes.slice(0, shown) ?? [];
  const groups = data?.groups && view.group === 'client' ? grouped(data, byId, shown) : undefined;

  return (
    <section aria-labelledby="proxies-title">
      <h1 id="proxies-title">Proxies</h1>
      <div className="cards" role="group" aria-label="Filter by status">
        {FILTERS.map((f) => (
          <button key={f.label} type="button" className="card-filter" aria-pressed={view.status === f.status} data-testid={`count-${f.status || 'all'}`} onClick={() => set({ status: f.status })}>
            <span className="n">{data ? f.count(data.summary) : '…'}</span>
            <span>{f.label}</span>
          </button>
        ))}
      </div>
      <div className="filters">
        <label className="search">
          Search
          <input type="search" name="q" placeholder="Client name, code or host name" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <label>
          Sort by
          <select name="sort" value={view.sort || 'client'} onChange={(e) => set({ sort: e.target.value === 'client' && !view.dir ? '' : e.target.value })}>
            {Object.entries(SORTS).map(([k, v]) => (
              <option key={k} value={k}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select name="dir" value={view.dir || 'asc'} onChange={(e) => set({ dir: e.target.value === 'asc' ? '' : e.target.value })}>
            <option value="asc">Ascending</option>
            <option value="desc">Descending</option>
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={view.group === 'client'} onChange={(e) => set({ group: e.target.checked ? 'client' : '' })} />
          Group by client
        </label>
        {me.admin && (
          <label className="check">
            <input type="checkbox" checked={view.all === '1'} onChange={(e) => set({ all: e.target.checked ? '1' : '', kind: '' })} />
            Show all nodes
          </label>
        )}
        {view.all === '1' && (
          <label>
            Kind
            <select name="kind" value={view.kind} onChange={(e) => set({ kind: e.target.value })}>
              <option value="">Any kind</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="button" className="secondary" disabled={csv.busy} onClick={() => csv.run(() => download(`/api/nodes/inventory${key}`))}>
          Download inventory (CSV)
        </button>
      </div>
      <ErrorText error={csv.error} />
      <ErrorText error={error} />
      {data && (
        <p className="muted" aria-live="polite" data-testid="list-status">
          {data.nodes.length === data.summary.total ? `${data.nodes.length} proxies` : `${data.nodes.length} of ${data.summary.total} proxies`}
          {data.clusterVersion ? ` · cluster version ${data.clusterVersion}` : ''} · read {when(data.readAt)}
          {loading ? ' · refreshing…' : ''}
        </p>
      )}
      {data && (
        <table className="proxies" data-testid="proxies-table">
          <caption className="sr-only">Proxies</caption>
          <thead>
            <tr>
              <th scope="col">Host</th>
              <th scope="col">Client</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Version</th>
              <th scope="col">Last seen</th>
              <th scope="col">Windows servers</th>
            </tr>
          </thead>
          {groups ? (
            groups.map((g) => (
              <tbody key={g.clientCode ?? ''} data-testid={`group-${g.clientCode ?? 'none'}`}>
                <tr className="group">
                  <th scope="rowgroup" colSpan={7}>
                    {g.clientName ?? g.clientCode ?? 'No client'} ({g.count})
                  </th>
                </tr>
                {g.rows.map((n) => (
                  <ProxyRow key={n.id} n={n} />
                ))}
              </tbody>
            ))
          ) : (
            <tbody>
              {rows.map((n) => (
                <ProxyRow key={n.id} n={n} />
              ))}
            </tbody>
          )}
          {data.nodes.length === 0 && (
            <tbody>
              <tr>
                <td colSpan={7}>No proxy matches.</td>
              </tr>
            </tbody>
          )}
        </table>
      )}
      {data && data.nodes.length > shown && (
        <button type="button" className="secondary" onClick={() => setShown(shown + PAGE * 5)}>
          Show more ({data.nodes.length - shown} not shown)
        </button>
      )}
    </section>
  );
}

function grouped(data: NodeList, byId: Map<string, NodeRow>, limit: number) {
  let left = limit;
  const out: Array<{ clientCode: string | null; clientName: string | null; count: number; rows: NodeRow[] }> = [];
  for (const g of data.groups ?? []) {
    if (left <= 0) break;
    const rows = g.nodeIds.slice(0, left).map((id) => byId.get(id)!).filter(Boolean);
    left -= rows.length;
    out.push({ clientCode: g.clientCode, clientName: g.clientName, count: g.count, rows });
  }
  return out;
}

function StatusBadge({ n }: { n: Pick<NodeRow, 'status' | 'locked'> }) {
  return <span className={`badge st-${n.status}`}>{STATUS_WORDS[n.status]}</span>;
}

function ProxyRow({ n }: { n: NodeRow }) {
  return (
    <tr data-testid={`proxy-${n.id}`}>
      <td>
        <Link to={`/proxies/${encodeURIComponent(n.id)}`}>{n.hostname}</Link>
      </td>
      <td>{n.clientCodes.length ? n.clientCodes.map((c) => (c === n.clientCode && n.clientName ? `${n.clientName} (${c})` : c)).join(', ') : <span className="muted">—</span>}</td>
      <td>{n.kind}</td>
      <td>
        <StatusBadge n={n} />
      </td>
      <td>
        {n.version ?? '—'} {n.updateNeeded && <span className="badge warn">Update needed</span>} {n.incompatible && <span className="badge bad">Incompatible</span>}
      </td>
      <td className="when">{when(n.lastSeen)}</td>
      <td>{n.windowsServers}</td>
    </tr>
  );
}

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
  if (!data) return error ? <ErrorText error={error} /> : <p aria-busy="true">Loading…</p>;
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
        <dd>{when(n.lastSeen)}</dd>
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
            <button type="button" onClick={() => setDialog('lock')}>
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
      {n.desktops.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Address</th>
              <th scope="col">Domain</th>
              <th scope="col">Connect</th>
            </tr>
          </thead>
          <tbody>
            {n.desktops.map((d) => (
              <tr key={d.name}>
                <td>{d.name}</td>
                <td>{d.addr}</td>
                <td>{d.nonAd ? 'not in a domain' : (d.domain ?? '—')}</td>
                <td>
                  {d.connectUrl ? (
                    <a href={d.connectUrl} target="_blank" rel="noopener noreferrer">
                      Connect<span className="sr-only"> to {d.name}</span>
                    </a>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">This proxy serves no Windows server you can see.</p>
      )}
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
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => post<{ locked: boolean; pending?: boolean }>(`/api/nodes/${encodeURIComponent(node.id)}/lock`, { duration: duration === 'none' ? 'none' : Number(duration), ...(message.trim() ? { message: message.trim() } : {}) }));
    if (r) onDone(!!r.pending);
  };
  return (
    <Modal title={`Lock ${node.hostname}`} onClose={onClose}>
      <form onSubmit={submit}>
        <p>A lock cuts every connection going through this proxy{node.clientCodes.length > 1 ? `, for every client it serves (${node.clientCodes.join(', ')})` : ''}.</p>
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
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Lock
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function UnlockDialog({ node, onClose, onDone }: { node: NodeDetail; onClose: () => void; onDone: (removed: number) => void }) {
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => post<{ removed: string[] }>(`/api/nodes/${encodeURIComponent(node.id)}/unlock`));
    if (r) onDone(r.removed?.length ?? 0);
  };
  return (
    <Modal title={`Unlock ${node.hostname}`} onClose={onClose}>
      <form onSubmit={submit}>
        <p>Every active lock on this proxy is removed ({node.locks.length}); connections through it work again.</p>
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Unlock
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
