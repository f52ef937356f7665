import { useState } from 'react';
import { del, get, levelOf, type Me } from '../api';
import { usePolled } from '../poll';
import { ago, DataTable, Empty, ErrorText, Link, Loaded, useAction, useConfirm, when } from '../../../shared/ui';
import { AcknowledgeDialog, SilenceDialog, type SilenceTarget } from './alert-actions';
import { kindWords, silenceWhat, type Alert, type AlertGroup, type AlertsView } from './alert-model';
import { AlertHistory, AlertLink } from './alert-history';
import { hostOf, loadConsoles } from './consoles';

// Alerts you can act on (issue 29): the active ones grouped by rule and client with their counts,
// each alert acknowledged or silenced in place by the operators of its client; the silences in
// force; the history, filtered. The page draws at once and refreshes in place (30 s).

function AlertClient({ a }: { a: Pick<Alert, 'clientCode' | 'kind' | 'key' | 'params'> }) {
  if (a.clientCode) return <Link to={`/clients/${a.clientCode}`}>{a.clientCode}</Link>;
  const served = Array.isArray(a.params?.clientCodes) ? (a.params.clientCodes as unknown[]).filter((c): c is string => typeof c === 'string') : [];
  if (served.length) return <>{served.join(', ')}</>;
  if (a.kind.startsWith('identity') || a.key === 'access:cert') return <>fleet plane</>;
  return <span className="muted">no client</span>;
}

