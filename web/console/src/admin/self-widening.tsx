import { useState } from 'react';
import { ApiFailure, post } from '../api';
import { Busy, ErrorText, ouPath, useAction } from '../ui';
import { AfterActionButtons } from '../screens/filed-request';
import { permissionWords } from './permissions';

/** A 403 approval_required of the role or delegation editor: the change widens the editor's own rights. */
export const isSelfWidening = (e: unknown): e is ApiFailure => e instanceof ApiFailure && e.status === 403 && e.code === 'approval_required';

/** What a self-widening change would add, in words, and the request that lets another administrator approve it. */
export function SelfWidening({ error, action, target, parameters, onFiled }: { error: ApiFailure; action: 'roles.save' | 'delegations.save'; target: string; parameters: Record<string, unknown>; onFiled: () => void }) {
  const [reason, setReason] = useState('');
  const [ticket, setTicket] = useState('');
  const [filed, setFiled] = useState<string>();
  const a = useAction();
  const widens = (error.body.widens ?? []) as Array<{ delegation: string; permissions: string[]; scope: string[] }>;
  if (filed)
    return (
      <div role="status">
        <p>Request filed: another administrator approves it, then the change is made.</p>
        <AfterActionButtons filed={filed} onClose={onFiled} />
      </div>
    );
  return (
    <div className="notice" role="alert" data-testid="self-widening">
      <p>
        Not saved: this change would widen your own rights, so another administrator must approve it.
        {widens.length > 0 && ' You would gain:'}
      </p>
      {widens.length > 0 && (
        <ul>
          {widens.map((w, i) => (
            <li key={i}>
              {w.permissions.map(permissionWords).join(', ')} on {w.scope.map((x) => ouPath(x)).join('; ')} (delegation {w.delegation})
            </li>
          ))}
        </ul>
      )}
      <label>
        Reason for the request
        <textarea name="widening-reason" maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
      </label>
      <label>
        Ticket
        <input name="widening-ticket" maxLength={200} value={ticket} onChange={(e) => setTicket(e.target.value)} />
      </label>
      <ErrorText error={a.error} />
      <Busy
        busy={a.busy}
        disabled={!reason.trim()}
        onClick={async () => {
          const r = await a.run(() => post<{ id: string }>('/api/approvals', { kind: 'action', action, target, parameters, reason: reason.trim(), ...(ticket.trim() ? { ticket: ticket.trim() } : {}) }));
          if (r) setFiled(r.id);
        }}
      >
        File a request for another administrator
      </Busy>
    </div>
  );
}
