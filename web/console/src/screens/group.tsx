import { useState } from 'react';
import { del, get, post } from '../api';
import { Busy, Empty, ErrorText, Link, Loaded, Modal, useAction, useLoaded, useStepUp } from '../ui';
import { AddMembers } from './add-members';
import { RequestTemporaryMembership } from './temporary-membership';
import type { Group } from './groups';
import type { Hint } from './users';

// A group and its members: add (from a search) and remove, directly or filed as a request.

export interface Member {
  id: string;
  name?: string;
  username?: string;
  displayName?: string | null;
  kind?: string;
}
const memberName = (m: Member) => m.displayName ?? m.name ?? m.username ?? m.id;

export function GroupPage({ id }: { id: string }) {
  const { data, error, reload } = useLoaded(id, async (x) => {
    const [g, m] = await Promise.all([
      get<Group>(`/api/groups/${encodeURIComponent(x)}`),
      get<{ items?: Member[]; members?: Member[]; omitted?: number }>(`/api/groups/${encodeURIComponent(x)}/members`),
    ]);
    return { g, members: { items: m.items ?? m.members ?? [], omitted: m.omitted } };
  });
  const [remove, setRemove] = useState<Member>();
  const [adding, setAdding] = useState(false);
  const [temporary, setTemporary] = useState(false);
  return (
    <section aria-labelledby="group-title">
      <p>
        <Link to="/groups">← Groups</Link>
      </p>
      <Loaded data={data} error={error} onRetry={reload}>
        {({ g, members }) => {
          const hint: Hint = (g.actions?.['groups.members.write'] as Hint | undefined) ?? 'no';
          return (
            <>
              <h1 id="group-title">{g.name}</h1>
              {g.description && <p>{g.description}</p>}
              <h2>Members</h2>
              {hint !== 'no' && (
                <div className="actions">
                  <button type="button" className={hint === 'approval' ? 'secondary' : undefined} onClick={() => setAdding(true)}>
                    Add members{hint === 'approval' ? ' (request approval)' : ''}
                  </button>
                  <button type="button" className="secondary" onClick={() => setTemporary(true)}>
                    Request temporary membership
                  </button>
                </div>
              )}
              {members.items.length === 0 ? (
                <Empty>No member you manage.</Empty>
              ) : (
                <ul className="plain">
                  {members.items.map((m) => (
                    <li key={m.id}>
                      {memberName(m)}{' '}
                      {hint !== 'no' && (
                        <button type="button" className="link" onClick={() => setRemove(m)}>
                          Remove<span className="sr-only"> {memberName(m)}</span>
                          {hint === 'approval' ? ' (request approval)' : ''}
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
              )}
              {!!members.omitted && <p className="hint">{members.omitted} member(s) the console never manages are not listed.</p>}
              {adding && (
                <AddMembers
                  group={g}
                  present={new Set(members.items.map((m) => m.id.toLowerCase()))}
                  hint={hint}
                  onClose={() => {
                    setAdding(false);
                    reload();
                  }}
                />
              )}
              {temporary && <RequestTemporaryMembership group={g} onClose={() => setTemporary(false)} />}
              {remove && (
                <RemoveMember
                  group={g}
                  member={remove}
                  hint={hint}
                  onClose={() => {
                    setRemove(undefined);
                    reload();
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

function RemoveMember({ group, member, hint, onClose }: { group: Group; member: Member; hint: Hint; onClose: () => void }) {
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r =
      hint === 'approval'
        ? await a.run(() => post('/api/approvals', { kind: 'action', action: 'groups.members.write', target: group.id, parameters: { add: [], remove: [member.id] }, reason: reason.trim() }))
        : await a.run(() => withStepUp(() => del(`/api/groups/${encodeURIComponent(group.id)}/members/${encodeURIComponent(member.id)}`).then(() => true)));
    if (r) setDone(hint === 'approval' ? 'Request filed: it waits for an approver.' : `${memberName(member)} is no longer a member of ${group.name}.`);
  };
  return (
    <Modal title={`Remove ${memberName(member)} from ${group.name}`} onClose={onClose}>
      {done ? (
        <>
          <p role="status">{done}</p>
          <div className="actions">
            <button type="button" className="secondary" onClick={onClose}>
              Close
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit}>
          {hint === 'approval' && (
            <label>
              Reason
              <textarea required value={reason} onChange={(e) => setReason(e.target.value)} />
            </label>
          )}
          <ErrorText error={a.error} />
          <div className="actions">
            <Busy type="submit" busy={a.busy} className={hint === 'approval' ? undefined : 'danger'}>
              {hint === 'approval' ? 'File request' : 'Remove'}
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
