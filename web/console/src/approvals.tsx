import { useEffect, useState } from 'react';
import { get, post, type Me } from './api';
import { ErrorText, Link, Modal, SecretView, useAction, useLoaded, useStepUp, when } from './ui';

interface Request {
  id: string;
  kind: string;
  action: string;
  state: 'pending' | 'executed' | 'rejected' | 'cancelled' | 'expired';
  reason: string;
  ticket?: string;
  target: { id: string; kind: string; name: string };
  parameters: Record<string, unknown>;
  requester: { guid: string; username: string };
  approvalsNeeded: number;
  approvals: Array<{ username: string; at: string }>;
  createdAt: string;
  expiresAt: string;
  closedAt?: string;
  closedBy?: { username: string };
  comment?: string;
  outcome?: string;
  executing?: boolean;
  /** bulk and leaver requests: the job's progress once it runs */
  job?: JobProgress;
}

interface JobProgress {
  state: 'running' | 'done';
  total: number;
  done: number;
  counts: Record<string, number>;
}

const progressText = (j: JobProgress) =>
  `${j.done}/${j.total} ${j.state === 'done' ? 'done' : 'so far'}${Object.keys(j.counts).length ? ` (${Object.entries(j.counts).map(([k, n]) => `${n} ${k}`).join(', ')})` : ''}`;

const VIEWS = [
  ['to_approve', 'To approve'],
  ['mine', 'Mine'],
  ['history', 'History'],
] as const;

