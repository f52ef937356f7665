import { get } from '../api';
import { DataTable, Empty, Link, Loaded, useLoaded } from '../ui';
import { UserState } from './users';

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
  const lists = useLoaded('lists', () => get<{ lists: Array<{ id: string; title: string }> }>('/api/watch-lists').then((r) => r.lists));
  const current = list ?? lists.data?.[0]?.id;
  const one = useLoaded(current, (id) => get<WatchList>(`/api/watch-lists/${encodeURIComponent(id)}`));
  return (
    <section aria-labelledby="watch-title">
      <h1 id="watch-title">Watch lists</h1>
      <Loaded data={lists.data} error={lists.error} onRetry={lists.reload}>
        {(all) => (
          <nav aria-label="Watch lists" className="tabs">
            {all.map((l) => (
              <Link key={l.id} to={`/watch-lists/${l.id}`} className={l.id === current ? 'active' : undefined}>
                {l.title}
              </Link>
            ))}
          </nav>
        )}
      </Loaded>
      {current && (
        <Loaded data={one.data} error={one.error} onRetry={one.reload} loading="Reading the list…">
          {(data) => (
            <>
              <p>
                <a href={`/api/exports/watch-lists/${encodeURIComponent(data.id)}`} download data-testid="watch-csv">
                  Download “{data.title}” as CSV
                </a>{' '}
                <span className="hint">(the download is audited)</span>
              </p>
              <DataTable
                caption={data.title}
                testId="watch-list"
                rows={data.items}
                rowKey={(u) => u.id}
                empty={<Empty>Nobody on this list in what you manage.</Empty>}
                columns={[
                  {
                    header: 'Name',
                    cell: (u) => (
                      <>
                        <Link to={`/users/${u.id}`}>{u.displayName ?? u.username}</Link>
                        {u.protected && <span className="badge vip">Protected</span>}
                      </>
                    ),
                  },
                  { header: 'Login', cell: (u) => u.username },
                  { header: 'State', cell: (u) => <UserState u={u} /> },
                  { header: 'Last sign-in', cell: (u) => (u.lastSignIn ? new Date(u.lastSignIn).toLocaleDateString() : 'never') },
                ]}
              />
              {data.truncated && <p className="notice">Only the first {data.items.length} are shown.</p>}
            </>
          )}
        </Loaded>
      )}
    </section>
  );
}
