import { useState } from 'react';
import { del, get, put, qs, type Level, type Me } from './api';
import { ErrorText, Link, Modal, useAction, when } from '../../shared/ui';
import { usePolled } from './poll';

// Technicians and their scopes (administrators), the audit with its chain verification, the access
// gateways and the agents' auto-update rollout (read-only).

interface Assignment {
  username: string;
  clients: Array<{ code: string; level: Level }>;
  updatedAt?: string;
}

export function TechniciansPage() {
  const { data, error, refresh } = usePolled(async () => {
    const [t, c] = await Promise.all([get<{ technicians: Assignment[]; clientRolesEnabled: boolean; clientRoleLevel: Level }>('/api/technicians'), get<{ clients: Array<{ code: string; name: string }> }>('/api/clients')]);
    return { ...t, clients: c.clients };
  }, []);
  const [editing, setEditing] = useState<Assignment | 'new'>();
  const row = useAction();
  return (
    <section aria-labelledby="tech-title">
      <h1 id="tech-title">Technicians</h1>
      <ErrorText error={error} />
      {data && (
        <>
          <p className="hint">
            Scope = these assignments plus the access platform's fleet-client-&lt;code&gt; roles{' '}
            {data.clientRolesEnabled ? `(honoured, at level ${data.clientRoleLevel})` : '(not honoured on this fleet plane)'}; the stronger level wins.
          </p>
          <div className="actions">
            <button type="button" onClick={() => setEditing('new')}>
              New assignment
            </button>
          </div>
          <ErrorText error={row.error} />
          <table data-testid="technicians">
            <thead>
              <tr>
                <th scope="col">User name</th>
                <th scope="col">Clients and levels</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {data.technicians.map((t) => (
                <tr key={t.username} data-testid={`tech-${t.username}`}>
                  <td>{t.username}</td>
                  <td>{t.clients.map((c) => `${c.code} (${c.level})`).join(', ') || '—'}</td>
                  <td>
                    <div className="actions tight">
                      <button type="button" className="secondary" onClick={() => setEditing(t)}>
                        Edit<span className="sr-only"> {t.username}</span>
                      </button>
                      <button type="button" className="secondary" onClick={async () => confirm(`Remove every assignment of ${t.username}?`) && (await row.run(() => del(`/api/technicians/${encodeURIComponent(t.username)}`))) !== undefined && refresh()}>
                        Remove<span className="sr-only"> {t.username}</span>
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {editing && <AssignmentDialog assignment={editing === 'new' ? undefined : editing} clients={data.clients} onClose={() => setEditing(undefined)} onSaved={() => (setEditing(undefined), void refresh())} />}
        </>
      )}
    </section>
  );
}

function AssignmentDialog({ assignment, clients, onClose, onSaved }: { assignment?: Assignment; clients: Array<{ code: string; name: string }>; onClose: () => void; onSaved: () => void }) {
  const [username, setUsername] = useState(assignment?.username ?? '');
  const [levels, setLevels] = useState<Record<string, Level | ''>>(Object.fromEntries((assignment?.clients ?? []).map((c) => [c.code, c.level])));
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const list = Object.entries(levels)
      .filter(([, l]) => l)
      .map(([code, level]) => ({ code, level }));
    // user names are exact and case-sensitive (spec): sent as typed
    if ((await a.run(() => put('/api/technicians', { username, clients: list }))) !== undefined) onSaved();
  };
  return (
    <Modal title={assignment ? `Edit ${assignment.username}` : 'New assignment'} onClose={onClose}>
      <form onSubmit={submit}>
        <label>
          Access-platform user name (exact, case-sensitive)
          <input name="username" required maxLength={256} readOnly={!!assignment} value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <fieldset>
          <legend>Clients</legend>
          {clients.map((c) => (
            <label key={c.code}>
              {c.name} ({c.code})
              <select value={levels[c.code] ?? ''} onChange={(e) => setLevels({ ...levels, [c.code]: e.target.value as Level | '' })}>
                <option value="">No access</option>
                <option value="viewer">viewer</option>
                <option value="operator">operator</option>
              </select>
            </label>
          ))}
        </fieldset>
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Save assignment
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

interface AuditEntry {
  seq: number;
  at: string;
  event: string;
  outcome: string;
  reason?: string;
  client?: string;
  actor?: { name?: string; provider?: string };
  target?: { name?: string; id?: string };
}

export function AuditPage({ me }: { me: Me }) {
  const [older, setOlder] = useState<AuditEntry[]>([]);
  const { data, error } = usePolled(() => get<{ entries: AuditEntry[] }>(`/api/audit${qs({ limit: '50' })}`), []);
  const verify = useAction();
  const [result, setResult] = useState<{ ok: boolean; checked: number; firstBadSeq?: number; problem?: string }>();
  const more = useAction();
  const rows = [...(data?.entries ?? []), ...older.filter((o) => !data?.entries.some((e) => e.seq === o.seq))];
  const last = rows.at(-1);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      {me.admin && (
        <div className="verify">
          <button type="button" disabled={verify.busy} onClick={async () => setResult(await verify.run(() => get('/api/audit/verify')))}>
            Verify the chain
          </button>
          {result && (
            <p role="status" data-testid="verify-result" className={result.ok ? 'ok' : 'error'}>
              {result.ok ? `The chain verifies (${result.checked} rows checked).` : `The chain is broken at row ${result.firstBadSeq} (${result.problem}).`}
            </p>
          )}
          <ErrorText error={verify.error} />
        </div>
      )}
      {!me.admin && <p className="hint">Entries filed under your clients, and your own actions (from the newest 5 000).</p>}
      <ErrorText error={error} />
      <table data-testid="audit">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col">Actor</th>
            <th scope="col">Target</th>
            <th scope="col">Client</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.seq}>
              <td>{r.seq}</td>
              <td className="when">{when(r.at)}</td>
              <td>{r.event}</td>
              <td>
                {r.outcome}
                {r.reason ? ` (${r.reason})` : ''}
              </td>
              <td>{r.actor?.name ?? '—'}</td>
              <td>{r.target?.name ?? r.target?.id ?? '—'}</td>
              <td>{r.client ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {last && last.seq > 1 && (
        <button type="button" className="secondary" disabled={more.busy} onClick={async () => {
          const r = await more.run(() => get<{ entries: AuditEntry[] }>(`/api/audit${qs({ limit: '50', beforeSeq: String(last.seq) })}`));
          if (r) setOlder((o) => [...o, ...r.entries]);
        }}>
          Load older entries
        </button>
      )}
    </section>
  );
}

interface Gateway {
  id: string;
  hostname: string;
  clientCodes: string[];
  status: string;
  version: string | null;
  windowsServers: number;
  lastSeen: string | null;
}
interface AutoUpdate {
  mode?: string;
  targetVersion?: string;
  startVersion?: string;
  schedule?: string;
  strategy?: string;
  rollout: { state?: string; startTime?: string; groups: Array<{ name: string; state?: string; lastUpdateTime?: string; lastUpdateReason?: string; days: string[]; startHour?: number; presentCount?: number; upToDateCount?: number }> } | null;
  warnings: Array<{ code: string; resource: string }>;
}

export function AccessPage() {
  const gw = usePolled(() => get<{ gateways: Gateway[]; readAt: string }>('/api/access/gateways'), []);
  const au = usePolled(() => get<AutoUpdate>('/api/access/autoupdate'), []);
  const u = au.data;
  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">Gateways and updates</h1>
      <h2>Windows desktop gateways</h2>
      <ErrorText error={gw.error} />
      {gw.data && (
        <table data-testid="gateways">
          <thead>
            <tr>
              <th scope="col">Host</th>
              <th scope="col">Clients</th>
              <th scope="col">Status</th>
              <th scope="col">Version</th>
              <th scope="col">Windows servers</th>
              <th scope="col">Last seen</th>
            </tr>
          </thead>
          <tbody>
            {gw.data.gateways.map((g) => (
              <tr key={g.id}>
                <td>
                  <Link to={`/proxies/${g.id}`}>{g.hostname}</Link>
                </td>
                <td>{g.clientCodes.join(', ') || '—'}</td>
                <td>{g.status}</td>
                <td>{g.version ?? '—'}</td>
                <td>{g.windowsServers}</td>
                <td className="when">{when(g.lastSeen)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Agent auto-update</h2>
      <ErrorText error={au.error} />
      {u && (
        <>
          {u.warnings.map((w) => (
            <p key={w.resource} className="notice">
              {w.resource}: {w.code === 'access_denied' ? "the fleet plane's role may not read it" : w.code === 'missing' || w.code === 'not_found' ? 'not configured in the cluster' : w.code}
            </p>
          ))}
          <dl className="facts" data-testid="autoupdate">
            <dt>Mode</dt>
            <dd>{u.mode ?? '—'}</dd>
            <dt>Target version</dt>
            <dd>{u.targetVersion ?? '—'}</dd>
            <dt>Strategy</dt>
            <dd>{u.strategy ?? '—'}</dd>
            <dt>Schedule</dt>
            <dd>{u.schedule ?? '—'}</dd>
            <dt>Rollout</dt>
            <dd>{u.rollout ? `${u.rollout.state ?? '—'} since ${when(u.rollout.startTime)}` : '—'}</dd>
          </dl>
          {u.rollout && (
            <table>
              <thead>
                <tr>
                  <th scope="col">Update group</th>
                  <th scope="col">State</th>
                  <th scope="col">Up to date</th>
                  <th scope="col">Window</th>
                  <th scope="col">Last change</th>
                </tr>
              </thead>
              <tbody>
                {u.rollout.groups.map((g) => (
                  <tr key={g.name}>
                    <td>{g.name}</td>
                    <td>{g.state ?? '—'}</td>
                    <td>{g.presentCount !== undefined ? `${g.upToDateCount ?? 0} of ${g.presentCount}` : '—'}</td>
                    <td>
                      {g.days.join(', ') || '—'}
                      {g.startHour !== undefined ? ` at ${g.startHour}:00 UTC` : ''}
                    </td>
                    <td>
                      {when(g.lastUpdateTime)} {g.lastUpdateReason ?? ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
