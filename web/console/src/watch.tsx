import { useEffect, useState } from 'react';
import { get } from './api';
import { ErrorText, Link, useLoaded } from './ui';

// Watch lists (users.read): users of what the operator manages that need an eye kept on them,
// at most Directory:MaxResults each; each list downloads as CSV (audited users.watch.export).
interface WatchUser {
  id: string;
  username: string;
  displayName: string | null;
  enabled: boolean;
  lockedOut: boolean;
  lastSignIn: string | null;
  protected: boolean;
}
interface WatchList {
  id: string;
  title: string;
  items: WatchUser[];
  truncated: boolean;
}

export function WatchListsPage({ list }: { list?: string }) {
  const [lists, setLists] = useState<Array<{ id: string; title: string }>>();
  const [error, setError] = useState<unknown>();
  const current = list ?? lists?.[0]?.id;
  useEffect(() => {
    get<{ lists: Array<{ id: string; title: string }> }>('/api/watch-lists').then((r) => setLists(r.lists), setError);
  }, []);
  const { data, error: listError } = useLoaded(current, (id) => get<WatchList>(`/api/watch-lists/${encodeURIComponent(id)}`));
  return (
    <section aria-labelledby="watch-title">
      <h1 id="watch-title">Watch lists</h1>
      <nav aria-label="Watch lists" className="tabs">
        {lists?.map((l) => (
          <Link key={l.id} to={`/watch-lists/${l.id}`} className={l.id === current ? 'active' : undefined}>
            {l.title}
          </Link>
        ))}
      </nav>
      <ErrorText error={error ?? listError} />
      {data && (
        <>
          <p>
            <a href={`/api/exports/watch-lists/${encodeURIComponent(data.id)}`} download data-testid="watch-csv">
              Download “{data.title}” as CSV
            </a>{' '}
            <span className="hint">(the download is audited)</span>
          </p>
          <table data-testid="watch-list">
            <caption className="sr-only">{data.title}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Login</th>
                <th scope="col">State</th>
                <th scope="col">Last sign-in</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((u) => (
                <tr key={u.id}>
                  <td>
                    <Link to={`/users/${u.id}`}>{u.displayName ?? u.username}</Link>
                    {u.protected && <span className="badge vip">Protected</span>}
                  </td>
                  <td>{u.username}</td>
                  <td>{[!u.enabled && 'disabled', u.lockedOut && 'locked out'].filter(Boolean).join(', ') || 'active'}</td>
                  <td>{u.lastSignIn ? new Date(u.lastSignIn).toLocaleDateString() : 'never'}</td>
                </tr>
              ))}
              {data.items.length === 0 && (
                <tr>
                  <td colSpan={4}>Nobody on this list in what you manage.</td>
                </tr>
              )}
            </tbody>
          </table>
          {data.truncated && <p className="notice">Only the first {data.items.length} are shown.</p>}
        </>
      )}
    </section>
  );
}
