import { useState } from 'react';
import { ApiFailure, del, get, levelOf, post, put, qs, type Me } from './api';
import { ErrorText, Link, Modal, useAction, useRoute, when } from '../../shared/ui';
import { usePolled } from './poll';
import { NotFound } from './app';

// Clients and their consoles: the register (name, notes, contacts), each console's last poll
// (version, health, audit chain, DCs, certificate) and its drift; register, edit and remove offered
// only at the level that allows them (spec: Levels).

interface Contact {
  name: string;
  email?: string;
  phone?: string;
  role?: string;
}
interface Client {
  code: string;
  name: string;
  notes: string;
  contacts: Contact[];
  updatedAt: string;
}
interface Console {
  id: string;
  clientCode: string;
  url: string;
  ca: string | null;
  tokenSet: boolean;
  updatedAt: string;
}
interface PollView {
  polled: boolean;
  polledAt?: string;
  ok?: boolean;
  ms?: number;
  error?: string;
  httpStatus?: number;
  consecutiveFailures?: number;
  lastSuccessAt?: string | null;
  version?: string | null;
  health?: string | null;
  audit?: { chain: string | null; failedLogins24h: number | null } | null;
  dcs?: Array<{ name?: string; host?: string; state?: string; status?: string }>;
  certificate?: { validTo: string; subject: string } | null;
}
type ConsoleWithPoll = Console & { poll?: PollView };

