import { useState } from 'react';
import { post } from '../api';
import { durationWords } from '../approval-words';
import { useSearch } from '../search';
import { FormDialog, Modal, PickList, useAction } from '../ui';
import type { Group } from './groups';
import { AfterActionButtons } from './filed-request';
import type { User } from './users';

// Ask for a temporary membership of a group (issue 33, groups.members.add.temporary): for oneself
// or for a user the operator manages, for a bounded time; always a request that approvers decide.
// The membership is written on approval and removed when the time is up.

/** The durations offered, in minutes (the instance's cap, Approvals:TemporaryMembershipMaxHours, 8 h by default, refuses longer ones). */
export const DURATIONS = [15, 30, 60, 120, 240, 480];

export function RequestTemporaryMembership({ group, onClose }: { group: Group; onClose: () => void }) {
  const [who, setWho] = useState<'self' | 'other'>('self');
  const [q, setQ] = useState('');
  const [member, setMember] = useState<{ id: string; label: string }>();
  const [duration, setDuration] = useState(60);
  const [reason, setReason] = useState('');
  const [ticket, setTicket] = useState('');
  const [filed, setFiled] = useState<string>();
  const a = useAction();
  const s = useSearch<User>('/api/users', who === 'other' ? q : '');
  const submit = async () => {
    const r = await a.run(() =>
      post<{ id: string }>('/api/approvals', {
        kind: 'action',
        action: 'groups.members.add.temporary',
        target: group.id,
        parameters: { member: who === 'self' ? 'self' : member?.id, durationMinutes: duration },
        reason: reason.trim(),
        ...(ticket.trim() ? { ticket: ticket.trim() } : {}),
      }),
    );
    if (r) setFiled(r.id);
  };
  if (filed)
    return (
      <Modal title={`Temporary membership of ${group.name}`} onClose={onClose}>
        <p role="status">Request filed: once an approver approves it, the membership is written for {durationWords(duration)} and then removed by itself.</p>
        <AfterActionButtons filed={filed} onClose={onClose} />
      </Modal>
    );
  return (
    <FormDialog
      title={`Temporary membership of ${group.name}`}
      onClose={onClose}
      onSubmit={submit}
      busy={a.busy}
      error={a.error}
      submit="File request"
      submitDisabled={who === 'other' && !member}
      wide={who === 'other'}
    >
      <p className="notice">A temporary membership always goes to the approvers. It is removed when the time is up; you can end it earlier.</p>
      <fieldset>
        <legend>Member</legend>
        <label className="check">
          <input type="radio" name="jit-who" checked={who === 'self'} onChange={() => setWho('self')} />
          Myself
        </label>
        <label className="check">
          <input type="radio" name="jit-who" checked={who === 'other'} onChange={() => setWho('other')} />
          Another user
        </label>
      </fieldset>
      {who === 'other' && (
        <PickList
          label="Search the user"
          name="jit-member-search"
          query={q}
          onQuery={setQ}
          searching={s.searching}
          error={s.error}
          items={s.items}
          itemKey={(u) => u.id}
          itemLabel={(u) => (
            <>
              {u.displayName ?? u.username} <span className="muted">({u.username})</span>
            </>
          )}
          isPicked={(u) => member?.id === u.id}
          onToggle={(u) => setMember(member?.id === u.id ? undefined : { id: u.id, label: u.displayName ?? u.username })}
          nothing="No user found."
          summary={<p data-testid="jit-member">{member ? `Member: ${member.label}` : 'Nobody picked yet.'}</p>}
        />
      )}
      <label>
        Duration
        <select name="duration" value={duration} onChange={(e) => setDuration(Number(e.target.value))}>
          {DURATIONS.map((m) => (
            <option key={m} value={m}>
              {durationWords(m)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Reason
        <textarea name="reason" required maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
      </label>
      <label>
        Ticket
        <input name="ticket" maxLength={200} value={ticket} onChange={(e) => setTicket(e.target.value)} />
      </label>
    </FormDialog>
  );
}
