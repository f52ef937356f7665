import { useState } from 'react';
import { post, put } from '../api';
import { Busy, ErrorText, Modal, SecretView, useAction, useStepUp } from '../ui';
import { AfterActionButtons, ApprovalNotice } from './filed-request';
import type { Hint, User } from './users';

// One action on a user: done directly (with the step-up the API asks for) or filed as a request
// when the operator holds it only with approval. The result says what was done, in words.

export const ACTION_LABEL: Record<string, string> = {
  'users.password.reset': 'Reset password',
  'users.unlock': 'Unlock',
  'users.disable': 'Disable',
  'users.enable': 'Enable',
  'users.attributes.write': 'Edit attributes',
};
const ROUTE: Record<string, { method: 'POST' | 'PUT'; path: string }> = {
  'users.password.reset': { method: 'POST', path: 'reset-password' },
  'users.unlock': { method: 'POST', path: 'unlock' },
  'users.disable': { method: 'POST', path: 'disable' },
  'users.enable': { method: 'POST', path: 'enable' },
  'users.attributes.write': { method: 'PUT', path: 'attributes' },
};
const DONE: Record<string, (name: string) => string> = {
  'users.unlock': (n) => `${n} is unlocked.`,
  'users.disable': (n) => `${n} is disabled.`,
  'users.enable': (n) => `${n} is enabled.`,
  'users.attributes.write': (n) => `The attributes of ${n} are saved.`,
  'users.password.reset': (n) => `The password of ${n} is reset.`,
};
const EDITABLE = ['displayName', 'givenName', 'sn', 'mail', 'telephoneNumber', 'description'] as const;
const FIELD_LABEL: Record<(typeof EDITABLE)[number], string> = { displayName: 'Display name', givenName: 'First name', sn: 'Last name', mail: 'E-mail', telephoneNumber: 'Telephone', description: 'Description' };

export function UserActionDialog({ user, action, hint, onClose, onDone }: { user: User; action: string; hint: Hint; onClose: () => void; onDone?: () => void }) {
  const [ticket, setTicket] = useState('');
  const [reason, setReason] = useState('');
  const [mustChange, setMustChange] = useState(true);
  const [unlock, setUnlock] = useState(user.lockedOut);
  const [attrs, setAttrs] = useState<Record<string, string>>(() => Object.fromEntries(EDITABLE.map((k) => [k, user[k] ?? ''])));
  const [password, setPassword] = useState<string>();
  const [done, setDone] = useState<string>();
  const [filed, setFiled] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const name = user.displayName ?? user.username;
  const parameters = (): Record<string, unknown> =>
    action === 'users.password.reset'
      ? { mustChange, unlock }
      : action === 'users.attributes.write'
        ? { attributes: Object.fromEntries(EDITABLE.filter((k) => (user[k] ?? '') !== attrs[k]).map((k) => [k, attrs[k] || null])) }
        : {};
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (hint === 'approval') {
      const r = await a.run(() => post<{ id: string }>('/api/approvals', { kind: 'action', action, target: user.id, parameters: parameters(), reason: reason.trim(), ...(ticket.trim() ? { ticket: ticket.trim() } : {}) }));
      if (r) setFiled(r.id);
      return;
    }
    const route = ROUTE[action];
    const body = { ...parameters(), ...(ticket.trim() ? { ticket: ticket.trim() } : {}) };
    const path = `/api/users/${encodeURIComponent(user.id)}/${route.path}`;
    const r = await a.run(() => withStepUp(() => (route.method === 'PUT' ? put<{ outcome: string; password?: string }>(path, body) : post<{ outcome: string; password?: string }>(path, body))));
    if (!r) return;
    onDone?.(); // the page behind says the new state at once
    if (r.password) setPassword(r.password);
    else setDone(r.outcome === 'partial' ? 'Done in part: check the user.' : (DONE[action]?.(name) ?? 'Done.'));
  };
  const close = () => {
    setPassword(undefined);
    onClose();
  };
  return (
    <Modal title={`${ACTION_LABEL[action] ?? action}: ${name}`} onClose={close}>
      {password ? (
        <>
          <SecretView
            label={`New password of ${user.username} (shown once)`}
            value={password}
            onExpired={() => {
              setPassword(undefined);
              setDone('The password was hidden after 30 seconds. It is not shown again.');
            }}
          />
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        </>
      ) : done || filed ? (
        <>
          <p role="status">{filed ? 'Request filed: it waits for an approver, who carries it out.' : done}</p>
          <AfterActionButtons filed={filed} onClose={close} />
        </>
      ) : (
        <form onSubmit={submit}>
          <ApprovalNotice hint={hint} />
          {action === 'users.password.reset' && (
            <>
              <label className="check">
                <input type="checkbox" checked={mustChange} onChange={(e) => setMustChange(e.target.checked)} />
                The user must change the password at next sign-in
              </label>
              <label className="check">
                <input type="checkbox" name="unlock" checked={unlock} onChange={(e) => setUnlock(e.target.checked)} />
                Also unlock the account{user.lockedOut ? ' (it is locked out now)' : ''}
              </label>
            </>
          )}
          {action === 'users.attributes.write' &&
            EDITABLE.map((k) => (
              <label key={k}>
                {FIELD_LABEL[k]}
                <input name={k} value={attrs[k]} onChange={(e) => setAttrs({ ...attrs, [k]: e.target.value })} />
              </label>
            ))}
          <label>
            Ticket
            <input name="ticket" maxLength={200} value={ticket} onChange={(e) => setTicket(e.target.value)} />
          </label>
          {hint === 'approval' && (
            <label>
              Reason
              <textarea name="reason" required maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
            </label>
          )}
          <ErrorText error={a.error} />
          <div className="actions">
            <Busy type="submit" busy={a.busy}>
              {hint === 'approval' ? 'File request' : ACTION_LABEL[action]}
            </Busy>
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