/** Semantic version order of two "x.y.z" (a leading v allowed); undefined when either is not one. */
function compareVersions(a: string, b: string): number | undefined {
  const p = (v: string) => /^v?(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1).map(Number);
  const x = p(a);
  const y = p(b);
  if (!x || !y) return undefined;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

type DriftState = 'up_to_date' | 'behind' | 'unknown' | 'not_compared';

/**
 * The drift the fleet API states for a console (`drift: 'behind'` or `drift: { state }`), when it
 * states one; `drift: null` is "no target set: versions not compared" (spec: Upgrade settings).
 */
export function driftFromApi(x: unknown): DriftState | undefined {
  if (!x || typeof x !== 'object' || !('drift' in x)) return undefined;
  const d = (x as { drift?: unknown }).drift;
  if (d === null) return 'not_compared';
  const raw = typeof d === 'string' ? d : typeof d === 'object' && d ? ((d as Record<string, unknown>).state ?? (d as Record<string, unknown>).badge ?? (d as Record<string, unknown>).status) : undefined;
  if (typeof raw !== 'string') return undefined;
  const k = raw.toLowerCase().replace(/[\s-]+/g, '_');
  return k === 'up_to_date' || k === 'behind' || k === 'unknown' ? k : undefined;
}

/**
 * Up to date / Behind / Unknown (spec: Console drift): as the API states it when it does; else
 * against the reference version: the upgrade target when one is set (GET /api/upgrades), else the
 * newest version the caller's consoles report (docs/decisions.md, "Fleet drift without upgrade routes").
 */
export function Drift({ version, reference, stated }: { version?: string | null; reference?: string; stated?: DriftState }) {
  const c = version && reference ? compareVersions(version, reference) : undefined;
  const state: DriftState = stated ?? (c === undefined ? 'unknown' : c >= 0 ? 'up_to_date' : 'behind');
  if (state === 'not_compared') return <span className="muted">Not compared (no target version)</span>;
  if (state === 'unknown') return <span className="badge">Unknown</span>;
  return state === 'up_to_date' ? <span className="badge good">Up to date</span> : <span className="badge warn" title={reference ? `${reference} is out` : undefined}>Behind</span>;
}
const statedDrift = (c: ConsoleWithPoll) => driftFromApi(c) ?? driftFromApi(c.poll);

async function withPolls(consoles: Console[]): Promise<ConsoleWithPoll[]> {
  return Promise.all(consoles.map(async (c) => ({ ...c, poll: await get<PollView>(`/api/consoles/${c.id}/status`).catch(() => undefined) })));
}
async function referenceVersion(consoles: ConsoleWithPoll[]): Promise<string | undefined> {
  const target = await get<{ target?: { tag?: string } | string | null }>('/api/upgrades').catch(() => undefined);
  const tag = typeof target?.target === 'string' ? target.target : target?.target?.tag;
  if (tag) return tag;
  let best: string | undefined;
  for (const c of consoles) {
    const v = c.poll?.version;
    if (v && (!best || (compareVersions(v, best) ?? 0) > 0)) best = v;
  }
  return best;
}

function PollCell({ p }: { p?: PollView }) {
  if (!p || !p.polled) return <span className="muted">Not polled yet</span>;
  return (
    <span>
      {when(p.polledAt)}:{' '}
      {p.ok ? (
        <span className="ok">answered</span>
      ) : (
        <span className="error">
          failed ({p.error}
          {p.httpStatus ? ` ${p.httpStatus}` : ''}
          {p.consecutiveFailures && p.consecutiveFailures > 1 ? `, ${p.consecutiveFailures} in a row` : ''})
        </span>
      )}
    </span>
  );
}

function ConsolesTable({ consoles, reference }: { consoles: ConsoleWithPoll[]; reference?: string }) {
  return (
    <table data-testid="consoles-table">
      <thead>
        <tr>
          <th scope="col">Console</th>
          <th scope="col">Client</th>
          <th scope="col">Version</th>
          <th scope="col">Drift</th>
          <th scope="col">Health</th>
          <th scope="col">Last poll</th>
        </tr>
      </thead>
      <tbody>
        {consoles.map((c) => (
          <tr key={c.id} data-testid={`console-${c.id}`}>
            <td>
              <Link to={`/consoles/${c.id}`}>{new URL(c.url).host}</Link>
            </td>
            <td>{c.clientCode}</td>
            <td>{c.poll?.version ?? '—'}</td>
            <td>
              <Drift version={c.poll?.version} reference={reference} stated={statedDrift(c)} />
            </td>
            <td>{c.poll?.health ?? '—'}</td>
            <td>
              <PollCell p={c.poll} />
            </td>
          </tr>
        ))}
        {consoles.length === 0 && (
          <tr>
            <td colSpan={6}>No console registered.</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

export function ClientsPage({ me }: { me: Me }) {
  const { data, error, refresh } = usePolled(async () => {
    const [clients, consoles] = await Promise.all([get<{ clients: Client[] }>('/api/clients'), get<{ consoles: Console[] }>('/api/consoles').then((r) => withPolls(r.consoles))]);
    return { clients: clients.clients, consoles, reference: await referenceVersion(consoles) };
  }, []);
  const [adding, setAdding] = useState<'client' | 'console'>();
  return (
    <section aria-labelledby="clients-title">
      <h1 id="clients-title">Clients</h1>
      {me.admin && (
        <div className="actions">
          <button type="button" onClick={() => setAdding('client')}>
            Register a client
          </button>
          <button type="button" className="secondary" onClick={() => setAdding('console')}>
            Add a console
          </button>
        </div>
      )}
      <ErrorText error={error} />
      {data && (
        <table data-testid="clients-table">
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Code</th>
              <th scope="col">Your level</th>
              <th scope="col">Consoles</th>
            </tr>
          </thead>
          <tbody>
            {data.clients.map((c) => (
              <tr key={c.code} data-testid={`client-${c.code}`}>
                <td>
                  <Link to={`/clients/${c.code}`}>{c.name}</Link>
                </td>
                <td>{c.code}</td>
                <td>{me.admin ? 'administrator' : levelOf(me, c.code)}</td>
                <td>{data.consoles.filter((x) => x.clientCode === c.code).length}</td>
              </tr>
            ))}
            {data.clients.length === 0 && (
              <tr>
                <td colSpan={4}>No client.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      <h2>Consoles</h2>
      {data && <ConsolesTable consoles={data.consoles} reference={data.reference} />}
      {data?.reference && <p className="hint">Drift is measured against {data.reference}.</p>}
      {adding === 'client' && <ClientDialog onClose={() => setAdding(undefined)} onSaved={() => (setAdding(undefined), void refresh())} />}
      {adding === 'console' && data && <ConsoleDialog me={me} clients={data.clients} onClose={() => setAdding(undefined)} onSaved={() => (setAdding(undefined), void refresh())} />}
    </section>
  );
}

export function ClientPage({ me, code }: { me: Me; code: string }) {
  const { go } = useRoute();
  const { data, error, refresh } = usePolled(async () => {
    const [client, consoles] = await Promise.all([get<Client>(`/api/clients/${encodeURIComponent(code)}`), get<{ consoles: Console[] }>(`/api/consoles${qs({ clientCode: code })}`).then((r) => withPolls(r.consoles))]);
    return { client, consoles, reference: await referenceVersion(consoles) };
  }, [code]);
  const [editing, setEditing] = useState(false);
  const [removing, setRemoving] = useState(false);
  const [adding, setAdding] = useState(false);
  const remove = useAction();
  if (error instanceof ApiFailure && error.status === 404) return <NotFound />;
  if (!data) return error ? <ErrorText error={error} /> : <p aria-busy="true">Loading…</p>;
  const c = data.client;
  const level = levelOf(me, c.code);
  return (
    <section aria-labelledby="client-title">
      <p>
        <Link to="/clients">← Clients</Link>
      </p>
      <h1 id="client-title">
        {c.name} <span className="muted">({c.code})</span>
      </h1>
      <dl className="facts">
        <dt>Notes</dt>
        <dd className="pre">{c.notes || '—'}</dd>
        <dt>Contacts</dt>
        <dd>
          {c.contacts.length
            ? c.contacts.map((x, i) => (
                <div key={i}>
                  {x.name}
                  {x.role ? `, ${x.role}` : ''}
                  {x.email ? ` · ${x.email}` : ''}
                  {x.phone ? ` · ${x.phone}` : ''}
                </div>
              ))
            : '—'}
        </dd>
        <dt>Proxies</dt>
        <dd>
          <Link to={`/proxies?q=${encodeURIComponent(c.code)}`}>Proxies of {c.name}</Link>
        </dd>
        <dt>Your level</dt>
        <dd data-testid="your-level">{me.admin ? 'administrator' : level}</dd>
      </dl>
      <div className="actions">
        {level === 'operator' && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit client
          </button>
        )}
        {me.admin && (
          <button type="button" className="secondary" onClick={() => setRemoving(true)}>
            Remove client
          </button>
        )}
      </div>
      <h2>Consoles</h2>
      {me.admin && (
        <div className="actions">
          <button type="button" className="secondary" onClick={() => setAdding(true)}>
            Add a console
          </button>
        </div>
      )}
      <ConsolesTable consoles={data.consoles} reference={data.reference} />
      <AccessRoleSection me={me} code={c.code} />
      {adding && <ConsoleDialog me={me} clients={[c]} onClose={() => setAdding(false)} onSaved={() => (setAdding(false), void refresh())} />}
      {editing && <ClientDialog client={c} onClose={() => setEditing(false)} onSaved={() => (setEditing(false), void refresh())} />}
      {removing && (
        <Modal title={`Remove ${c.name}`} onClose={() => setRemoving(false)}>
          <p>The client leaves the register and every technician assignment. Its consoles must be removed first.</p>
          <ErrorText error={remove.error} />
          <div className="actions">
            <button type="button" disabled={remove.busy} onClick={async () => (await remove.run(() => del(`/api/clients/${c.code}`))) !== undefined && go('/clients')}>
              Remove
            </button>
            <button type="button" className="secondary" onClick={() => setRemoving(false)}>
              Cancel
            </button>
          </div>
        </Modal>
      )}
    </section>
  );
}

function ClientDialog({ client, onClose, onSaved }: { client?: Client; onClose: () => void; onSaved: () => void }) {
  const [code, setCode] = useState(client?.code ?? '');
  const [name, setName] = useState(client?.name ?? '');
  const [notes, setNotes] = useState(client?.notes ?? '');
  const [contacts, setContacts] = useState(client ? client.contacts.map((c) => [c.name, c.role, c.email, c.phone].map((x) => x ?? '').join('; ')).join('\n') : '');
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const list = contacts
      .split('\n')
      .map((l) => l.split(';').map((x) => x.trim()))
      .filter((p) => p[0])
      .map(([n, role, email, phone]) => ({ name: n, ...(role ? { role } : {}), ...(email ? { email } : {}), ...(phone ? { phone } : {}) }));
    const body = { name: name.trim(), notes, contacts: list };
    const r = await a.run(() => (client ? put(`/api/clients/${client.code}`, body) : post('/api/clients', { code: code.trim(), ...body })));
    if (r !== undefined) onSaved();
  };
  return (
    <Modal title={client ? `Edit ${client.name}` : 'Register a client'} onClose={onClose}>
      <form onSubmit={submit}>
        {!client && (
          <label>
            Code
            <input name="code" required pattern="[a-z0-9][a-z0-9\-]{0,62}" value={code} onChange={(e) => setCode(e.target.value)} />
            <span className="hint">Lowercase letters, digits and hyphens; the label client_code of its desktops.</span>
          </label>
        )}
        <label>
          Name
          <input name="name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Notes
          <textarea name="notes" maxLength={4000} value={notes} onChange={(e) => setNotes(e.target.value)} />
        </label>
        <label>
          Contacts
          <textarea name="contacts" value={contacts} onChange={(e) => setContacts(e.target.value)} />
          <span className="hint">One a line: name; role; e-mail; phone.</span>
        </label>
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Save client
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function ConsoleDialog({ me, clients, console: current, onClose, onSaved }: { me: Me; clients: Client[]; console?: Console; onClose: () => void; onSaved: () => void }) {
  const [clientCode, setClientCode] = useState(current?.clientCode ?? clients[0]?.code ?? '');
  const [url, setUrl] = useState(current?.url ?? '');
  const [ca, setCa] = useState('');
  const [token, setToken] = useState('');
  const a = useAction();
  const operable = clients.filter((c) => levelOf(me, c.code) === 'operator');
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => {
      if (!current) return post('/api/consoles', { clientCode, url: url.trim(), token, ...(ca.trim() ? { ca } : {}) });
      const body: Record<string, unknown> = {};
      if (clientCode !== current.clientCode) body.clientCode = clientCode;
      if (token) body.token = token;
      if (me.admin && url.trim() !== current.url) body.url = url.trim();
      if (me.admin && ca.trim()) body.ca = ca;
      return put(`/api/consoles/${current.id}`, body);
    });
    if (r !== undefined) onSaved();
  };
  return (
    <Modal title={current ? 'Edit console' : 'Add a console'} onClose={onClose}>
      <form onSubmit={submit}>
        <label>
          Client
          <select name="clientCode" value={clientCode} onChange={(e) => setClientCode(e.target.value)}>
            {operable.map((c) => (
              <option key={c.code} value={c.code}>
                {c.name} ({c.code})
              </option>
            ))}
          </select>
        </label>
        {me.admin && (
          <>
            <label>
              URL
              <input name="url" type="url" required pattern="https://.*" value={url} onChange={(e) => setUrl(e.target.value)} />
            </label>
            <label>
              Extra CA (PEM, optional)
              <textarea name="ca" value={ca} onChange={(e) => setCa(e.target.value)} placeholder={current?.ca ? 'A CA is set: paste a new one to replace it' : ''} />
            </label>
          </>
        )}
        <label>
          Access token {current ? '(empty keeps the saved one)' : ''}
          <input name="token" type="password" autoComplete="off" required={!current} value={token} onChange={(e) => setToken(e.target.value)} />
        </label>
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Save console
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

export function ConsolePage({ me, id }: { me: Me; id: string }) {
  const { go } = useRoute();
  const { data, error, refresh, loading } = usePolled(async () => {
    const c = await get<Console>(`/api/consoles/${encodeURIComponent(id)}`);
    const [withPoll] = await withPolls([c]);
    const clients = await get<{ clients: Client[] }>('/api/clients');
    return { c: withPoll, clients: clients.clients, reference: await referenceVersion([withPoll]) };
  }, [id]);
  const [editing, setEditing] = useState(false);
  const [removing, setRemoving] = useState(false);
  const remove = useAction();
  const poll = useAction();
  const [polled, setPolled] = useState<PollView>();
  if (error instanceof ApiFailure && error.status === 404) return <NotFound />;
  if (!data) return error ? <ErrorText error={error} /> : <p aria-busy="true">Loading…</p>;
  const { c } = data;
  const p = c.poll;
  const operates = levelOf(me, c.clientCode) === 'operator';
  const pollNow = async () => {
    setPolled(undefined);
    const r = await poll.run(() => post<PollView>(`/api/consoles/${c.id}/poll`));
    if (r) {
      setPolled(r);
      void refresh();
    }
  };
  return (
    <section aria-labelledby="console-title">
      <p>
        <Link to={`/clients/${c.clientCode}`}>← {c.clientCode}</Link>
      </p>
      <h1 id="console-title">Console {new URL(c.url).host}</h1>
      <dl className="facts">
        <dt>URL</dt>
        <dd>{c.url}</dd>
        <dt>Client</dt>
        <dd>{c.clientCode}</dd>
        <dt>Access token</dt>
        <dd>{c.tokenSet ? 'set (never shown)' : 'not set'}</dd>
        <dt>Extra CA</dt>
        <dd>{c.ca ? 'set' : 'none (system store)'}</dd>
        <dt>Version</dt>
        <dd>
          {p?.version ?? '—'} <Drift version={p?.version} reference={data.reference} stated={statedDrift(c)} />
        </dd>
        <dt>Last poll</dt>
        <dd data-testid="last-poll">
          <PollCell p={p} />
        </dd>
        <dt>Last success</dt>
        <dd>{when(p?.lastSuccessAt)}</dd>
        <dt>Health</dt>
        <dd>{p?.health ?? '—'}</dd>
        <dt>Audit chain</dt>
        <dd>{p?.audit ? `${p.audit.chain ?? 'unknown'} · ${p.audit.failedLogins24h ?? '?'} failed sign-ins in 24 h` : '—'}</dd>
        <dt>Domain controllers</dt>
        <dd>{p?.dcs?.length ? p.dcs.map((d) => `${d.name ?? d.host}: ${d.state ?? d.status ?? '?'}`).join(', ') : '—'}</dd>
        <dt>Certificate</dt>
        <dd>{p?.certificate ? `${p.certificate.subject}, valid to ${when(p.certificate.validTo)}` : '—'}</dd>
      </dl>
      <div className="actions">
        {operates && (
          <button type="button" data-testid="poll-now" disabled={poll.busy} aria-busy={poll.busy} onClick={() => void pollNow()}>
            {poll.busy ? 'Polling…' : 'Poll now'}
          </button>
        )}
        <button type="button" className="secondary" disabled={loading} onClick={() => void refresh()}>
          Read the last poll again
        </button>
        {operates && (
          <button type="button" className="secondary" onClick={() => setEditing(true)}>
            Edit console
          </button>
        )}
        {me.admin && (
          <button type="button" className="secondary" onClick={() => setRemoving(true)}>
            Remove console
          </button>
        )}
      </div>
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
      {editing && <ConsoleDialog me={me} clients={data.clients} console={c} onClose={() => setEditing(false)} onSaved={() => (setEditing(false), void refresh())} />}
      {removing && (
        <Modal title="Remove console" onClose={() => setRemoving(false)}>
          <p>The fleet plane stops polling {c.url} and forgets its token.</p>
          <ErrorText error={remove.error} />
          <div className="actions">
            <button type="button" disabled={remove.busy} onClick={async () => (await remove.run(() => del(`/api/consoles/${c.id}`))) !== undefined && go(`/clients/${c.clientCode}`)}>
              Remove
            </button>
            <button type="button" className="secondary" onClick={() => setRemoving(false)}>
              Cancel
            </button>
          </div>
        </Modal>
      )}
    </section>
  );
}

/**
 * The client's access role (docs/fleet.md, "Per-client access roles"): its YAML for every viewer of
 * the client; for administrators, create or refresh it in the cluster. A role of that name the fleet
 * did not make (409 would_overwrite) is replaced only after an explicit confirmation.
 */
function AccessRoleSection({ me, code }: { me: Me; code: string }) {
  const { data, error } = usePolled(() => get<{ name: string; yaml: string }>(`/api/clients/${encodeURIComponent(code)}/access-role`), [code]);
  const a = useAction();
  const [done, setDone] = useState<{ name: string; outcome: 'created' | 'refreshed' | 'replaced' }>();
  const apply = async (overwrite: boolean) => {
    setDone(undefined);
    const r = await a.run(() => post<{ name: string; outcome: 'created' | 'refreshed' | 'replaced' }>(`/api/clients/${encodeURIComponent(code)}/access-role`, overwrite ? { overwrite: true } : {}));
    if (r) setDone(r);
  };
  const unmanaged = a.error instanceof ApiFailure && a.error.code === 'would_overwrite';
  const OUTCOME = { created: 'created in the cluster', refreshed: 'refreshed in the cluster (it was already the fleet\'s)', replaced: 'replaced in the cluster: the unmanaged role is now the fleet\'s' };
  return (
    <>
      <h2 id="access-role-title">Access role</h2>
      <p className="hint">
        The role that lets technicians reach this client's desktops and applications only. Give it to them in the access platform; a cluster administrator may also paste it into
        <code> tctl create -f</code>.
      </p>
      <ErrorText error={error} />
      {data && (
        <div data-testid="access-role">
          <p>
            Role <strong>{data.name}</strong>
          </p>
          <pre className="commands" tabIndex={0}>
            {data.yaml}
          </pre>
        </div>
      )}
      {me.admin && data && (
        <>
          <div className="actions">
            <button type="button" disabled={a.busy} onClick={() => void apply(false)}>
              Create or refresh in the cluster
            </button>
          </div>
          <div aria-live="polite" data-testid="access-role-result">
            {done && (
              <p className="ok">
                {done.name} {OUTCOME[done.outcome]}.
              </p>
            )}
            {unmanaged ? (
              <div role="alert" className="error">
                <p>
                  The cluster already has a role named {data.name} that the fleet plane did not create (it lacks the label fleet-managed: &quot;true&quot;). Nothing was written. Replacing it
                  gives it exactly the rights above and drops whatever else it allowed: check with whoever made it first.
                </p>
                <button type="button" className="secondary" disabled={a.busy} onClick={() => void apply(true)}>
                  Replace the unmanaged role
                </button>
              </div>
            ) : (
              <ErrorText error={a.error} />
            )}
          </div>
        </>
      )}
    </>
  );
}
