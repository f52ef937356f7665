import { useEffect, useState } from 'react';
import { get, qs } from './api';
import { ErrorText, useAction, when } from './ui';

interface Row {
  seq: number;
  at: string;
  event: string;
  outcome: string;
  reason?: string;
  ticket?: string;
  actor?: { name?: string; ip?: string };
  target?: { name?: string; id?: string; kind?: string };
  correlationId?: string;
  details?: Record<string, unknown>;
}
interface Verify {
  ok: boolean;
  checked: number;
  firstBadSeq?: number;
  problem?: string;
  full?: { last?: { ok: boolean; checked: number; completedAt: string }; running?: unknown };
}
const FILTERS = ['event', 'actor', 'target', 'outcome'] as const;

export function AuditPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [applied, setApplied] = useState<Record<string, string>>({});
  const [rows, setRows] = useState<Row[]>();
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [verify, setVerify] = useState<Verify>();
  const v = useAction();
  const load = async (f: Record<string, string>, after?: string) => {
    try {
      const r = await get<{ items: Row[]; cursor?: string }>(`/api/audit${qs({ ...f, cursor: after, limit: '50' })}`);
      setRows((old) => (after ? [...(old ?? []), ...r.items] : r.items));
      setCursor(r.cursor);
      setError(undefined);
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    void load(applied);
  }, [applied]);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      <div className="verify">
        <button type="button" onClick={async () => setVerify(await v.run(() => get<Verify>('/api/audit/verify')))} disabled={v.busy}>
          Verify the chain
        </button>
        {verify && (
          <p role="status" data-testid="verify-result" className={verify.ok ? 'ok' : 'error'}>
            {verify.ok
              ? `The chain verifies (${verify.checked} recent rows checked now${verify.full?.last ? `; last full walk ${verify.full.last.ok ? 'verified' : 'FAILED'} ${when(verify.full.last.completedAt)}` : ''}).`
              : `The chain is broken at row ${verify.firstBadSeq} (${verify.problem}).`}
          </p>
        )}
        <ErrorText error={v.error} />
      </div>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          // the API refuses a filter it does not know: only its own names leave the form
          setApplied(Object.fromEntries(Object.entries(filters).filter(([k, x]) => !k.endsWith('Local') && x.trim())));
        }}
      >
        {FILTERS.map((k) => (
          <label key={k}>
            {k[0].toUpperCase() + k.slice(1)}
            <input name={`filter-${k}`} value={filters[k] ?? ''} onChange={(e) => setFilters({ ...filters, [k]: e.target.value })} />
          </label>
        ))}
        <label>
          From
          <input type="datetime-local" name="filter-from" value={filters.fromLocal ?? ''} onChange={(e) => setFilters({ ...filters, fromLocal: e.target.value, from: e.target.value ? new Date(e.target.value).toISOString() : '' })} />
        </label>
        <label>
          To
          <input type="datetime-local" name="filter-to" value={filters.toLocal ?? ''} onChange={(e) => setFilters({ ...filters, toLocal: e.target.value, to: e.target.value ? new Date(e.target.value).toISOString() : '' })} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorText error={error} />
      {rows && (
        <table className="audit">
          <caption className="sr-only">Audit rows, newest first</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Outcome</th>
              <th scope="col">Actor</th>
              <th scope="col">Target</th>
              <th scope="col">Reason / ticket</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.seq}>
                <td>{r.seq}</td>
                <td>{when(r.at)}</td>
                <td>{r.event}</td>
                <td>{r.outcome}</td>
                <td>{r.actor?.name ?? '—'}</td>
                <td>{r.target?.name ?? r.target?.id ?? '—'}</td>
                <td>{[r.reason, r.ticket && `ticket ${r.ticket}`].filter(Boolean).join(' · ')}</td>
              </tr>
            ))}
            {rows.length === 0 && (
              <tr>
                <td colSpan={7}>No row matches{cursor ? ' in this stretch: load more to look further back' : ''}.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" className="secondary" onClick={() => load(applied, cursor)}>
          Load older rows
        </button>
      )}
    </section>
  );
}
