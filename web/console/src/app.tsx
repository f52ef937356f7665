import { useCallback, useEffect, useState } from 'react';
import { ApiFailure, applyAccent, get, onSessionExpired, post, setCsrfToken, type Me } from './api';
import { ApprovalCountProvider, useApprovalCount } from './count';
import { ComputersPage } from './screens/computers';
import { ComputerPage } from './screens/computer';
import { UsersPage } from './screens/users';
import { UserPage } from './screens/user';
import { GroupsPage } from './screens/groups';
import { GroupPage } from './screens/group';
import { ApprovalsPage } from './screens/approvals';
import { TemporaryMembershipsPage } from './screens/temporary-memberships';
import { ApprovalPage } from './screens/approval';
import { AuditPage } from './screens/audit';
import { WatchListsPage } from './screens/watch';
import { AdminPage } from './admin';
import { AdminNotices } from './notices';
import { SetupPage } from './setup';
import { SignIn } from './signin';
import { SecurityPage } from './security';
import { AppShell, ConfirmProvider, ErrorState, Link, Loading, RouterProvider, StepUpProvider, useRoute, useStepUp } from './ui';

// The console's web app: boot (setup, sign-in, the operator), the frame, the sections the
// operator's rights open, and the page of the path.

type Boot = { state: 'loading' } | { state: 'setup' } | { state: 'signin' } | { state: 'in'; me: Me } | { state: 'error'; error: unknown };
export const PRODUCT = 'Helpdesk console';

export function App() {
  return (
    <RouterProvider>
      <ConfirmProvider>
        <Shell />
      </ConfirmProvider>
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
  const start = useCallback(async () => {
    setBoot({ state: 'loading' });
    // both at once: the first screen waits for one round trip, not two
    const [setup] = await Promise.all([get<{ configured: boolean }>('/api/setup').catch(() => undefined), loadMe()]);
    if (setup && !setup.configured) setBoot({ state: 'setup' });
  }, [loadMe]);
  useEffect(() => {
    onSessionExpired(() => setExpired(true));
    void start();
  }, [start]);

  if (boot.state === 'loading')
    return (
      <main className="signin" id="main">
        <Loading label={`Opening the ${PRODUCT.toLowerCase()}…`} />
      </main>
    );
  if (boot.state === 'error')
    return (
      <main className="signin" id="main">
        <div className="card">
          <h1>{PRODUCT}</h1>
          <ErrorState error={boot.error} title="The console cannot be opened right now" onRetry={() => void start()} />
        </div>
      </main>
    );
  if (boot.state === 'setup') return <SetupPage onDone={() => setBoot({ state: 'signin' })} />;
  if (boot.state === 'signin') return <SignInPage onSignedIn={loadMe} />;
  const me = boot.me;
  return (
    <StepUpProvider me={me} onConfirmed={() => setBoot({ state: 'in', me: { ...me, stepUpAt: new Date().toISOString() } })}>
      <ApprovalCountProvider>
        <AppShell
          brand={me.instance ?? PRODUCT}
          inert={expired}
          bar={
            <Bar
              me={me}
              onSignOut={async () => {
                await post('/api/auth/logout').catch(() => undefined);
                setCsrfToken(undefined);
                setBoot({ state: 'signin' });
              }}
            />
          }
          nav={<Nav me={me} />}
        >
          <AdminNotices me={me} />
          <Page me={me} />
        </AppShell>
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
      </ApprovalCountProvider>
    </StepUpProvider>
  );
}

/** The sign-in page: the product's name, the instance's title and accent when its branding says to show them there. */
function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [title, setTitle] = useState<string>();
  const { path } = useRoute();
  useEffect(() => {
    document.title = `Sign in · ${PRODUCT}`;
    get<{ title?: string; accentColour?: string }>('/api/branding').then(
      (b) => {
        setTitle(b.title);
        applyAccent(b.accentColour);
        if (b.title) document.title = `${b.title} · Sign in`;
      },
      () => undefined,
    );
  }, []);
  const why = path.startsWith('/approvals/') ? 'Sign in to review the request you were sent.' : undefined;
  return <SignIn onSignedIn={onSignedIn} instance={title} why={why} />;
}

const can = (me: Me, p: string) => me.permissions.includes(p);

function Bar({ me, onSignOut }: { me: Me; onSignOut: () => void }) {
  const { confirmNow } = useStepUp();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  useEffect(() => {
    document.title = me.instance ? `${me.instance} · ${PRODUCT}` : PRODUCT;
  }, [me.instance]);
  useEffect(() => applyAccent(me.accentColour), [me.accentColour]);
  const left = me.stepUpAt ? Math.floor((Date.parse(me.stepUpAt) + me.stepUpWindowSeconds * 1000 - now) / 1000) : 0;
  return (
    <>
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
      {me.provider === 'ad' && <Link to="/security">My security</Link>}
      <button type="button" className="ghost" onClick={onSignOut}>
        Sign out
      </button>
    </>
  );
}

function Nav({ me }: { me: Me }) {
  const { count } = useApprovalCount();
  const n = count?.toApprove;
  return (
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
          Approvals
          {!!n && (
            <>
              <span className="count" data-testid="approvals-count" aria-hidden="true">
                {n}
              </span>
              <span className="sr-only"> ({n} awaiting you)</span>
            </>
          )}
        </Link>
      </li>
      <li>
        <Link to="/temporary-memberships">Temporary memberships</Link>
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
    case 'temporary-memberships':
      return <TemporaryMembershipsPage me={me} />;
    case 'watch-lists':
      return <WatchListsPage list={seg[1]} />;
    case 'audit':
      return <AuditPage />;
    case 'admin':
      return <AdminPage me={me} tab={seg[1]} />;
    case 'security':
      return <SecurityPage />;
    default:
      return <Home me={me} />;
  }
}

/** The first page: the inbox when requests wait for the operator, else the first section the rights open. */
function Home({ me }: { me: Me }) {
  const first = can(me, 'computers.read') ? '/computers' : can(me, 'users.read') ? '/users' : can(me, 'audit.read') ? '/audit' : '/approvals';
  const { go } = useRoute();
  useEffect(() => {
    let gone = false;
    const t = setTimeout(() => !gone && go(first, true), 1500); // the count is slow: do not wait for it
    get<{ toApprove: number }>('/api/approvals/count').then(
      (c) => {
        if (gone) return;
        gone = true;
        clearTimeout(t);
        go(c.toApprove > 0 ? '/approvals' : first, true);
      },
      () => undefined,
    );
    return () => {
      gone = true;
      clearTimeout(t);
    };
  }, [first, go]);
  return <Loading />;
}
