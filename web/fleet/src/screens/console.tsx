import { useState } from 'react';
import { ApiFailure, del, get, levelOf, post, type Me } from '../api';
import { usePolled } from '../poll';
import { Busy, ErrorText, Link, Loaded, Loading, useAction, useConfirm, useRoute, when } from '../../../shared/ui';
import { NotFound } from '../app';
import { ConsoleDialog } from './client-dialogs';
import { loadClients } from './clients';
import { Drift, Health, hostOf, PollCell, type Console } from './consoles';

// A console: the facts GET /api/consoles/{id} carries with its last poll, drawn at once; the
// rest of the last poll (audit chain, DCs, certificate) filled in when /status answers; poll now.

interface PollDetail {
  polled: boolean;
  ms?: number;
  version?: string | null;
  health?: string | null;
  ok?: boolean;
  error?: string;
  httpStatus?: number;
  audit?: { chain: string | null; failedLogins24h: number | null } | null;
  dcs?: Array<{ name?: string; host?: string; state?: string; status?: string }>;
  certificate?: { validTo: string; subject: string } | null;
}

export function ConsolePage({ me, id }: { me: Me; id: string }) {
  const { go } = useRoute();
  const c = usePolled(() => get<Console>(`/api/consoles/${encodeURIComponent(id)}`), [id]);
  const status = usePolled(() => get<PollDetail>(`/api/consoles/${encodeURIComponent(id)}/status`), [id]);
  const [editing, setEditing] = useState(false);
  const remove = useAction();
  const poll = useAction();
  const confirm = useConfirm();
  const [polled, setPolled] = useState<PollDetail>();
  if (c.error instanceof ApiFailure && c.error.status === 404) return <NotFound />;
  const pollNow = async () => {
    setPolled(undefined);
    const r = await poll.run(() => post<PollDetail>(`/api/consoles/${id}/poll`));
    if (r) {
      setPolled(r);
      void c.refresh();
      void status.refresh();
    }
  };
  const s = status.data;
  return (
    <section aria-labelledby="console-title">
      <Loaded data={c.data} error={c.error} onRetry={c.refresh} loading="Loading the console…">
        {(x) => {
          const operates = levelOf(me, x.clientCode) === 'operator';
          const p = x.poll;
          return (
            <>
              <p>
                <Link to={`/clients/${x.clientCode}`}>← {x.clientCode}</Link>
              </p>
              <h1 id="console-title">Console {hostOf(x.url)}</h1>
              <dl className="facts">
                <dt>URL</dt>
                <dd>{x.url}</dd>
                <dt>Client</dt>
                <dd>{x.clientCode}</dd>
                <dt>Access token</dt>
                <dd>{x.tokenSet ? 'set (never shown)' : 'not set'}</dd>
                <dt>Extra CA</dt>
                <dd>{x.ca ? 'set' : 'none (system store)'}</dd>
                <dt>Version</dt>
                <dd>
                  {p?.version ?? x.version ?? '—'} <Drift drift={x.drift} />
                </dd>
                <dt>Last poll</dt>
                <dd data-testid="last-poll">
                  <PollCell p={p} />
                </dd>
                <dt>Last success</dt>
                <dd>{when(p?.lastSuccessAt)}</dd>
                <dt>Health</dt>
                <dd>
                  <Health p={p} />
                </dd>
                <dt>Audit chain</dt>
                <dd>{s ? (s.audit ? `${s.audit.chain ?? 'unknown'} · ${s.audit.failedLogins24h ?? '?'} failed sign-ins in 24 h` : '—') : <Loading label="Reading…" />}</dd>
                <dt>Domain controllers</dt>
                <dd>{s ? (s.dcs?.length ? s.dcs.map((d) => `${d.name ?? d.host}: ${d.state ?? d.status ?? '?'}`).join(', ') : '—') : <Loading label="Reading…" />}</dd>
                <dt>Certificate</dt>
                <dd>{s ? (s.certificate ? `${s.certificate.subject}, valid to ${when(s.certificate.validTo)}` : '—') : <Loading label="Reading…" />}</dd>
              </dl>
              <div className="actions">
                {operates && (
                  <Busy busy={poll.busy} data-testid="poll-now" onClick={() => void pollNow()}>
                    Poll now
                  </Busy>
                )}
                <Busy className="secondary" busy={c.loading} onClick={() => (void c.refresh(), void status.refresh())}>
                  Read the last poll again
                </Busy>
                {operates && (
                  <button type="button" className="secondary" onClick={() => setEditing(true)}>
                    Edit console
                  </button>
                )}
                {me.admin && (
                  <button
                    type="button"
                    className="secondary"
                    disabled={remove.busy}
                    onClick={async () => {
                      const ok = await confirm({ title: 'Remove console', body: <p>The fleet plane stops polling {x.url} and forgets its token.</p>, confirm: 'Remove', danger: true });
                      if (ok && (await remove.run(() => del(`/api/consoles/${x.id}`))) !== undefined) go(`/clients/${x.clientCode}`);
                    }}
                  >
                    Remove console
                  </button>
                )}
              </div>
              <ErrorText error={remove.error} />
              <div aria-live="polite" data-testid="poll-now-result">
                {polled && (
                  <p className={polled.ok ? 'ok' : 'error'}>
                    {polled.ok
                      ? `Polled now: the console answered in ${polled.ms ?? '?'} ms${polled.version ? `, version ${polled.version}` : ''}, health ${polled.health ?? 'unknown'}.`
                      : `Polled now: the console did not answer (${polled.error}${polled.httpStatus ? ` ${polled.httpStatus}` : ''}).`}
                  </p>
                )}
                <ErrorText error={poll.error} />
              </div>
              {editing && <EditConsole me={me} console={x} onClose={() => setEditing(false)} onSaved={() => (setEditing(false), void c.refresh())} />}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}

/** The console's dialog needs the clients it may move to: read when it opens. */
function EditConsole({ me, console: x, onClose, onSaved }: { me: Me; console: Console; onClose: () => void; onSaved: () => void }) {
  const clients = usePolled(loadClients, []);
  if (!clients.data) return null;
  return <ConsoleDialog me={me} clients={clients.data} console={x} onClose={onClose} onSaved={onSaved} />;
}
