import { useCallback, useEffect, useState } from 'react';
import { ApiFailure, applyAccent, get, onSessionExpired, post, setCsrfToken, type Me } from './api';
import { ComputerPage, ComputersPage } from './computers';
import { UserPage, UsersPage, GroupPage, GroupsPage } from './users';
import { ApprovalPage, ApprovalsPage } from './approvals';
import { AuditPage } from './audit';
import { AdminPage } from './admin';
import { WatchListsPage } from './watch';
import { SetupPage } from './setup';
import { SignIn } from './signin';
import { ErrorText, Link, RouterProvider, StepUpProvider, useRoute, useStepUp } from './ui';

type Boot = { state: 'loading' } | { state: 'setup' } | { state: 'signin' } | { state: 'in'; me: Me } | { state: 'error'; error: unknown };

export function App() {
  return (
    <RouterProvider>
      <Shell />
    </RouterProvider>
  );
}

function Shell() {
  const [boot, setBoot] = useState<Boot>({ state: 'loading' });
  const [expired, setExpired] = useState(false);
  const loadMe = useCallback(async () => {
    try {
      const me = await get<Me>('/api/auth/me');
      setBoot({ state: 'in', me });
      setExpired(false);
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) {
        setBoot((b) => (b.state === 'in' ? b : { state: 'signin' }));
        return;
      }
      if (e instanceof ApiFailure && e.code === 'not_configured') {
        setBoot({ state: 'setup' });
        return;
      }
      setBoot({ state: 'error', error: e });
    }
  }, []);
  useEffect(() => {
    onSessionExpired(() => setExpired(true));
    (async () => {
      try {
        const s = await get<{ configured: boolean }>('/api/setup');
        if (!s.configured) return setBoot({ state: 'setup' });
      } catch {
        /* the answer of /api/auth/me decides */
      }
      await loadMe();
    })();
  }, [loadMe]);

  if (boot.state === 'loading') return <p aria-busy="true">Loading…</p>;
  if (boot.state === 'error') return <ErrorText error={boot.error} />;
  if (boot.state === 'setup') return <SetupPage onDone={() => setBoot({ state: 'signin' })} />;
  if (boot.state === 'signin') return <SignInPage onSignedIn={loadMe} />;
  const me = boot.me;
  return (
    <StepUpProvider me={me} onConfirmed={() => setBoot({ state: 'in', me: { ...me, stepUpAt: new Date().toISOString() } })}>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <TopBar
        me={me}
        onSignOut={async () => {
          await post('/api/auth/logout').catch(() => undefined);
          setCsrfToken(undefined);
          setBoot({ state: 'signin' });
        }}
      />
      <div className="layout">
        <Nav me={me} />
        <main id="main" tabIndex={-1} inert={expired ? true : undefined}>
          <Page me={me} />
        </main>
      </div>
      {expired && (
        <div className="overlay" role="dialog" aria-modal="true" aria-label="Sign in again">
          <SignIn
            expired
            onSignedIn={async () => {
              await loadMe();
              setExpired(false);
            }}
          />
        </div>
      )}
    </StepUpProvider>
  );
}

/** The sign-in page: the instance's title and accent only when its branding says to show them there. */
function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [title, setTitle] = useState<string>();
  useEffect(() => {
    get<{ title?: string; accentColour?: string }>('/api/branding').then(
      (b) => {
        setTitle(b.title);
        applyAccent(b.accentColour);
        document.title = b.title ? `${b.title} · Sign in` : 'Sign in · Helpdesk console';
      },
      () => undefined,
    );
  }, []);
  return <SignIn onSignedIn={onSignedIn} instance={title} />;
}

const can = (me: Me, p: string) => me.permissions.includes(p);

