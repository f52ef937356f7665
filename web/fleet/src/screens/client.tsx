import { useState } from 'react';
import { ApiFailure, del, get, levelOf, type Me } from '../api';
import { usePolled } from '../poll';
import { ErrorText, Link, Loaded, useAction, useConfirm, useRoute } from '../../../shared/ui';
import { NotFound } from '../app';
import { AccessRoleSection } from './access-role';
import { ClientDialog, ConsoleDialog } from './client-dialogs';
import { ConsolesTable, loadConsoles, type Client } from './consoles';

// A client: its register entry, its consoles with their last poll (drawn as soon as they arrive,
// apart from the entry), its access role; edit and remove at the level that allows them.

export function ClientPage({ me, code }: { me: Me; code: string }) {
  const { go } = useRoute();
  const client = usePolled(() => get<Client>(`/api/clients/${encodeURIComponent(code)}`), [code]);
  const consoles = usePolled(() => loadConsoles(code), [code]);
  const [editing, setEditing] = useState(false);
  const [adding, setAdding] = useState(false);
  const remove = useAction();
  const confirm = useConfirm();
  if (client.error instanceof ApiFailure && client.error.status === 404) return <NotFound />;
  return (
    <section aria-labelledby="client-title">
      <p>
        <Link to="/clients">← Clients</Link>
      </p>
      <Loaded data={client.data} error={client.error} onRetry={client.refresh} loading="Loading the client…">
        {(c) => {
          const level = levelOf(me, c.code);
          return (
            <>
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
                  <button
                    type="button"
                    className="secondary"
                    disabled={remove.busy}
                    onClick={async () => {
                      const ok = await confirm({ title: `Remove ${c.name}`, body: <p>The client leaves the register and every technician assignment. Its consoles must be removed first.</p>, confirm: 'Remove', danger: true });
                      if (ok && (await remove.run(() => del(`/api/clients/${c.code}`))) !== undefined) go('/clients');
                    }}
                  >
                    Remove client
                  </button>
                )}
              </div>
              <ErrorText error={remove.error} />
              {editing && <ClientDialog client={c} onClose={() => setEditing(false)} onSaved={() => (setEditing(false), void client.refresh())} />}
              {adding && <ConsoleDialog me={me} clients={[c]} onClose={() => setAdding(false)} onSaved={() => (setAdding(false), void consoles.refresh())} />}
            </>
          );
        }}
      </Loaded>
      <h2>Consoles</h2>
      {me.admin && (
        <div className="actions">
          <button type="button" className="secondary" onClick={() => setAdding(true)} disabled={!client.data}>
            Add a console
          </button>
        </div>
      )}
      <Loaded data={consoles.data} error={consoles.error} onRetry={consoles.refresh} loading="Loading the consoles and their last poll…">
        {(list) => <ConsolesTable consoles={list} showClient={false} />}
      </Loaded>
      <AccessRoleSection me={me} code={code} />
    </section>
  );
}
