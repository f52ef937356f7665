import { useState } from 'react';
import { get } from '../api';
import { actionWords, requestTitle, STATE_WORDS } from '../approval-words';
import { useApprovalCount } from '../count';
import { ago, Busy, DataTable, Empty, ErrorText, Link, Loaded, useLoaded, useStepUp, when } from '../ui';
import { approve, approvedText, PasswordDialog, RejectDialog, type Request } from './decide';

// The approver's inbox and the operator's own requests: each request titled in words with its
// reason, ticket, requester and age; approve or reject in place (the step-up when the API asks);
// the count badges follow at once.

const VIEWS = [
  ['to_approve', 'To approve'],
  ['mine', 'Mine'],
  ['history', 'History'],
] as const;
type View = (typeof VIEWS)[number][0];

export function StateBadge({ r }: { r: Pick<Request, 'state' | 'outcome'> }) {
  const w = STATE_WORDS[r.state];
  return (
    <span className={w?.badge ?? 'badge'} data-state={r.state}>
      {w?.text ?? r.state}
      {r.outcome && r.state === 'executed' && r.outcome !== 'succeeded' ? ` (${r.outcome})` : ''}
    </span>
  );
}

export function ApprovalsPage() {
  const [view, setView] = useState<View>('to_approve');
  const { data, error, reload } = useLoaded(view, (v) => get<{ items: Request[] }>(`/api/approvals?view=${v}`));
  const { count, refresh } = useApprovalCount();
  const { withStepUp } = useStepUp();
  const [deciding, setDeciding] = useState<string>();
  const [decideError, setDecideError] = useState<unknown>();
  const [said, setSaid] = useState<string>();
  const [password, setPassword] = useState<{ target: string; value: string }>();
  const [rejecting, setRejecting] = useState<Request>();
  const changed = () => {
    reload();
    refresh();
  };
  const approveOne = async (r: Request) => {
    setDeciding(r.id);
    setDecideError(undefined);
    setSaid(undefined);
    try {
      const out = await withStepUp(() => approve(r.id));
      setSaid(approvedText(out));
      if (out.result?.password) setPassword({ target: r.target.name, value: out.result.password });
      changed();
    } catch (e) {
      setDecideError(e);
    } finally {
      setDeciding(undefined);
    }
  };
  const badge = (n?: number) =>
    n ? (
      <>
        <span className="count" aria-hidden="true">
          {n}
        </span>
        <span className="sr-only"> ({n} waiting)</span>
      </>
    ) : null;
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <div role="tablist" aria-label="Requests" className="tabs">
        {VIEWS.map(([v, label]) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} onClick={() => setView(v)}>
            {label}
            {v === 'to_approve' && badge(count?.toApprove)}
            {v === 'mine' && badge(count?.minePending)}
          </button>
        ))}
      </div>
      <div aria-live="polite">{said && <p className="ok" data-testid="decided">{said}</p>}</div>
      <ErrorText error={decideError} />
      <div role="tabpanel" aria-label={VIEWS.find((x) => x[0] === view)![1]}>
        <Loaded data={data} error={error} onRetry={reload} loading="Loading the requests…">
          {({ items }) => (
            <DataTable
              caption={VIEWS.find((x) => x[0] === view)![1]}
              testId="requests"
              rows={items}
              rowKey={(r) => r.id}
              rowTestId={(r) => `request-${r.id}`}
              empty={<Empty>{view === 'to_approve' ? 'Nothing waits for your approval.' : view === 'mine' ? 'You have filed no request.' : 'No decided request yet.'}</Empty>}
              columns={[
                { header: 'Request', cell: (r) => <Link to={`/approvals/${r.id}`}>{requestTitle(r)}</Link> },
                { header: 'Action', cell: (r) => actionWords(r.action) },
                { header: 'Reason', cell: (r) => <span className="pre-line">{r.reason}</span> },
                { header: 'Ticket', cell: (r) => r.ticket ?? <span className="muted">—</span> },
                view !== 'mine' && { header: 'Requested by', cell: (r) => r.requester.username },
                {
                  header: 'Age',
                  cell: (r) => (
                    <span title={`Filed ${when(r.createdAt)}; expires ${when(r.expiresAt)}`}>
                      {ago(r.createdAt)}
                      {r.state === 'pending' && Date.parse(r.expiresAt) - Date.now() < 86_400_000 && <span className="badge warn"> expires {ago(r.expiresAt)}</span>}
                    </span>
                  ),
                },
                { header: 'Approvals', cell: (r) => `${r.approvals.length}/${r.approvalsNeeded}` },
                view !== 'to_approve' && { header: 'State', cell: (r) => <StateBadge r={r} /> },
                view === 'to_approve' && {
                  header: <span className="sr-only">Decide</span>,
                  label: '',
                  cell: (r) => (
                    <div className="actions tight">
                      <Busy busy={deciding === r.id} disabled={!!deciding} onClick={() => void approveOne(r)}>
                        Approve<span className="sr-only"> {requestTitle(r)}</span>
                      </Busy>
                      <button type="button" className="secondary" disabled={!!deciding} onClick={() => setRejecting(r)}>
                        Reject<span className="sr-only"> {requestTitle(r)}</span>
                      </button>
                    </div>
                  ),
                },
              ]}
            />
          )}
        </Loaded>
      </div>
      {rejecting && (
        <RejectDialog
          request={rejecting}
          onClose={() => setRejecting(undefined)}
          onRejected={() => {
            setSaid(`${requestTitle(rejecting)}: rejected.`);
            setRejecting(undefined);
            changed();
          }}
        />
      )}
      {password && <PasswordDialog target={password.target} password={password.value} onClose={() => setPassword(undefined)} />}
    </section>
  );
}
