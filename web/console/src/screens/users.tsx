import { useState } from 'react';
import { qs } from '../api';
import { useSearch } from '../search';
import { DataTable, Empty, ErrorState, Link, Loading } from '../ui';

// Users: type-ahead search over what the operator manages, the state of each account as a badge,
// the CSV of the search.

export type Hint = 'direct' | 'approval' | 'no';
export interface User {
  id: string;
  username: string;
  upn: string | null;
  displayName: string | null;
  givenName: string | null;
  sn: string | null;
  mail: string | null;
  telephoneNumber: string | null;
  description: string | null;
  enabled: boolean;
  lockedOut: boolean;
  lastSignIn: string | null;
  passwordLastSet: string | null;
  protected: boolean;
  dn?: string;
  actions?: Record<string, Hint>;
}
/** The detail answer: the user with its sign-in facts and its groups. */
export interface UserDetail extends User {
  dn: string;
  signIn: { lockedOutAt: string | null; badPasswordCount: number | null; lastBadPassword: string | null; dc: string | null };
  groups: Array<{ name: string; dn: string }>;
}

export function UserState({ u }: { u: Pick<User, 'enabled' | 'lockedOut'> }) {
  if (!u.enabled && u.lockedOut)
    return (
      <>
        <span className="badge bad">Disabled</span> <span className="badge warn">Locked out</span>
      </>
    );
  if (!u.enabled) return <span className="badge bad">Disabled</span>;
  if (u.lockedOut) return <span className="badge warn">Locked out</span>;
  return <span className="badge good">Active</span>;
}

export function UsersPage() {
  const [q, setQ] = useState('');
  const s = useSearch<User>('/api/users', q);
  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <label className="search">
        Search users
        <input type="search" name="user-search" placeholder="Name, login or e-mail" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      <p>
        <a href={`/api/exports/users${qs({ q: q.trim() || undefined })}`} download data-testid="users-csv">
          Download these users as CSV
        </a>{' '}
        <span className="hint">(every user of the search, not only this page; audited)</span>
      </p>
      {s.searching ? <Loading label="Searching users…" /> : s.error ? <ErrorState error={s.error} onRetry={s.retry} /> : null}
      {s.items && !s.searching && (
        <DataTable
          caption="Users found"
          rows={s.items}
          rowKey={(u) => u.id}
          empty={<Empty>No user found in what you manage{q.trim() ? ` for “${q.trim()}”` : ''}.</Empty>}
          columns={[
            { header: 'Name', cell: (u) => <Link to={`/users/${u.id}`}>{u.displayName ?? u.username}</Link> },
            { header: 'Login', cell: (u) => u.username },
            { header: 'State', cell: (u) => <UserState u={u} /> },
            { header: 'Class', cell: (u) => (u.protected ? <span className="badge vip">Protected</span> : <span className="badge">Standard</span>) },
          ]}
        />
      )}
      {s.more.truncated && !s.searching && (
        <button type="button" className="secondary" onClick={s.loadMore}>
          Show more
        </button>
      )}
    </section>
  );
}
