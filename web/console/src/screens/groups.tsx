import { useState } from 'react';
import { useSearch } from '../search';
import { DataTable, Empty, ErrorState, Link, Loading } from '../ui';
import type { Hint } from './users';

// Groups: type-ahead search over the groups the operator manages.

export interface Group {
  id: string;
  name: string;
  description?: string | null;
  protected?: boolean;
  actions?: Record<string, Hint>;
  [k: string]: unknown;
}

export function GroupsPage() {
  const [q, setQ] = useState('');
  const s = useSearch<Group>('/api/groups', q);
  return (
    <section aria-labelledby="groups-title">
      <h1 id="groups-title">Groups</h1>
      <label className="search">
        Search groups
        <input type="search" name="group-search" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      {s.searching ? <Loading label="Searching groups…" /> : s.error ? <ErrorState error={s.error} onRetry={s.retry} /> : null}
      {s.items && !s.searching && (
        <DataTable
          caption="Groups found"
          rows={s.items}
          rowKey={(g) => g.id}
          empty={<Empty>No group found in what you manage{q.trim() ? ` for “${q.trim()}”` : ''}.</Empty>}
          columns={[
            { header: 'Group', cell: (g) => <Link to={`/groups/${g.id}`}>{g.name}</Link> },
            { header: 'Description', cell: (g) => g.description ?? <span className="muted">—</span> },
          ]}
        />
      )}
    </section>
  );
}