function TopBar({ me, onSignOut }: { me: Me; onSignOut: () => void }) {
  const { confirmNow } = useStepUp();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  useEffect(() => {
    document.title = me.instance ? `${me.instance} · Helpdesk console` : 'Helpdesk console';
  }, [me.instance]);
  useEffect(() => applyAccent(me.accentColour), [me.accentColour]);
  const left = me.stepUpAt ? Math.floor((Date.parse(me.stepUpAt) + me.stepUpWindowSeconds * 1000 - now) / 1000) : 0;
  return (
    <header className="topbar">
      <span className="brand" data-testid="instance-title">
        {me.instance ?? 'Helpdesk console'}
      </span>
      <span className="spacer" />
      {me.stepUpMode !== 'none' || me.permissions.some((p) => p.startsWith('computers.laps')) ? (
        left > 0 ? (
          <span className="stepup" data-testid="stepup-left" title="Actions that need a confirmation go through until then">
            Confirmed for {Math.floor(left / 60)}:{String(left % 60).padStart(2, '0')}
          </span>
        ) : (
          <button type="button" className="ghost" onClick={() => void confirmNow()}>
            Confirm it is me
          </button>
        )
      ) : null}
      <span className="who" data-testid="operator">
        {me.displayName ? `${me.displayName} (${me.username})` : me.username}
        {me.superAdministrator ? ' · Super administrator' : ''}
      </span>
      <button type="button" className="ghost" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

function Nav({ me }: { me: Me }) {
  const [count, setCount] = useState<number>();
  const { path } = useRoute();
  useEffect(() => {
    get<{ toApprove: number }>('/api/approvals/count').then((c) => setCount(c.toApprove), () => undefined);
  }, [path]);
  return (
    <nav aria-label="Sections">
      <ul>
        {can(me, 'computers.read') && (
          <li>
            <Link to="/computers">Computers</Link>
          </li>
        )}
        {can(me, 'users.read') && (
          <li>
            <Link to="/users">Users</Link>
          </li>
        )}
        {can(me, 'groups.read') && (
          <li>
            <Link to="/groups">Groups</Link>
          </li>
        )}
        {can(me, 'users.read') && (
          <li>
            <Link to="/watch-lists">Watch lists</Link>
          </li>
        )}
        <li>
          <Link to="/approvals">
            Approvals{' '}
            {!!count && (
              <span className="count" data-testid="approvals-count" aria-label={`${count} awaiting you`}>
                {count}
              </span>
            )}
          </Link>
        </li>
        {can(me, 'audit.read') && (
          <li>
            <Link to="/audit">Audit</Link>
          </li>
        )}
        {can(me, 'settings.manage') && (
          <li>
            <Link to="/admin">Administration</Link>
          </li>
        )}
      </ul>
    </nav>
  );
}

function Page({ me }: { me: Me }) {
  const { path } = useRoute();
  const [p] = path.split('?');
  const seg = p.split('/').filter(Boolean).map(decodeURIComponent);
  switch (seg[0]) {
    case 'computers':
      return seg[1] ? <ComputerPage id={seg[1]} /> : <ComputersPage />;
    case 'users':
      return seg[1] ? <UserPage id={seg[1]} /> : <UsersPage />;
    case 'groups':
      return seg[1] ? <GroupPage id={seg[1]} /> : <GroupsPage />;
    case 'approvals':
      return seg[1] ? <ApprovalPage id={seg[1]} me={me} /> : <ApprovalsPage />;
    case 'watch-lists':
      return <WatchListsPage list={seg[1]} />;
    case 'audit':
      return <AuditPage />;
    case 'admin':
      return <AdminPage me={me} tab={seg[1]} />;
    default:
      return <Home me={me} />;
  }
}

function Home({ me }: { me: Me }) {
  const first = can(me, 'computers.read') ? '/computers' : can(me, 'users.read') ? '/users' : can(me, 'audit.read') ? '/audit' : '/approvals';
  const { go } = useRoute();
  useEffect(() => go(first, true), [first, go]);
  return null;
}