export function ApprovalsPage() {
  const [view, setView] = useState<(typeof VIEWS)[number][0]>('to_approve');
  const { data, error } = useLoaded(view, (v) => get<{ items: Request[] }>(`/api/approvals?view=${v}`));
  const items = data?.items;
  const [count, setCount] = useState<{ toApprove: number; minePending: number }>();
  useEffect(() => {
    get<{ toApprove: number; minePending: number }>('/api/approvals/count').then(setCount, () => undefined);
  }, [view]);
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <div role="tablist" aria-label="Requests" className="tabs">
        {VIEWS.map(([v, label]) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} onClick={() => setView(v)}>
            {label}
            {v === 'to_approve' && !!count?.toApprove && <span className="count"> {count.toApprove}</span>}
            {v === 'mine' && !!count?.minePending && <span className="count"> {count.minePending}</span>}
          </button>
        ))}
      </div>
      <ErrorText error={error} />
      {items && (
        <table role="tabpanel">
          <caption className="sr-only">{VIEWS.find((x) => x[0] === view)![1]}</caption>
          <thead>
            <tr>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Requester</th>
              <th scope="col">State</th>
              <th scope="col">Approvals</th>
              <th scope="col">Filed</th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link to={`/approvals/${r.id}`}>{r.action}</Link>
                </td>
                <td>{r.target.name}</td>
                <td>{r.requester.username}</td>
                <td>{r.state}</td>
                <td>
                  {r.approvals.length}/{r.approvalsNeeded}
                </td>
                <td>{when(r.createdAt)}</td>
              </tr>
            ))}
            {items.length === 0 && (
              <tr>
                <td colSpan={6}>Nothing here.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function ApprovalPage({ id, me }: { id: string; me: Me }) {
  const [r, setR] = useState<Request>();
  const [error, setError] = useState<unknown>();
  const [password, setPassword] = useState<string>();
  const [result, setResult] = useState<string>();
  const [rejecting, setRejecting] = useState(false);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const load = () => get<Request>(`/api/approvals/${encodeURIComponent(id)}`).then(setR, setError);
  useEffect(() => {
    void load();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);
  if (error) return <ErrorText error={error} />;
  if (!r) return <p aria-busy="true">Loading…</p>;
  const mine = r.requester.username.toLowerCase() === me.username.toLowerCase();
  const approve = async () => {
    const out = await a.run(() => withStepUp(() => post<{ request: Request; result?: { outcome: string; password?: string; code?: string }; job?: JobProgress }>(`/api/approvals/${encodeURIComponent(id)}/approve`)));
    if (!out) return;
    setR(out.job ? { ...out.request, job: out.job } : out.request);
    if (out.result?.password) setPassword(out.result.password);
    if (out.result) setResult(`Executed: ${out.result.outcome}${out.result.code ? ` (${out.result.code})` : ''}.`);
    else if (out.job) setResult(out.job.state === 'done' ? `Executed: ${out.request.outcome ?? ''}.` : `Job running: ${progressText(out.job)}. It goes on by itself; reload to follow it.`);
    else setResult(`Approved (${out.request.approvals.length}/${out.request.approvalsNeeded}): waiting for another approver.`);
  };
  const cancel = async () => {
    const out = await a.run(() => post<{ request?: Request } & Request>(`/api/approvals/${encodeURIComponent(id)}/cancel`));
    if (out) void load();
  };
  return (
    <section aria-labelledby="request-title">
      <p>
        <Link to="/approvals">← Approvals</Link>
      </p>
      <h1 id="request-title">
        {r.action} — {r.target.name}
      </h1>
      <dl className="facts">
        <dt>State</dt>
        <dd data-testid="request-state">
          {r.state}
          {r.outcome ? ` (${r.outcome})` : ''}
        </dd>
        {r.job && (
          <>
            <dt>Job</dt>
            <dd data-testid="request-job">{progressText(r.job)}</dd>
          </>
        )}
        <dt>Requested by</dt>
        <dd>{r.requester.username}</dd>
        <dt>Reason</dt>
        <dd>{r.reason}</dd>
        <dt>Ticket</dt>
        <dd>{r.ticket ?? '—'}</dd>
        <dt>Approvals</dt>
        <dd data-testid="request-approvals">
          {r.approvals.length}/{r.approvalsNeeded} {r.approvals.map((x) => x.username).join(', ')}
        </dd>
        <dt>Filed</dt>
        <dd>{when(r.createdAt)}</dd>
        <dt>Expires</dt>
        <dd>{when(r.expiresAt)}</dd>
        {r.closedBy && (
          <>
            <dt>Closed by</dt>
            <dd>
              {r.closedBy.username} {when(r.closedAt)}
            </dd>
          </>
        )}
        {r.comment && (
          <>
            <dt>Comment</dt>
            <dd>{r.comment}</dd>
          </>
        )}
      </dl>
      {result && <p role="status">{result}</p>}
      {password && (
        <Modal title={`New password for ${r.target.name}`} onClose={() => setPassword(undefined)}>
          <SecretView label="Shown once to you, the approver who executed the reset" value={password} onExpired={() => setPassword(undefined)} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setPassword(undefined)}>
              Close
            </button>
          </div>
        </Modal>
      )}
      <ErrorText error={a.error} />
      {r.state === 'pending' && (
        <div className="actions">
          {!mine && (
            <>
              <button type="button" onClick={approve} disabled={a.busy}>
                Approve
              </button>
              <button type="button" className="secondary" onClick={() => setRejecting(true)}>
                Reject
              </button>
            </>
          )}
          {mine && (
            <button type="button" className="secondary" onClick={cancel} disabled={a.busy}>
              Cancel request
            </button>
          )}
        </div>
      )}
      {rejecting && (
        <RejectDialog
          id={id}
          onClose={() => {
            setRejecting(false);
            void load();
          }}
        />
      )}
    </section>
  );
}

function RejectDialog({ id, onClose }: { id: string; onClose: () => void }) {
  const [comment, setComment] = useState('');
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (await a.run(() => post(`/api/approvals/${encodeURIComponent(id)}/reject`, { comment: comment.trim() }))) onClose();
  };
  return (
    <Modal title="Reject the request" onClose={onClose}>
      <form onSubmit={submit}>
        <label>
          Comment
          <textarea name="comment" required maxLength={1000} value={comment} onChange={(e) => setComment(e.target.value)} />
        </label>
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Reject
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
