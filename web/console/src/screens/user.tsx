import { useState } from 'react';
import { get } from '../api';
import { Link, Loaded, ouPath, useLoaded, when } from '../ui';
import { UserActionDialog, ACTION_LABEL } from './user-action';
import { UserState, type User } from './users';

// A user: the facts a helpdesk asks for, and only the actions the operator holds (directly or
// with approval).

export function UserPage({ id }: { id: string }) {
  const { data, error, reload } = useLoaded(id, (x) => get<User>(`/api/users/${encodeURIComponent(x)}`));
  const [action, setAction] = useState<string>();
  return (
    <section aria-labelledby="user-title">
      <p>
        <Link to="/users">← Users</Link>
      </p>
      <Loaded data={data} error={error} onRetry={reload}>
        {(u) => {
          const offered = Object.entries(u.actions ?? {}).filter(
            ([a, h]) => h !== 'no' && ACTION_LABEL[a] && !(a === 'users.enable' && u.enabled) && !(a === 'users.disable' && !u.enabled) && !(a === 'users.unlock' && !u.lockedOut),
          );
          return (
            <>
              <h1 id="user-title">{u.displayName ?? u.username}</h1>
              <dl className="facts">
                <dt>Login</dt>
                <dd>{u.username}</dd>
                <dt>UPN</dt>
                <dd>{u.upn ?? '—'}</dd>
                <dt>OU</dt>
                <dd>{ouPath(u.dn?.replace(/^(?:[^,\\]|\\.)*,/, ''))}</dd>
                <dt>E-mail</dt>
                <dd>{u.mail ?? '—'}</dd>
                <dt>Telephone</dt>
                <dd>{u.telephoneNumber ?? '—'}</dd>
                <dt>Description</dt>
                <dd>{u.description ?? '—'}</dd>
                <dt>State</dt>
                <dd data-testid="user-state">
                  <UserState u={u} />
                </dd>
                <dt>Class</dt>
                <dd>{u.protected ? 'Protected (VIP)' : 'Standard'}</dd>
                <dt>Last sign-in</dt>
                <dd>{when(u.lastSignIn)}</dd>
                <dt>Password last set</dt>
                <dd>{when(u.passwordLastSet)}</dd>
              </dl>
              <div className="actions">
                {offered.map(([a, h]) => (
                  <button key={a} type="button" className={h === 'approval' ? 'secondary' : undefined} onClick={() => setAction(a)}>
                    {ACTION_LABEL[a]}
                    {h === 'approval' ? ' (request approval)' : ''}
                  </button>
                ))}
              </div>
              {action && (
                <UserActionDialog
                  user={u}
                  action={action}
                  hint={u.actions![action]}
                  onDone={reload}
                  onClose={() => {
                    setAction(undefined);
                    reload();
                  }}
                />
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