export function AlertsPage({ me }: { me: Me }) {
  const { data, error, refresh, loading } = usePolled(() => get<AlertsView>('/api/alerts'), []);
  const consoles = usePolled(() => loadConsoles().catch(() => []), []);
  const [acking, setAcking] = useState<Alert>();
  const [silencing, setSilencing] = useState<SilenceTarget>();
  const [said, setSaid] = useState<string>();
  const [clientFilter, setClientFilter] = useState('');
  const ending = useAction();
  const confirm = useConfirm();
  const host = (id: string) => {
    const c = consoles.data?.find((x) => x.id === id);
    return c ? hostOf(c.url) : undefined;
  };
  // operators of an alert's client act on it; alerts without a client, and rules across clients: administrators
  const mayAct = (clientCode?: string | null) => me.admin || (!!clientCode && levelOf(me, clientCode) === 'operator');
  const done = (text: string) => {
    setAcking(undefined);
    setSilencing(undefined);
    setSaid(text);
    void refresh();
  };
  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <div aria-live="polite">{said && <p className="ok" data-testid="alert-said">{said}</p>}</div>
      <ErrorText error={ending.error} />
      <Loaded data={data} error={error} onRetry={refresh} loading="Loading the alerts…">
        {(v) => {
          const clients = [...new Set(v.active.map((a) => a.clientCode).filter((c): c is string => !!c))].sort();
          const groups = v.groups.filter((g) => !clientFilter || g.clientCode === clientFilter);
          const alertsOf = (g: AlertGroup) => v.active.filter((a) => g.keys.includes(a.key));
          return (
            <>
              <p className="muted">
                Last evaluation: {when(v.lastEvaluationAt)}
                {loading ? ' · refreshing…' : ''}
              </p>
              <h2>
                Active ({v.active.length} in {v.groups.length} group{v.groups.length === 1 ? '' : 's'})
              </h2>
              {clients.length > 1 && (
                <div className="filters">
                  <label>
                    Client
                    <select name="alerts-client" value={clientFilter} onChange={(e) => setClientFilter(e.target.value)}>
                      <option value="">Every client</option>
                      {clients.map((c) => (
                        <option key={c} value={c}>
                          {c}
                        </option>
                      ))}
                    </select>
                  </label>
                </div>
              )}
              <DataTable
                caption="Active alerts, grouped by rule and client"
                testId="alerts-active"
                rows={groups}
                rowKey={(g) => g.id}
                rowTestId={(g) => `group-${g.kind}-${g.clientCode ?? 'none'}`}
                empty={<Empty>No active alert.</Empty>}
                columns={[
                  { header: 'Severity', cell: (g) => <span className={`badge ${g.severity === 'critical' ? 'bad' : 'warn'}`}>{g.severity}</span> },
                  {
                    header: 'Rule',
                    cell: (g) => (
                      <>
                        {g.label} <code className="muted">{g.kind}</code>
                      </>
                    ),
                  },
                  { header: 'Client', cell: (g) => <AlertClient a={{ clientCode: g.clientCode ?? undefined, kind: g.kind, key: g.keys[0], params: alertsOf(g)[0]?.params }} /> },
                  {
                    header: 'Alerts',
                    cell: (g) => (
                      <details open={g.count === 1 || undefined}>
                        <summary>
                          {g.count} alert{g.count === 1 ? '' : 's'}
                          {g.acknowledged ? `, ${g.acknowledged} acknowledged` : ''}
                          {g.silenced ? `, ${g.silenced} silenced` : ''}
                        </summary>
                        <ul className="plain alerts">
                          {alertsOf(g).map((a) => (
                            <li key={a.key} data-testid={`alert-${a.key}`}>
                              <AlertLink a={a} /> <span className="muted">since {ago(a.firedAt)}</span>
                              {a.acknowledged && (
                                <p className="hint">
                                  Acknowledged by {a.acknowledged.by} {ago(a.acknowledged.at)}: {a.acknowledged.comment}
                                </p>
                              )}
                              {a.silencedBy && <p className="hint">Silenced: no notification.</p>}
                              {mayAct(a.clientCode) && (
                                <div className="actions tight">
                                  {!a.acknowledged && (
                                    <button type="button" className="secondary" onClick={() => setAcking(a)}>
                                      Acknowledge<span className="sr-only"> {a.subject}</span>
                                    </button>
                                  )}
                                  {a.consoleId && !a.silencedBy && (
                                    <button type="button" className="secondary" onClick={() => setSilencing({ consoleId: a.consoleId, label: `console ${host(a.consoleId!) ?? a.subject}` })}>
                                      Silence this console<span className="sr-only"> ({a.subject})</span>
                                    </button>
                                  )}
                                </div>
                              )}
                            </li>
                          ))}
                        </ul>
                      </details>
                    ),
                  },
                  { header: 'Last fired', cell: (g) => <span title={when(g.lastFiredAt)}>{ago(g.lastFiredAt)}</span> },
                  {
                    header: <span className="sr-only">Silence</span>,
                    label: '',
                    cell: (g) =>
                      (g.clientCode ? mayAct(g.clientCode) : me.admin) && (
                        <button type="button" className="secondary" onClick={() => setSilencing({ kind: g.kind, ...(g.clientCode ? { clientCode: g.clientCode } : {}), label: `${kindWords(g.kind)}${g.clientCode ? ` of ${g.clientCode}` : ''}` })}>
                          Silence<span className="sr-only"> {g.label}{g.clientCode ? ` of ${g.clientCode}` : ''}</span>
                        </button>
                      ),
                  },
                ]}
              />
              <h2>Silences in force ({v.silences.length})</h2>
              <DataTable
                caption="Silences in force"
                testId="silences"
                rows={v.silences}
                rowKey={(s) => s.id}
                empty={<Empty>No silence: every alert is notified.</Empty>}
                columns={[
                  { header: 'Silenced', cell: (s) => silenceWhat(s, host) },
                  { header: 'Until', cell: (s) => <span title={when(s.endsAt)}>{when(s.endsAt)} ({ago(s.endsAt)})</span> },
                  { header: 'By', cell: (s) => `${s.createdBy}, ${ago(s.createdAt)}` },
                  { header: 'Why', cell: (s) => s.comment },
                  {
                    header: <span className="sr-only">End</span>,
                    label: '',
                    cell: (s) =>
                      (s.clientCode ? mayAct(s.clientCode) : me.admin) && (
                        <button
                          type="button"
                          className="secondary"
                          disabled={ending.busy}
                          onClick={async () => {
                            if (!(await confirm({ title: 'End this silence now?', body: <p>{silenceWhat(s, host)}: alerts it holds back that still hold are notified at the next round.</p>, confirm: 'End the silence' }))) return;
                            if ((await ending.run(() => del(`/api/alerts/silences/${s.id}`))) !== undefined) done('The silence ended.');
                          }}
                        >
                          End now<span className="sr-only"> ({silenceWhat(s, host)})</span>
                        </button>
                      ),
                  },
                ]}
              />
              <AlertHistory me={me} history={v.history} />
            </>
          );
        }}
      </Loaded>
      {acking && <AcknowledgeDialog alert={acking} onClose={() => setAcking(undefined)} onDone={() => done(`Acknowledged: ${acking.subject}.`)} />}
      {silencing && <SilenceDialog target={silencing} onClose={() => setSilencing(undefined)} onDone={() => done(`Silenced: ${silencing.label}.`)} />}
    </section>
  );
}
