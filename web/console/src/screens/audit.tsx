import { useEffect, useState } from 'react';
import { get, qs } from '../api';
import { AUDIT_EVENTS, AUDIT_OUTCOMES, eventWords } from '../audit-words';
import { Busy, DataTable, Empty, ErrorState, ErrorText, Loading, useAction, when } from '../ui';

// The audit viewer: rows newest first, filtered with pickers (event, outcome and time from lists,
// actor and target suggested from what was seen), and the chain's verification.

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
const PERIODS: Array<[string, string, number]> = [
  ['', 'Any time', 0],
  ['1h', 'Last hour', 3600e3],
  ['24h', 'Last 24 hours', 86400e3],
  ['7d', 'Last 7 days', 7 * 86400e3],
  ['30d', 'Last 30 days', 30 * 86400e3],
  ['custom', 'Between two dates', 0],
];
interface Filters {
  event: string;
  outcome: string;
  actor: string;
  target: string;
  period: string;
  fromLocal: string;
  toLocal: string;
}
const NONE: Filters = { event: '', outcome: '', actor: '', target: '', period: '', fromLocal: '', toLocal: '' };

/** The API's query of the pickers' state (only its own names: it refuses one it does not know). */
function query(f: Filters): Record<string, string | undefined> {
  const span = PERIODS.find((p) => p[0] === f.period)?.[2] ?? 0;
  const from = f.period === 'custom' ? (f.fromLocal ? new Date(f.fromLocal).toISOString() : undefined) : span ? new Date(Date.now() - span).toISOString() : undefined;
  const to = f.period === 'custom' && f.toLocal ? new Date(f.toLocal).toISOString() : undefined;
  return { event: f.event || undefined, outcome: f.outcome || undefined, actor: f.actor.trim() || undefined, target: f.target.trim() || undefined, from, to };
}

export function AuditPage() {
  const [filters, setFilters] = useState<Filters>(NONE);
  const [applied, setApplied] = useState<Filters>(NONE);
  const [rows, setRows] = useState<Row[]>();
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [seen, setSeen] = useState<{ actors: Set<string>; targets: Set<string> }>({ actors: new Set(), targets: new Set() });
  const [verify, setVerify] = useState<Verify>();
  const v = useAction();
  const more = useAction();
  const load = async (f: Filters, after?: string) => {
    const r = await get<{ items: Row[]; cursor?: string }>(`/api/audit${qs({ ...query(f), cursor: after, limit: '50' })}`);
    setRows((old) => (after ? [...(old ?? []), ...r.items] : r.items));
    setCursor(r.cursor);
    setSeen((s) => ({ actors: new Set([...s.actors, ...r.items.map((x) => x.actor?.name).filter((x): x is string => !!x)]), targets: new Set([...s.targets, ...r.items.map((x) => x.target?.name).filter((x): x is string => !!x)]) }));
  };
  const [round, setRound] = useState(0);
  useEffect(() => {
    setLoading(true);
    setError(undefined);
    load(applied).then(
      () => setLoading(false),
      (e) => {
        setError(e);
        setLoading(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [applied, round]);
  const set = (k: keyof Filters, x: string) => setFilters({ ...filters, [k]: x });
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      <form
        className="filters"
        aria-label="Filter the audit"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ ...filters });
        }}
      >
        <label>
          Event
          <select name="filter-event" value={filters.event} onChange={(e) => set('event', e.target.value)}>
            <option value="">Any event</option>
            {AUDIT_EVENTS.map(([code, words]) => (
              <option key={code} value={code}>
                {words} ({code})
              </option>
            ))}
          </select>
        </label>
        <label>
          Outcome
          <select name="filter-outcome" value={filters.outcome} onChange={(e) => set('outcome', e.target.value)}>
            <option value="">Any outcome</option>
            {AUDIT_OUTCOMES.map(([code, words]) => (
              <option key={code} value={code}>
                {words}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <input name="filter-actor" list="audit-actors" autoComplete="off" placeholder="Login" value={filters.actor} onChange={(e) => set('actor', e.target.value)} />
        </label>
        <datalist id="audit-actors">
          {[...seen.actors].sort().map((x) => (
            <option key={x} value={x} />
          ))}
        </datalist>
        <label>
          Target
          <input name="filter-target" list="audit-targets" autoComplete="off" placeholder="Name or id" value={filters.target} onChange={(e) => set('target', e.target.value)} />
        </label>
        <datalist id="audit-targets">
          {[...seen.targets].sort().map((x) => (
            <option key={x} value={x} />
          ))}
        </datalist>
        <label>
          Time
          <select name="filter-period" value={filters.period} onChange={(e) => set('period', e.target.value)}>
            {PERIODS.map(([k, words]) => (
              <option key={k} value={k}>
                {words}
              </option>
            ))}
          </select>
        </label>
        {filters.period === 'custom' && (
          <>
            <label>
              From
              <input type="datetime-local" name="filter-from" value={filters.fromLocal} onChange={(e) => set('fromLocal', e.target.value)} />
            </label>
            <label>
              To
              <input type="datetime-local" name="filter-to" value={filters.toLocal} onChange={(e) => set('toLocal', e.target.value)} />
            </label>
          </>
        )}
        <div className="actions tight">
          <Busy type="submit" busy={loading}>
            Filter
          </Busy>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setFilters(NONE);
              setApplied(NONE);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {loading ? (
        <Loading label="Reading the audit…" />
      ) : error ? (
        <ErrorState error={error} onRetry={() => setRound((r) => r + 1)} />
      ) : (
        rows && (
          <DataTable
            caption="Audit rows, newest first"
            className="audit"
            rows={rows}
            rowKey={(r) => String(r.seq)}
            empty={<Empty>No row matches{cursor ? ' in this stretch: load more to look further back' : ''}.</Empty>}
            columns={[
              { header: '#', cell: (r) => r.seq },
              { header: 'Time', cell: (r) => when(r.at), className: 'when' },
              { header: 'Event', cell: (r) => <span title={eventWords(r.event)}>{r.event}</span> },
              { header: 'Outcome', cell: (r) => r.outcome },
              { header: 'Actor', cell: (r) => r.actor?.name ?? '—' },
              { header: 'Target', cell: (r) => r.target?.name ?? r.target?.id ?? '—' },
              { header: 'Reason / ticket', cell: (r) => [r.reason, r.ticket && `ticket ${r.ticket}`].filter(Boolean).join(' · ') },
            ]}
          />
        )
      )}
      {cursor && !loading && (
        <Busy className="secondary" busy={more.busy} onClick={() => void more.run(() => load(applied, cursor))}>
          Load older rows
        </Busy>
      )}
      <ErrorText error={more.error} />
      <h2>Chain of custody</h2>
      <div className="verify">
        <Busy className="secondary" busy={v.busy} onClick={async () => setVerify(await v.run(() => get<Verify>('/api/audit/verify')))}>
          Verify the chain
        </Busy>
        {verify && (
          <p role="status" data-testid="verify-result" className={verify.ok ? 'ok' : 'error'}>
            {verify.ok
              ? `The chain verifies (${verify.checked} recent rows checked now${verify.full?.last ? `; last full walk ${verify.full.last.ok ? 'verified' : 'FAILED'} ${when(verify.full.last.completedAt)}` : ''}).`
              : `The chain is broken at row ${verify.firstBadSeq} (${verify.problem}).`}
          </p>
        )}
        <ErrorText error={v.error} />
      </div>
    </section>
  );
}
