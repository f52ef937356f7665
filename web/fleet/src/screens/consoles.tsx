import { get } from '../api';
import { ago, DataTable, Empty, Link, when } from '../../../shared/ui';

// A client's consoles as lists show them: each with its last poll from GET /api/consoles (the
// fleet's stored poll state, issue 29: one answer, no request per console), its version and drift.

export interface Contact {
  name: string;
  email?: string;
  phone?: string;
  role?: string;
}
export interface Client {
  code: string;
  name: string;
  notes: string;
  contacts: Contact[];
  updatedAt: string;
}
export type DriftState = 'up_to_date' | 'behind' | 'unknown' | 'not_compared';
export interface PollSummary {
  polled: boolean;
  polledAt?: string;
  ok?: boolean;
  error?: string;
  httpStatus?: number;
  consecutiveFailures?: number;
  lastSuccessAt?: string | null;
  version?: string | null;
  health?: string | null;
}
export interface Console {
  id: string;
  clientCode: string;
  url: string;
  ca: string | null;
  tokenSet: boolean;
  updatedAt: string;
  version?: string | null;
  drift?: 'up_to_date' | 'behind' | 'unknown' | null;
  poll?: PollSummary;
}

export const loadConsoles = (clientCode?: string) => get<{ consoles: Console[] }>(`/api/consoles${clientCode ? `?clientCode=${encodeURIComponent(clientCode)}` : ''}`).then((r) => r.consoles);
export const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/** Up to date / Behind / Unknown (spec: Console drift) as the API states it; null: no target set. */
export function Drift({ drift }: { drift?: DriftState | null }) {
  if (drift === null || drift === 'not_compared') return <span className="muted">Not compared (no target version)</span>;
  if (drift === 'up_to_date') return <span className="badge good">Up to date</span>;
  if (drift === 'behind') return <span className="badge warn">Behind</span>;
  return <span className="badge">Unknown</span>;
}

export function PollCell({ p }: { p?: PollSummary }) {
  if (!p || !p.polled) return <span className="muted">Not polled yet</span>;
  return (
    <span title={when(p.polledAt)}>
      {ago(p.polledAt)}:{' '}
      {p.ok ? (
        <span className="ok">answered</span>
      ) : (
        <span className="error">
          failed ({p.error}
          {p.httpStatus ? ` ${p.httpStatus}` : ''}
          {p.consecutiveFailures && p.consecutiveFailures > 1 ? `, ${p.consecutiveFailures} in a row` : ''})
        </span>
      )}
    </span>
  );
}

export function Health({ p }: { p?: PollSummary }) {
  if (!p?.health) return <span className="muted">—</span>;
  return <span className={`badge ${p.health === 'healthy' ? 'good' : p.health === 'down' ? 'bad' : 'warn'}`}>{p.health}</span>;
}

export function ConsolesTable({ consoles, showClient = true }: { consoles: Console[]; showClient?: boolean }) {
  return (
    <DataTable
      caption="Consoles"
      testId="consoles-table"
      rows={consoles}
      rowKey={(c) => c.id}
      rowTestId={(c) => `console-${c.id}`}
      empty={<Empty>No console registered.</Empty>}
      columns={[
        { header: 'Console', cell: (c) => <Link to={`/consoles/${c.id}`}>{hostOf(c.url)}</Link> },
        showClient && { header: 'Client', cell: (c) => c.clientCode },
        { header: 'Version', cell: (c) => c.poll?.version ?? c.version ?? '—' },
        { header: 'Drift', cell: (c) => <Drift drift={c.drift} /> },
        { header: 'Health', cell: (c) => <Health p={c.poll} /> },
        { header: 'Last poll', cell: (c) => <PollCell p={c.poll} /> },
      ]}
    />
  );
}
