import { useState } from 'react';
import { post } from '../api';
import { requestTitle } from '../approval-words';
import { Busy, ErrorText, Modal, SecretView, useAction } from '../ui';

// Deciding a request, from its page or from the inbox: approve (the step-up when the API asks),
// reject with a comment; the generated password of an executed reset shown once to the approver.

export type RequestState = 'pending' | 'executed' | 'rejected' | 'cancelled' | 'expired';
export interface JobProgress {
  state: 'running' | 'done';
  total: number;
  done: number;
  counts: Record<string, number>;
}
export interface Request {
  id: string;
  kind: string;
  action: string;
  state: RequestState;
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
  /** a bulk password reset, approved: the approver's one download runs it */
  download?: { by: { username: string }; until: string; takenAt?: string };
  /** a temporary group membership, written: its expiry and how it ended */
  temporary?: { state: 'active' | 'ended'; expiresAt: string; member: { name: string }; ended?: { at: string; how: string; by: string } };
}
export interface ApproveAnswer {
  request: Request;
  result?: { outcome: string; password?: string; code?: string };
  job?: JobProgress;
}

export const progressText = (j: JobProgress) =>
  `${j.done}/${j.total} ${j.state === 'done' ? 'done' : 'so far'}${Object.keys(j.counts).length ? ` (${Object.entries(j.counts).map(([k, n]) => `${n} ${k}`).join(', ')})` : ''}`;

export const approve = (id: string) => post<ApproveAnswer>(`/api/approvals/${encodeURIComponent(id)}/approve`);

/** What an approval did, in words. */
export function approvedText(out: ApproveAnswer): string {
  const title = requestTitle(out.request);
  if (out.result) return `${title}: executed (${out.result.outcome}${out.result.code ? `, ${out.result.code}` : ''}).`;
  if (out.request.download) return `${title}: approved. Download the passwords now: the download runs the reset, once.`;
  if (out.job) return out.job.state === 'done' ? `${title}: executed (${out.request.outcome ?? 'done'}).` : `${title}: job running, ${progressText(out.job)}. It goes on by itself.`;
  return `${title}: approved (${out.request.approvals.length}/${out.request.approvalsNeeded}), waiting for another approver.`;
}

export function PasswordDialog({ target, password, onClose }: { target: string; password: string; onClose: () => void }) {
  return (
    <Modal title={`New password for ${target}`} onClose={onClose}>
      <SecretView label="Shown once to you, the approver who executed the reset" value={password} onExpired={onClose} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}

export function RejectDialog({ request, onClose, onRejected }: { request: Pick<Request, 'id' | 'action' | 'target' | 'kind' | 'parameters'>; onClose: () => void; onRejected: () => void }) {
  const [comment, setComment] = useState('');
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (await a.run(() => post(`/api/approvals/${encodeURIComponent(request.id)}/reject`, { comment: comment.trim() }))) onRejected();
  };
  return (
    <Modal title={`Reject: ${requestTitle(request)}`} onClose={onClose}>
      <form onSubmit={submit}>
        <label>
          Comment
          <textarea name="comment" required maxLength={1000} value={comment} onChange={(e) => setComment(e.target.value)} />
          <span className="hint">The requester reads it.</span>
        </label>
        <ErrorText error={a.error} />
        <div className="actions">
          <Busy type="submit" busy={a.busy} className="danger">
            Reject
          </Busy>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
