import { useState } from 'react';
import { del, get, put, type Level } from '../api';
import { usePolled } from '../poll';
import { AdminList, Empty, FormDialog, Loaded, useAction } from '../../../shared/ui';

// Technicians and their scopes (administrators): assignments of clients at a level each.

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
  return (
    <section aria-labelledby="tech-title">
      <h1 id="tech-title">Technicians</h1>
      <Loaded data={data} error={error} onRetry={refresh} loading="Loading the assignments…">
        {(d) => (
          <>
            <p className="hint">
              Scope = these assignments plus the access platform's fleet-client-&lt;code&gt; roles{' '}
              {d.clientRolesEnabled ? `(honoured, at level ${d.clientRoleLevel})` : '(not honoured on this fleet plane)'}; the stronger level wins.
            </p>
            <AdminList
              caption="Technician assignments"
              testId="technicians"
              rows={d.technicians}
              rowKey={(t) => t.username}
              rowTestId={(t) => `tech-${t.username}`}
              name={(t) => t.username}
              empty={<Empty>No assignment: technicians see only what their fleet-client roles give.</Empty>}
              columns={[
                { header: 'User name', cell: (t) => t.username },
                { header: 'Clients and levels', cell: (t) => t.clients.map((c) => `${c.code} (${c.level})`).join(', ') || '—' },
              ]}
              addLabel="New assignment"
              editor={(t, done) => <AssignmentDialog assignment={t} clients={d.clients} onClose={done.close} onSaved={done.saved} />}
              remove={{
                ask: (t) => ({ title: `Remove every assignment of ${t.username}?`, body: <p>{t.username} keeps only what a fleet-client role gives.</p>, confirm: 'Remove the assignments', danger: true }),
                run: (t) => del(`/api/technicians/${encodeURIComponent(t.username)}`),
              }}
              onChanged={() => void refresh()}
            />
          </>
        )}
      </Loaded>
    </section>
  );
}

function AssignmentDialog({ assignment, clients, onClose, onSaved }: { assignment?: Assignment; clients: Array<{ code: string; name: string }>; onClose: () => void; onSaved: () => void }) {
  const [username, setUsername] = useState(assignment?.username ?? '');
  const [levels, setLevels] = useState<Record<string, Level | ''>>(Object.fromEntries((assignment?.clients ?? []).map((c) => [c.code, c.level])));
  const a = useAction();
  const submit = async () => {
    const list = Object.entries(levels)
      .filter(([, l]) => l)
      .map(([code, level]) => ({ code, level }));
    // user names are exact and case-sensitive (spec): sent as typed
    if ((await a.run(() => put('/api/technicians', { username, clients: list }))) !== undefined) onSaved();
  };
  return (
    <FormDialog title={assignment ? `Edit ${assignment.username}` : 'New assignment'} onClose={onClose} onSubmit={submit} busy={a.busy} error={a.error} submit="Save assignment">
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
    </FormDialog>
  );
}

