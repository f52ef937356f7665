import { useState } from 'react';
import { get } from '../api';
import { Link, Loaded, ouPath, useLoaded, when } from '../ui';
import { UserActionDialog, ACTION_LABEL } from './user-action';
import { UserState, type UserDetail } from './users';

// A user: the facts a helpdesk asks for, and only the actions the operator holds (directly or
// with approval).

export function UserPage({ id }: { id: string }) {
  const { data, error, reload } = useLoaded(id, (x) => get<UserDetail>(`/api/users/${encodeURIComponent(x)}`));
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
              <SignInFacts u={u} />
              <h2 id="user-groups">Groups</h2>
              {u.groups.length ? (
                <ul className="chips" aria-labelledby="user-groups" data-testid="user-groups">
                  {u.groups.map((g) => (
                    <li key={g.dn} title={ouPath(g.dn.replace(/^(?:[^,\\]|\\.)*,/, ''))}>
                      {g.name}
                    </li>
                  ))}
                </ul>
              ) : (
                <p className="muted">Member of its primary group only.</p>
              )}
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

/** The lockout and the bad passwords, as a helpdesk asks about a sign-in problem. */
function SignInFacts({ u }: { u: UserDetail }) {
  const s = u.signIn;
  return (
    <>
      <h2>Sign-in problems</h2>
      <dl className="facts" data-testid="user-sign-in">
        <dt>Locked out</dt>
        <dd>{u.lockedOut ? (s.lockedOutAt ? `since ${when(s.lockedOutAt)}` : 'yes') : 'no'}</dd>
        <dt>Bad passwords</dt>
        <dd>
          {s.badPasswordCount ?? '—'}
          {s.lastBadPassword ? `, the last at ${when(s.lastBadPassword)}` : ''}
        </dd>
        <dt>Domain controller</dt>
        <dd>
          {s.dc ?? '—'}
          {s.dc && <span className="hint"> (the DC that answered: each DC counts bad passwords for itself; the lockout reaches every DC at once)</span>}
        </dd>
      </dl>
    </>
  );
}
