import { useState } from 'react';
import type { Me } from '../api';
import { DataTable, Empty, Link, when } from '../../../shared/ui';
import { kindWords, type Alert, type Delivery, type HistoryEntry } from './alert-model';

// The last 200 transitions, filtered by event, rule, client and text (issue 29: the history can
// be filtered); administrators see each channel's delivery result.

export function AlertLink({ a }: { a: Pick<Alert, 'link' | 'subject'> }) {
  return a.link && a.link !== '/' ? <Link to={a.link}>{a.subject}</Link> : <>{a.subject}</>;
}

const deliveryText = (d: Delivery) => `${d.name}: ${d.ok ? `delivered${d.status ? ` (${d.status})` : ''}` : `failed (${d.error ?? 'error'}${d.status ? ` ${d.status}` : ''})`}`;
const EVENT_WORDS: Record<string, string> = { fired: 'Fired', resolved: 'Resolved', test: 'Test' };

export function AlertHistory({ me, history }: { me: Me; history: HistoryEntry[] }) {
  const [event, setEvent] = useState('');
  const [kind, setKind] = useState('');
  const [client, setClient] = useState('');
  const [text, setText] = useState('');
  const kinds = [...new Set(history.map((h) => h.alert?.kind).filter((k): k is string => !!k))].sort();
  const clients = [...new Set(history.map((h) => h.alert?.clientCode).filter((c): c is string => !!c))].sort();
  const t = text.trim().toLowerCase();
  const rows = history.filter(
    (h) =>
      (!event || h.event === event || (event === 'quiet' && !!h.quiet)) &&
      (!kind || h.alert?.kind === kind) &&
      (!client || h.alert?.clientCode === client) &&
      (!t || `${h.alert?.subject ?? 'test notification'} ${h.alert?.key ?? ''}`.toLowerCase().includes(t)),
  );
  return (
    <>
      <h2>History</h2>
      <form className="filters" aria-label="Filter the history" onSubmit={(e) => e.preventDefault()}>
        <label>
          Event
          <select name="history-event" value={event} onChange={(e) => setEvent(e.target.value)}>
            <option value="">Every event</option>
            <option value="fired">Fired</option>
            <option value="resolved">Resolved</option>
            <option value="quiet">Not notified (silenced or acknowledged)</option>
            {me.admin && <option value="test">Test sends</option>}
          </select>
        </label>
        <label>
          Rule
          <select name="history-kind" value={kind} onChange={(e) => setKind(e.target.value)}>
            <option value="">Every rule</option>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {kindWords(k)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Client
          <select name="history-client" value={client} onChange={(e) => setClient(e.target.value)}>
            <option value="">Every client</option>
            {clients.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Text
          <input type="search" name="history-text" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
      </form>
      <DataTable
        caption="Alert history, newest first"
        testId="alerts-history"
        rows={rows}
        rowKey={(h) => h.id}
        empty={<Empty>{history.length ? 'No entry matches these filters.' : 'Nothing yet.'}</Empty>}
        columns={[
          { header: 'Time', cell: (h) => when(h.at), className: 'when' },
          {
            header: 'Event',
            cell: (h) => (
              <>
                {EVENT_WORDS[h.event] ?? h.event}
                {h.quiet && <span className="badge"> {h.quiet === 'silenced' ? 'silenced' : 'acknowledged'}: not notified</span>}
              </>
            ),
          },
          { header: 'Alert', cell: (h) => (h.alert ? <AlertLink a={h.alert} /> : 'Test notification') },
          { header: 'Client', cell: (h) => h.alert?.clientCode ?? '—' },
          me.admin && { header: 'Deliveries', cell: (h) => h.deliveries?.map(deliveryText).join('; ') || '—' },
        ]}
      />
    </>
  );
}
