import { useEffect, useState } from 'react';
import { get, post, qs } from './api';
import { ErrorText, Link, Modal, SecretView, ouPath, useAction, useStepUp, when } from './ui';

interface Computer {
  id: string;
  name: string;
  dnsName: string | null;
  os: string | null;
  lastSignIn: string | null;
  enabled: boolean;
  lapsExpiry: string | null;
  protected: boolean;
  ou: string;
  actions?: { revealLaps: boolean; expireLaps: boolean };
}

/** Type-ahead search, after a short pause in typing; each answer replaces the list (no cache). */
export function useSearch<T>(path: string, q: string, extra: Record<string, string | undefined> = {}) {
  const [items, setItems] = useState<T[]>();
  const [more, setMore] = useState<{ truncated: boolean; incomplete: boolean; cursor?: string }>({ truncated: false, incomplete: false });
  const [error, setError] = useState<unknown>();
  const key = JSON.stringify(extra);
  useEffect(() => {
    let live = true;
    const t = setTimeout(async () => {
      try {
        const r = await get<{ items: T[]; truncated: boolean; incomplete: boolean; cursor?: string }>(`${path}${qs({ q: q.trim(), ...extra })}`);
        if (!live) return;
        setItems(r.items);
        setMore(r);
        setError(undefined);
      } catch (e) {
        if (live) setError(e);
      }
    }, 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [path, q, key]);
  const loadMore = async () => {
    if (!more.cursor) return;
    try {
      const r = await get<{ items: T[]; truncated: boolean; incomplete: boolean; cursor?: string }>(`${path}${qs({ cursor: more.cursor })}`);
      setItems((old) => [...(old ?? []), ...r.items]);
      setMore(r);
    } catch (e) {
      setError(e);
    }
  };
  return { items, more, error, loadMore };
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
      <ErrorText error={s.error} />
      {s.items && (
        <table>
          <caption className="sr-only">Computers found</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Class</th>
              <th scope="col">OU</th>
              <th scope="col">OS</th>
              <th scope="col">Enabled</th>
            </tr>
          </thead>
          <tbody>
            {s.items.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/computers/${c.id}`}>{c.name}</Link>
                </td>
                <td>{c.protected ? <span className="badge vip">Protected</span> : <span className="badge">Standard</span>}</td>
                <td>{ouPath(c.ou)}</td>
                <td>{c.os ?? '—'}</td>
                <td>{c.enabled ? 'yes' : 'no'}</td>
              </tr>
            ))}
            {s.items.length === 0 && (
              <tr>
                <td colSpan={5}>No computer found in what you manage.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      {s.more.truncated && (
        <button type="button" className="secondary" onClick={s.loadMore}>
          Show more
        </button>
      )}
      {s.more.incomplete && <p className="hint">The directory holds more than the console enumerates: refine the search.</p>}
    </section>
  );
}

export function ComputerPage({ id }: { id: string }) {
  const [c, setC] = useState<Computer>();
  const [error, setError] = useState<unknown>();
  const [dialog, setDialog] = useState<'reveal' | 'expire'>();
  const load = () =>
    get<Computer>(`/api/computers/${encodeURIComponent(id)}`).then(
      (x) => {
        setC(x);
        setError(undefined);
      },
      setError,
    );
  useEffect(() => {
    void load();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);
  if (error) return <ErrorText error={error} />;
  if (!c) return <p aria-busy="true">Loading…</p>;
  return (
    <section aria-labelledby="computer-title">
      <p>
        <Link to="/computers">← Computers</Link>
      </p>
      <h1 id="computer-title">{c.name}</h1>
      <dl className="facts">
        <dt>Class</dt>
        <dd>{c.protected ? 'Protected (VIP)' : 'Standard'}</dd>
        <dt>OU</dt>
        <dd>{ouPath(c.ou)}</dd>
        <dt>DNS name</dt>
        <dd>{c.dnsName ?? '—'}</dd>
        <dt>OS</dt>
        <dd>{c.os ?? '—'}</dd>
        <dt>Last sign-in</dt>
        <dd>
          {when(c.lastSignIn)} <span className="hint">(may lag up to about 14 days)</span>
        </dd>
        <dt>Enabled</dt>
        <dd>{c.enabled ? 'yes' : 'no'}</dd>
        <dt>LAPS expiry</dt>
        <dd data-testid="laps-expiry">{when(c.lapsExpiry)}</dd>
      </dl>
      <div className="actions">
        {c.actions?.revealLaps && (
          <button type="button" onClick={() => setDialog('reveal')}>
            Reveal local administrator password
          </button>
        )}
        {c.actions?.expireLaps && (
          <button type="button" className="secondary" onClick={() => setDialog('expire')}>
            Expire password now
          </button>
        )}
      </div>
      {dialog && (
        <LapsDialog
          computer={c}
          mode={dialog}
          onClose={() => {
            setDialog(undefined);
            void load();
          }}
        />
      )}
    </section>
  );
}

interface Reveal {
  account: string;
  password: string;
  updatedUtc: string | null;
  expiresUtc: string | null;
  source: 'windows' | 'legacy';
}

/**
 * Reveal or expire: the ticket and an explicit confirmation first, then the step-up when the API
 * asks for it. The revealed password lives only in this dialog's state: hidden after 30 s,
 * dropped when the dialog closes.
 */
function LapsDialog({ computer, mode, onClose }: { computer: Computer; mode: 'reveal' | 'expire'; onClose: () => void }) {
  const [ticket, setTicket] = useState('');
  const [confirm, setConfirm] = useState(false);
  const [shown, setShown] = useState<Reveal>();
  const [hidden, setHidden] = useState(false);
  const [expired, setExpired] = useState(false);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const close = () => {
    setShown(undefined);
    onClose();
  };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const path = `/api/computers/${encodeURIComponent(computer.id)}/laps${mode === 'expire' ? '/expire' : ''}`;
    const r = await a.run(() => withStepUp(() => post<Reveal & { expired?: true }>(path, { confirm, ticket: ticket.trim() })));
    if (!r) return;
    if (mode === 'expire') setExpired(true);
    else {
      setHidden(false);
      setShown(r);
    }
  };
  const title = mode === 'reveal' ? `Local administrator password of ${computer.name}` : `Expire the password of ${computer.name}`;
  return (
    <Modal title={title} onClose={close}>
      {shown ? (
        <>
          <SecretView
            label={`Account ${shown.account} (${shown.source === 'legacy' ? 'legacy LAPS' : 'Windows LAPS'}), set ${when(shown.updatedUtc)}, expires ${when(shown.expiresUtc)}`}
            value={shown.password}
            onExpired={() => {
              setShown(undefined);
              setHidden(true);
            }}
          />
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        </>
      ) : hidden ? (
        <>
          <p role="status">The password was hidden after 30 seconds. Reveal it again if you still need it (each reveal is audited and counted).</p>
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        </>
      ) : expired ? (
        <>
          <p role="status">The password expires now: the computer sets a new one at its next policy cycle.</p>
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit}>
          <label>
            Ticket
            <input name="ticket" required maxLength={200} value={ticket} onChange={(e) => setTicket(e.target.value)} autoFocus />
          </label>
          <label className="check">
            <input type="checkbox" name="confirm" checked={confirm} onChange={(e) => setConfirm(e.target.checked)} required />
            {mode === 'reveal' ? 'I need this password for the ticket above; the reveal is audited.' : 'Expire the password now; the computer will set a new one.'}
          </label>
          <ErrorText error={a.error} />
          <div className="actions">
            <button type="submit" disabled={a.busy || !confirm || !ticket.trim()}>
              {mode === 'reveal' ? 'Reveal' : 'Expire'}
            </button>
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
