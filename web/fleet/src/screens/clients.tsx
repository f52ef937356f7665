import { useState } from 'react';
import { get, levelOf, type Me } from '../api';
import { usePolled } from '../poll';
import { DataTable, Empty, Link, Loaded } from '../../../shared/ui';
import { ClientDialog, ConsoleDialog } from './client-dialogs';
import { ConsolesTable, loadConsoles, type Client } from './consoles';

// Clients and their consoles. The register and the consoles (with their stored last poll) are two
// answers drawn as each arrives (issue 29: the page never waits for a status request per
// console); both refresh in place every 30 s, never blanking the page.

export const loadClients = () => get<{ clients: Client[] }>('/api/clients').then((r) => r.clients);

export function ClientsPage({ me }: { me: Me }) {
  const clients = usePolled(loadClients, []);
  const consoles = usePolled(() => loadConsoles(), []);
  const [adding, setAdding] = useState<'client' | 'console'>();
  const refresh = () => {
    void clients.refresh();
    void consoles.refresh();
  };
  return (
    <section aria-labelledby="clients-title">
      <h1 id="clients-title">Clients</h1>
      {me.admin && (
        <div className="actions">
          <button type="button" onClick={() => setAdding('client')}>
            Register a client
          </button>
          <button type="button" className="secondary" onClick={() => setAdding('console')} disabled={!clients.data}>
            Add a console
          </button>
        </div>
      )}
      <Loaded data={clients.data} error={clients.error} onRetry={clients.refresh} loading="Loading the clients…">
        {(list) => (
          <DataTable
            caption="Clients"
            testId="clients-table"
            rows={list}
            rowKey={(c) => c.code}
            rowTestId={(c) => `client-${c.code}`}
            empty={<Empty>No client registered{me.admin ? ': register the first one.' : ' in your scope.'}</Empty>}
            columns={[
              { header: 'Client', cell: (c) => <Link to={`/clients/${c.code}`}>{c.name}</Link> },
              { header: 'Code', cell: (c) => c.code },
              { header: 'Your level', cell: (c) => (me.admin ? 'administrator' : levelOf(me, c.code)) },
              {
                header: 'Consoles',
                cell: (c) => {
                  if (!consoles.data) return <span className="muted">…</span>;
                  const mine = consoles.data.filter((x) => x.clientCode === c.code);
                  const failing = mine.filter((x) => x.poll?.polled && !x.poll.ok).length;
                  return (
                    <>
                      {mine.length} {failing > 0 && <span className="badge bad">{failing} not answering</span>}
                    </>
                  );
                },
              },
            ]}
          />
        )}
      </Loaded>
      <h2>Consoles</h2>
      <Loaded data={consoles.data} error={consoles.error} onRetry={consoles.refresh} loading="Loading the consoles and their last poll…">
        {(list) => <ConsolesTable consoles={list} />}
      </Loaded>
      {adding === 'client' && <ClientDialog onClose={() => setAdding(undefined)} onSaved={() => (setAdding(undefined), refresh())} />}
      {adding === 'console' && clients.data && <ConsoleDialog me={me} clients={clients.data} onClose={() => setAdding(undefined)} onSaved={() => (setAdding(undefined), refresh())} />}
    </section>
  );
}
