import { useState } from 'react';
import { post } from '../api';
import { useSearch } from '../search';
import { WORDS } from '../words';
import { Busy, ErrorText, Modal, PickList, useAction, useStepUp } from '../ui';
import type { Group } from './groups';
import { AfterActionButtons, ApprovalNotice } from './filed-request';
import type { Hint, User } from './users';

// Add users or groups to a group: picked from a search of what the operator manages, then done
// directly (step-up, POST /api/groups/{id}/members) or filed as a request, like every action.

interface Candidate {
  id: string;
  label: string;
  detail?: string;
}
type MemberOutcome = { id: string; change: 'add' | 'remove'; outcome: string; code?: string };

export function AddMembers({ group, present, hint, onClose }: { group: Group; present: Set<string>; hint: Hint; onClose: () => void }) {
  const [kind, setKind] = useState<'users' | 'groups'>('users');
  const [q, setQ] = useState('');
  const [picked, setPicked] = useState<Candidate[]>([]);
  const [ticket, setTicket] = useState('');
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<{ text: string; members?: MemberOutcome[] }>();
  const [filed, setFiled] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const s = useSearch<User & Group>(`/api/${kind}`, q);
  const candidates: Candidate[] = (s.items ?? [])
    .filter((x) => x.id.toLowerCase() !== group.id.toLowerCase() && !present.has(x.id.toLowerCase()))
    .map((x) => (kind === 'users' ? { id: x.id, label: x.displayName ?? x.username, detail: x.username } : { id: x.id, label: x.name, detail: 'group' }));
  const isPicked = (id: string) => picked.some((p) => p.id === id);
  const toggle = (c: Candidate) => setPicked(isPicked(c.id) ? picked.filter((p) => p.id !== c.id) : [...picked, c].slice(0, 50));
  const name = (id: string) => picked.find((p) => p.id.toLowerCase() === id.toLowerCase())?.label ?? id;
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const add = picked.map((p) => p.id);
    const extra = ticket.trim() ? { ticket: ticket.trim() } : {};
    if (hint === 'approval') {
      const r = await a.run(() => post<{ id: string }>('/api/approvals', { kind: 'action', action: 'groups.members.write', target: group.id, parameters: { add, remove: [] }, reason: reason.trim(), ...extra }));
      if (r) setFiled(r.id);
      return;
    }
    const r = await a.run(() => withStepUp(() => post<{ outcome: string; members: MemberOutcome[] }>(`/api/groups/${encodeURIComponent(group.id)}/members`, { add, ...extra })));
    if (r) setDone({ text: r.outcome === 'partial' ? 'Done in part: some members were not added.' : 'Members added.', members: r.members });
  };
  return (
    <Modal title={`Add members to ${group.name}`} onClose={onClose} wide>
      {done || filed ? (
        <>
          <p role="status">{filed ? 'Request filed: it waits for an approver, who carries it out.' : done!.text}</p>
          {done?.members && (
            <ul className="plain" aria-label="Result per member">
              {done.members.map((m) => (
                <li key={m.id}>
                  {name(m.id)}: {m.outcome === 'succeeded' ? 'added' : m.outcome === 'unchanged' ? 'already a member' : `not added${m.code ? `: ${WORDS[m.code] ?? m.code}` : ''}`}
                </li>
              ))}
            </ul>
          )}
          <AfterActionButtons filed={filed} onClose={onClose} />
        </>
      ) : (
        <form onSubmit={submit}>
          <ApprovalNotice hint={hint} />
          <fieldset>
            <legend>Find</legend>
            <label className="check">
              <input type="radio" name="member-kind" checked={kind === 'users'} onChange={() => setKind('users')} />
              Users
            </label>
            <label className="check">
              <input type="radio" name="member-kind" checked={kind === 'groups'} onChange={() => setKind('groups')} />
              Groups
            </label>
          </fieldset>
          <PickList
            label="Search members to add"
            name="member-search"
            query={q}
            onQuery={setQ}
            searching={s.searching}
            error={s.error}
            items={s.items && candidates}
            itemKey={(c) => c.id}
            itemLabel={(c) => (
              <>
                {c.label} {c.detail && <span className="muted">({c.detail})</span>}
              </>
            )}
            isPicked={(c) => isPicked(c.id)}
            onToggle={toggle}
            nothing="Nothing to add found."
            summary={<p data-testid="picked-members">{picked.length ? `To add: ${picked.map((p) => p.label).join(', ')}` : 'Nobody picked yet.'}</p>}
          />
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
            <Busy type="submit" busy={a.busy} disabled={picked.length === 0}>
              {hint === 'approval' ? 'File request' : `Add ${picked.length || ''} member${picked.length === 1 ? '' : 's'}`.replace('  ', ' ')}
            </Busy>
            <button type="button" className="secondary" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
