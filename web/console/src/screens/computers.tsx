import { useState } from 'react';
import { useSearch } from '../search';
import { ago, DataTable, Empty, ErrorState, Link, Loading, ouPath, when } from '../ui';

// Computers: type-ahead search over what the operator manages; the LAPS expiry and kind per row
// (as the LAPS UI's report shows them). A new search clears the old rows: "Searching…" until it answers.

export interface Computer {
  id: string;
  name: string;
  dnsName: string | null;
  os: string | null;
  lastSignIn: string | null;
  enabled: boolean;
  lapsExpiry: string | null;
  lapsKind?: 'windows' | 'legacy' | null;
  protected: boolean;
  ou: string;
  actions?: { revealLaps: boolean; expireLaps: boolean; revealBitlocker?: boolean };
}

export const lapsKindText = (k?: Computer['lapsKind']) => (k === 'windows' ? 'Windows LAPS' : k === 'legacy' ? 'Legacy LAPS' : 'No LAPS');

export function LapsExpiry({ at }: { at: string | null }) {
  if (!at) return <span className="muted">—</span>;
  const past = Date.parse(at) <= Date.now();
  return (
    <span title={when(at)}>
      {when(at)} <span className={past ? 'badge warn' : 'muted'}>{past ? 'expired' : ago(at)}</span>
    </span>
  );
}

export function ComputersPage() {
  const [q, setQ] = useState('');
  const s = useSearch<Computer>('/api/computers', q);
  return (
    <section aria-labelledby="computers-title">
      <h1 id="computers-title">Computers</h1>
      <label className="search">
        Search computers
        <input type="search" name="computer-search" placeholder="Name or DNS name" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      {s.searching ? (
        <Loading label="Searching computers…" />
      ) : s.error ? (
        <ErrorState error={s.error} onRetry={s.retry} />
      ) : (
        <p className="muted" role="status" data-testid="search-status">
          {s.items ? `${s.items.length}${s.more.truncated ? '+' : ''} computer${s.items.length === 1 ? '' : 's'}` : ''}
        </p>
      )}
      {s.items && !s.searching && (
        <DataTable
          caption="Computers found"
          rows={s.items}
          rowKey={(c) => c.id}
          empty={<Empty>No computer found in what you manage{q.trim() ? ` for “${q.trim()}”` : ''}.</Empty>}
          columns={[
            { header: 'Name', cell: (c) => <Link to={`/computers/${c.id}`}>{c.name}</Link> },
            { header: 'Class', cell: (c) => (c.protected ? <span className="badge vip">Protected</span> : <span className="badge">Standard</span>) },
            { header: 'OU', cell: (c) => ouPath(c.ou) },
            { header: 'LAPS', cell: (c) => lapsKindText(c.lapsKind) },
            { header: 'Password expires', cell: (c) => <LapsExpiry at={c.lapsExpiry} /> },
            { header: 'OS', cell: (c) => c.os ?? '—' },
            { header: 'Enabled', cell: (c) => (c.enabled ? 'yes' : 'no') },
          ]}
        />
      )}
      {s.more.truncated && !s.searching && (
        <button type="button" className="secondary" onClick={s.loadMore}>
          Show more
        </button>
      )}
      {s.more.incomplete && <p className="hint">The directory holds more than the console enumerates: refine the search.</p>}
    </section>
  );
}
