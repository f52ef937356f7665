import { useState } from 'react';
import { get, qs, type Me } from '../api';
import { usePolled } from '../poll';
import { Busy, DataTable, Empty, ErrorText, Loaded, useAction, when } from '../../../shared/ui';

// The fleet's audit: entries filed under the caller's clients and his own actions (administrators:
// everything, and the chain's verification).

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
  const { data, error, refresh } = usePolled(() => get<{ entries: AuditEntry[] }>(`/api/audit${qs({ limit: '50' })}`), []);
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
          <Busy className="secondary" busy={verify.busy} onClick={async () => setResult(await verify.run(() => get('/api/audit/verify')))}>
            Verify the chain
          </Busy>
          {result && (
            <p role="status" data-testid="verify-result" className={result.ok ? 'ok' : 'error'}>
              {result.ok ? `The chain verifies (${result.checked} rows checked).` : `The chain is broken at row ${result.firstBadSeq} (${result.problem}).`}
            </p>
          )}
          <ErrorText error={verify.error} />
        </div>
      )}
      {!me.admin && <p className="hint">Entries filed under your clients, and your own actions (from the newest 5 000).</p>}
      <Loaded data={data} error={error} onRetry={refresh} loading="Reading the audit…">
        {() => (
          <DataTable
            caption="Audit entries, newest first"
            testId="audit"
            rows={rows}
            rowKey={(r) => String(r.seq)}
            empty={<Empty>No entry.</Empty>}
            columns={[
              { header: '#', cell: (r) => r.seq },
              { header: 'Time', cell: (r) => when(r.at), className: 'when' },
              { header: 'Event', cell: (r) => r.event },
              { header: 'Outcome', cell: (r) => `${r.outcome}${r.reason ? ` (${r.reason})` : ''}` },
              { header: 'Actor', cell: (r) => r.actor?.name ?? '—' },
              { header: 'Target', cell: (r) => r.target?.name ?? r.target?.id ?? '—' },
              { header: 'Client', cell: (r) => r.client ?? '—' },
            ]}
          />
        )}
      </Loaded>
      {last && last.seq > 1 && (
        <Busy
          className="secondary"
          busy={more.busy}
          onClick={async () => {
            const r = await more.run(() => get<{ entries: AuditEntry[] }>(`/api/audit${qs({ limit: '50', beforeSeq: String(last.seq) })}`));
            if (r) setOlder((o) => [...o, ...r.entries]);
          }}
        >
          Load older entries
        </Busy>
      )}
    </section>
  );
}

