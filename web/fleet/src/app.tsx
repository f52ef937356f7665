import { useCallback, useEffect, useState } from 'react';
import { ApiFailure, get, localToken, onSignedOut, setLocalToken, type Me } from './api';
import { AppShell, ConfirmProvider, ErrorState, Link, Loading, RouterProvider, useRoute } from '../../shared/ui';
import { SignIn } from './signin';
import { ProxiesPage } from './screens/proxies';
import { ProxyPage } from './screens/proxy';
import { ClientsPage } from './screens/clients';
import { ClientPage } from './screens/client';
import { ConsolePage } from './screens/console';
import { AlertsPage } from './screens/alerts';
import { AlertSettingsPage } from './screens/alert-settings';
import { TechniciansPage } from './screens/technicians';
import { AuditPage } from './screens/audit';
import { AccessPage } from './screens/access';
import { UpgradesPage } from './screens/upgrades';

// The fleet dashboard: boot (who is signed in, through the platform or the local sign-in), the
// frame with the scope in the bar, the sections, the page of the path.

type Boot = { state: 'loading' } | { state: 'signin'; refused?: unknown } | { state: 'in'; me: Me } | { state: 'error'; error: unknown };

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
  const loadMe = useCallback(async () => {
    try {
      setBoot({ state: 'in', me: await get<Me>('/api/auth/me') });
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) {
        if (localToken()) setLocalToken(undefined); // an expired local token: sign in again
        return setBoot({ state: 'signin' });
      }
      // the access platform's JWT arrived but names no role of the fleet (403 signin_refused)
      if (e instanceof ApiFailure && e.status === 403) return setBoot({ state: 'signin', refused: e });
      setBoot({ state: 'error', error: e });
    }
  }, []);
  useEffect(() => {
    onSignedOut(() => {
      setLocalToken(undefined);
      setBoot({ state: 'signin' });
    });
    void loadMe();
  }, [loadMe]);
  useEffect(() => {
    document.title = 'Fleet dashboard';
  }, []);

  if (boot.state === 'loading')
    return (
      <main className="signin" id="main">
        <Loading label="Opening the fleet dashboard…" />
      </main>
    );
  if (boot.state === 'error')
    return (
      <main className="signin" id="main">
        <div className="card">
          <h1>Fleet dashboard</h1>
          <ErrorState
            error={boot.error}
            title="The dashboard cannot be opened right now"
            onRetry={() => {
              setBoot({ state: 'loading' });
              void loadMe();
            }}
          />
        </div>
      </main>
    );
  if (boot.state === 'signin') return <SignIn refused={boot.refused} onSignedIn={loadMe} />;
  const me = boot.me;
  return (
    <AppShell
      brand="Fleet dashboard"
      bar={
        <>
          <span className="stepup" data-testid="scope">
            {scopeText(me)}
          </span>
          <span className="who" data-testid="who">
            {me.username} · {me.admin ? 'Administrator' : 'Technician'}
            {me.method === 'local' ? ' (local sign-in)' : ''}
          </span>
          {me.method === 'local' && (
            <button
              type="button"
              className="ghost"
              onClick={() => {
                setLocalToken(undefined);
                setBoot({ state: 'signin' });
              }}
            >
              Sign out
            </button>
          )}
        </>
      }
      nav={<Nav me={me} />}
    >
      <Page me={me} />
    </AppShell>
  );
}

/** 'Clients: all' for administrators, else each client with its level (spec: server-side enforcement 7). */
export const scopeText = (me: Me) => (me.scope.all ? 'Clients: all' : `Clients: ${me.scope.clients.map((c) => `${c.code} (${c.level})`).join(', ') || 'none'}`);

function Nav({ me }: { me: Me }) {
  return (
    <ul>
      <li>
        <Link to="/proxies">Proxies</Link>
      </li>
      <li>
        <Link to="/clients" alsoUnder={['/consoles']}>
          Clients
        </Link>
      </li>
      <li>
        <Link to="/upgrades">Upgrades</Link>
      </li>
      <li>
        <Link to="/alerts" exact>
          Alerts
        </Link>
      </li>
      {me.admin && (
        <li>
          <Link to="/alerts/settings">Alert settings</Link>
        </li>
      )}
      {me.admin && (
        <li>
          <Link to="/technicians">Technicians</Link>
        </li>
      )}
      <li>
        <Link to="/audit">Audit</Link>
      </li>
      <li>
        <Link to="/access">Gateways and updates</Link>
      </li>
    </ul>
  );
}

function Page({ me }: { me: Me }) {
  const { path } = useRoute();
  const [p, search = ''] = path.split('?');
  const seg = p.split('/').filter(Boolean).map(decodeURIComponent);
  const q = new URLSearchParams(search);
  if (seg.length === 0) return <Home />;
  switch (seg[0]) {
    case 'proxies':
      if (seg.length === 1) return <ProxiesPage me={me} query={q} />;
      if (seg.length === 2) return <ProxyPage me={me} id={seg[1]} />;
      break;
    case 'clients':
      if (seg.length === 1) return <ClientsPage me={me} />;
      if (seg.length === 2) return <ClientPage me={me} code={seg[1]} />;
      break;
    case 'consoles':
      if (seg.length === 2) return <ConsolePage me={me} id={seg[1]} />;
      break;
    case 'upgrades':
      if (seg.length === 1) return <UpgradesPage me={me} />;
      break;
    case 'alerts':
      if (seg.length === 1) return <AlertsPage me={me} />;
      if (seg.length === 2 && seg[1] === 'settings' && me.admin) return <AlertSettingsPage />;
      break;
    case 'technicians':
      if (seg.length === 1 && me.admin) return <TechniciansPage />;
      break;
    case 'audit':
      if (seg.length === 1) return <AuditPage me={me} />;
      break;
    case 'access':
      if (seg.length === 1) return <AccessPage />;
      break;
  }
  return <NotFound />;
}

function Home() {
  const { go } = useRoute();
  useEffect(() => go('/proxies', true), [go]);
  return null;
}

/** One page for an unknown path, an unknown id and an id outside the caller's scope (spec: 404 like unknown). */
export function NotFound() {
  return (
    <section aria-labelledby="nf-title" data-testid="not-found">
      <h1 id="nf-title">Not found</h1>
      <p>There is nothing here, or it is outside the clients you can see.</p>
      <p>
        <Link to="/proxies">Back to the proxies</Link>
      </p>
    </section>
  );
}
