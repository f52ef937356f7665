import { useEffect, useMemo, useState } from 'react';
import { download, get, qs, type Me } from '../api';
import { ago, Busy, ErrorState, ErrorText, Link, Loading, useAction, useRoute, when } from '../../../shared/ui';
import { usePolled } from '../poll';

// Proxies: the table of GET /api/nodes with the spec's deep links (?status, ?q, ?all, ?kind,
// ?sort, ?dir, ?group), count cards, the inventory CSV (proxy.tsx: one proxy, its lock).

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
        <Busy className="secondary" busy={csv.busy} onClick={() => void csv.run(() => download(`/api/nodes/inventory${key}`))}>
          Download inventory (CSV)
        </Busy>
      </div>
      <ErrorText error={csv.error} />
      {!data && (error ? <ErrorState error={error} /> : <Loading label="Reading the proxies from the cluster…" />)}
      {data && error ? <ErrorState error={error} title="The latest refresh failed: this is what was shown before" /> : null}
      {data && (
        <p className="muted" aria-live="polite" data-testid="list-status">
          {data.nodes.length === data.summary.total ? `${data.nodes.length} proxies` : `${data.nodes.length} of ${data.summary.total} proxies`}
          {data.clusterVersion ? ` · cluster version ${data.clusterVersion}` : ''} · read {when(data.readAt)}
          {loading ? ' · refreshing…' : ''}
        </p>
      )}
      {data && (
        <table className="proxies data" data-testid="proxies-table" aria-busy={loading || undefined}>
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
                  <th scope="rowgroup" colSpan={7} data-label="">
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
                <td colSpan={7} data-label="" className="empty-row">
                  <p className="state empty">No proxy matches.</p>
                </td>
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

export function StatusBadge({ n }: { n: Pick<NodeRow, 'status' | 'locked'> }) {
  return <span className={`badge st-${n.status}`}>{STATUS_WORDS[n.status]}</span>;
}

function ProxyRow({ n }: { n: NodeRow }) {
  return (
    <tr data-testid={`proxy-${n.id}`}>
      <td data-label="Host">
        <div className="v">
          <Link to={`/proxies/${encodeURIComponent(n.id)}`}>{n.hostname}</Link>
        </div>
      </td>
      <td data-label="Client">
        <div className="v">{n.clientCodes.length ? n.clientCodes.map((c) => (c === n.clientCode && n.clientName ? `${n.clientName} (${c})` : c)).join(', ') : <span className="muted">—</span>}</div>
      </td>
      <td data-label="Kind">
        <div className="v">{n.kind}</div>
      </td>
      <td data-label="Status">
        <div className="v">
          <StatusBadge n={n} />
        </div>
      </td>
      <td data-label="Version">
        <div className="v">
          {n.version ?? '—'} {n.updateNeeded && <span className="badge warn">Update needed</span>} {n.incompatible && <span className="badge bad">Incompatible</span>}
        </div>
      </td>
      <td className="when" data-label="Last seen" title={when(n.lastSeen)}>
        <div className="v">{ago(n.lastSeen)}</div>
      </td>
      <td data-label="Windows servers">
        <div className="v">{n.windowsServers}</div>
      </td>
    </tr>
  );
}
