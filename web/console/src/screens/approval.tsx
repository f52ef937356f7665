import { useState } from 'react';
import { downloadPost, get, post, type Me } from '../api';
import { actionWords, durationWords, requestTitle, timeLeft } from '../approval-words';
import { useApprovalCount } from '../count';
import { Busy, ErrorText, Link, Loaded, useAction, useLoaded, useStepUp, when } from '../ui';
import { StateBadge } from './approvals';
import { approve, approvedText, PasswordDialog, progressText, RejectDialog, type Request } from './decide';

// One request, as an approver opens it from a notification (often on a phone): what is asked,
// by whom, why, who approved it already; approve or reject; the requester may cancel it.

export function ApprovalPage({ id, me }: { id: string; me: Me }) {
  const { data, error, reload } = useLoaded(id, (x) => get<Request>(`/api/approvals/${encodeURIComponent(x)}`));
  const [shown, setShown] = useState<Request>();
  const [password, setPassword] = useState<string>();
  const [result, setResult] = useState<string>();
  const [rejecting, setRejecting] = useState(false);
  const { withStepUp } = useStepUp();
  const { refresh } = useApprovalCount();
  const a = useAction();
  const r0 = shown?.id === id ? shown : data;
  return (
    <section aria-labelledby="request-title">
      <p>
        <Link to="/approvals">← Approvals</Link>
      </p>
      <Loaded data={r0} error={error} onRetry={reload} loading="Loading the request…">
        {(r) => {
          const mine = r.requester.username.toLowerCase() === me.username.toLowerCase();
          const doApprove = async () => {
            const out = await a.run(() => withStepUp(() => approve(id)));
            if (!out) return;
            setShown(out.job ? { ...out.request, job: out.job } : out.request);
            if (out.result?.password) setPassword(out.result.password);
            setResult(approvedText(out));
            refresh();
          };
          // a bulk reset, approved by me: my one download runs it (the passwords go to the file only)
          const mayDownload = r.state === 'pending' && !!r.download && !r.download.takenAt && r.download.by.username.toLowerCase() === me.username.toLowerCase();
          const doDownload = async () => {
            const name = await a.run(() => withStepUp(() => downloadPost(`/api/approvals/${encodeURIComponent(id)}/passwords`, `passwords-${id}.csv`)));
            if (!name) return;
            setShown(undefined);
            setResult(`${requestTitle(r)}: done. The passwords are in ${name}, and nowhere else: hand them over, then delete the file.`);
            reload();
            refresh();
          };
          const cancel = async () => {
            if (await a.run(() => post(`/api/approvals/${encodeURIComponent(id)}/cancel`))) {
              setShown(undefined);
              reload();
              refresh();
            }
          };
          return (
            <>
              <h1 id="request-title">{requestTitle(r)}</h1>
              <dl className="facts">
                <dt>State</dt>
                <dd data-testid="request-state">
                  <StateBadge r={r} />
                </dd>
                {r.job && (
                  <>
                    <dt>Job</dt>
                    <dd data-testid="request-job">{progressText(r.job)}</dd>
                  </>
                )}
                <dt>Action</dt>
                <dd>{actionWords(r.action)}</dd>
                <dt>Requested by</dt>
                <dd>{r.requester.username}</dd>
                {r.action === 'groups.members.add.temporary' && (
                  <>
                    <dt>Duration</dt>
                    <dd data-testid="request-duration">{durationWords(Number(r.parameters.durationMinutes) || 0)}</dd>
                    {r.temporary && (
                      <>
                        <dt>Membership</dt>
                        <dd data-testid="request-membership">
                          {r.temporary.state === 'active'
                            ? `${r.temporary.member.name} is a member until ${when(r.temporary.expiresAt)} (${timeLeft(r.temporary.expiresAt)})`
                            : `ended ${when(r.temporary.ended?.at)} (${r.temporary.ended?.how === 'expired' ? 'time was up' : r.temporary.ended?.how === 'ended_early' ? 'ended early' : 'removed by hand'})`}
                        </dd>
                      </>
                    )}
                  </>
                )}
                <dt>Reason</dt>
                <dd className="pre-line">{r.reason}</dd>
                <dt>Ticket</dt>
                <dd>{r.ticket ?? '—'}</dd>
                <dt>Approvals</dt>
                <dd data-testid="request-approvals">
                  {r.approvals.length}/{r.approvalsNeeded}
                  {r.approvals.length > 0 && (
                    <ul className="plain">
                      {r.approvals.map((x) => (
                        <li key={x.username}>
                          {x.username}, {when(x.at)}
                        </li>
                      ))}
                    </ul>
                  )}
                </dd>
                <dt>Filed</dt>
                <dd>{when(r.createdAt)}</dd>
                <dt>Expires</dt>
                <dd>{when(r.expiresAt)}</dd>
                {r.download && (
                  <>
                    <dt>Passwords</dt>
                    <dd data-testid="request-download">{r.download.takenAt ? `downloaded by ${r.download.by.username}, ${when(r.download.takenAt)}` : `to download once by ${r.download.by.username}, until ${when(r.download.until)}`}</dd>
                  </>
                )}
                {r.closedBy && (
                  <>
                    <dt>Closed by</dt>
                    <dd>
                      {r.closedBy.username}, {when(r.closedAt)}
                    </dd>
                  </>
                )}
                {r.comment && (
                  <>
                    <dt>Comment</dt>
                    <dd className="pre-line">{r.comment}</dd>
                  </>
                )}
              </dl>
              <div aria-live="polite">{result && <p role="status">{result}</p>}</div>
              <ErrorText error={a.error} />
              {mayDownload && (
                <div className="actions">
                  <Busy busy={a.busy} onClick={() => void doDownload()}>
                    Reset and download the passwords
                  </Busy>
                  <span className="hint">Once only: each password is generated as the file is written, and kept nowhere.</span>
                </div>
              )}
              {r.state === 'pending' && !r.download && (
                <div className="actions">
                  {!mine && (
                    <>
                      <Busy busy={a.busy} onClick={() => void doApprove()}>
                        Approve
                      </Busy>
                      <button type="button" className="secondary" disabled={a.busy} onClick={() => setRejecting(true)}>
                        Reject
                      </button>
                    </>
                  )}
                  {mine && (
                    <Busy className="secondary" busy={a.busy} onClick={() => void cancel()}>
                      Cancel request
                    </Busy>
                  )}
                </div>
              )}
              {password && <PasswordDialog target={r.target.name} password={password} onClose={() => setPassword(undefined)} />}
              {rejecting && (
                <RejectDialog
                  request={r}
                  onClose={() => setRejecting(false)}
                  onRejected={() => {
                    setRejecting(false);
                    setShown(undefined);
                    setResult(`${requestTitle(r)}: rejected.`);
                    reload();
                    refresh();
                  }}
                />
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
