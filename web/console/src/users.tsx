import { useEffect, useState } from 'react';
import { del, get, post, put, qs } from './api';
import { useSearch } from './computers';
import { WORDS } from './words';
import { ErrorText, Link, Modal, SecretView, ouPath, useAction, useRoute, useStepUp, when } from './ui';

type Hint = 'direct' | 'approval' | 'no';
interface User {
  id: string;
  username: string;
  upn: string | null;
  displayName: string | null;
  givenName: string | null;
  sn: string | null;
  mail: string | null;
  telephoneNumber: string | null;
  description: string | null;
  enabled: boolean;
  lockedOut: boolean;
  lastSignIn: string | null;
  passwordLastSet: string | null;
  protected: boolean;
  dn?: string;
  actions?: Record<string, Hint>;
}

export function UsersPage() {
  const [q, setQ] = useState('');
  const s = useSearch<User>('/api/users', q);
  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <label className="search">
        Search users
        <input type="search" name="user-search" placeholder="Name, login or e-mail" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      <p>
        <a href={`/api/exports/users${qs({ q: q.trim() || undefined })}`} download data-testid="users-csv">
          Download these users as CSV
        </a>{' '}
        <span className="hint">(every user of the search or of what you manage, not only this page; the download is audited)</span>
      </p>
      <ErrorText error={s.error} />
      {s.items && (
        <table>
          <caption className="sr-only">Users found</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Login</th>
              <th scope="col">State</th>
              <th scope="col">Class</th>
            </tr>
          </thead>
          <tbody>
            {s.items.map((u) => (
              <tr key={u.id}>
                <td>
                  <Link to={`/users/${u.id}`}>{u.displayName ?? u.username}</Link>
                </td>
                <td>{u.username}</td>
                <td>{[!u.enabled && 'disabled', u.lockedOut && 'locked out'].filter(Boolean).join(', ') || 'active'}</td>
                <td>{u.protected ? <span className="badge vip">Protected</span> : <span className="badge">Standard</span>}</td>
              </tr>
            ))}
            {s.items.length === 0 && (
              <tr>
                <td colSpan={4}>No user found in what you manage.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      {s.more.truncated && (
        <button type="button" className="secondary" onClick={s.loadMore}>
          Show more
        </button>
      )}
    </section>
  );
}

const ACTION_LABEL: Record<string, string> = {
  'users.password.reset': 'Reset password',
  'users.unlock': 'Unlock',
  'users.disable': 'Disable',
  'users.enable': 'Enable',
  'users.attributes.write': 'Edit attributes',
  'groups.members.write': 'Change members',
};
const ROUTE: Record<string, { method: 'POST' | 'PUT'; path: string }> = {
  'users.password.reset': { method: 'POST', path: 'reset-password' },
  'users.unlock': { method: 'POST', path: 'unlock' },
  'users.disable': { method: 'POST', path: 'disable' },
  'users.enable': { method: 'POST', path: 'enable' },
  'users.attributes.write': { method: 'PUT', path: 'attributes' },
};
const EDITABLE = ['displayName', 'givenName', 'sn', 'mail', 'telephoneNumber', 'description'] as const;

export function UserPage({ id }: { id: string }) {
  const [u, setU] = useState<User>();
  const [error, setError] = useState<unknown>();
  const [action, setAction] = useState<string>();
  const load = () => get<User>(`/api/users/${encodeURIComponent(id)}`).then(setU, setError);
  useEffect(() => {
    void load();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);
  if (error) return <ErrorText error={error} />;
  if (!u) return <p aria-busy="true">Loading…</p>;
  const offered = Object.entries(u.actions ?? {}).filter(([a, h]) => h !== 'no' && !(a === 'users.enable' && u.enabled) && !(a === 'users.disable' && !u.enabled) && !(a === 'users.unlock' && !u.lockedOut));
  return (
    <section aria-labelledby="user-title">
      <p>
        <Link to="/users">← Users</Link>
      </p>
      <h1 id="user-title">{u.displayName ?? u.username}</h1>
      <dl className="facts">
        <dt>Login</dt>
        <dd>{u.username}</dd>
        <dt>UPN</dt>
        <dd>{u.upn ?? '—'}</dd>
        <dt>OU</dt>
        <dd>{ouPath(u.dn?.replace(/^(?:[^,\\]|\\.)*,/, ''))}</dd>
        <dt>E-mail</dt>
        <dd>{u.mail ?? '—'}</dd>
        <dt>Telephone</dt>
        <dd>{u.telephoneNumber ?? '—'}</dd>
        <dt>Description</dt>
        <dd>{u.description ?? '—'}</dd>
        <dt>State</dt>
        <dd data-testid="user-state">{[u.enabled ? 'enabled' : 'disabled', u.lockedOut ? 'locked out' : 'not locked'].join(', ')}</dd>
        <dt>Class</dt>
        <dd>{u.protected ? 'Protected (VIP)' : 'Standard'}</dd>
        <dt>Last sign-in</dt>
        <dd>{when(u.lastSignIn)}</dd>
        <dt>Password last set</dt>
        <dd>{when(u.passwordLastSet)}</dd>
      </dl>
      <div className="actions">
        {offered.map(([a, h]) => (
          <button key={a} type="button" className={h === 'approval' ? 'secondary' : undefined} onClick={() => setAction(a)}>
            {ACTION_LABEL[a] ?? a}
            {h === 'approval' ? ' (request approval)' : ''}
          </button>
        ))}
      </div>
      {action && (
        <UserActionDialog
          user={u}
          action={action}
          hint={u.actions![action]}
          onClose={() => {
            setAction(undefined);
            void load();
          }}
        />
      )}
    </section>
  );
}

/** One action on a user: done directly (with the step-up the API asks for) or filed as a request. */
function UserActionDialog({ user, action, hint, onClose }: { user: User; action: string; hint: Hint; onClose: () => void }) {
  const [ticket, setTicket] = useState('');
  const [reason, setReason] = useState('');
  const [mustChange, setMustChange] = useState(true);
  const [attrs, setAttrs] = useState<Record<string, string>>(() => Object.fromEntries(EDITABLE.map((k) => [k, user[k] ?? ''])));
  const [password, setPassword] = useState<string>();
  const [done, setDone] = useState<string>();
  const [filed, setFiled] = useState<string>();
  const { withStepUp } = useStepUp();
  const { go } = useRoute();
  const a = useAction();
  const parameters = (): Record<string, unknown> =>
    action === 'users.password.reset'
      ? { mustChange }
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
    if (r.password) setPassword(r.password);
    else setDone(r.outcome === 'partial' ? 'Done in part: check the user.' : 'Done.');
  };
  const close = () => {
    setPassword(undefined);
    onClose();
  };
  const title = `${ACTION_LABEL[action] ?? action}: ${user.displayName ?? user.username}`;
  return (
    <Modal title={title} onClose={close}>
      {password ? (
        <>
          <SecretView label={`New password of ${user.username} (shown once)`} value={password} onExpired={() => { setPassword(undefined); setDone('The password was hidden after 30 seconds. It is not shown again.'); }} />
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        </>
      ) : done || filed ? (
        <>
          <p role="status">{filed ? 'Request filed: the approvers were notified.' : done}</p>
          <div className="actions">
            {filed && (
              <button type="button" onClick={() => go(`/approvals/${filed}`)}>
                Open the request
              </button>
            )}
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit}>
          {hint === 'approval' && <p className="notice">You hold this action only with approval: your request goes to the approvers, who carry it out.</p>}
          {action === 'users.password.reset' && (
            <label className="check">
              <input type="checkbox" checked={mustChange} onChange={(e) => setMustChange(e.target.checked)} />
              The user must change the password at next sign-in
            </label>
          )}
          {action === 'users.attributes.write' &&
            EDITABLE.map((k) => (
              <label key={k}>
                {k}
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
            <button type="submit" disabled={a.busy}>
              {hint === 'approval' ? 'File request' : ACTION_LABEL[action]}
            </button>
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}

// ---- groups ----------------------------------------------------------------------------
interface Group {
  id: string;
  name: string;
  description?: string | null;
  protected?: boolean;
  actions?: Record<string, Hint>;
  [k: string]: unknown;
}
interface Member {
  id: string;
  name?: string;
  username?: string;
  displayName?: string | null;
  kind?: string;
}

export function GroupsPage() {
  const [q, setQ] = useState('');
  const s = useSearch<Group>('/api/groups', q);
  return (
    <section aria-labelledby="groups-title">
      <h1 id="groups-title">Groups</h1>
      <label className="search">
        Search groups
        <input type="search" name="group-search" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      <ErrorText error={s.error} />
      {s.items && (
        <ul className="plain">
          {s.items.map((g) => (
            <li key={g.id}>
              <Link to={`/groups/${g.id}`}>{g.name}</Link> {g.description && <span className="muted">— {g.description}</span>}
            </li>
          ))}
          {s.items.length === 0 && <li>No group found in what you manage.</li>}
        </ul>
      )}
    </section>
  );
}

export function GroupPage({ id }: { id: string }) {
  const [g, setG] = useState<Group>();
  const [members, setMembers] = useState<{ items: Member[]; omitted?: number }>();
  const [error, setError] = useState<unknown>();
  const [remove, setRemove] = useState<Member>();
  const [adding, setAdding] = useState(false);
  const load = () => {
    get<Group>(`/api/groups/${encodeURIComponent(id)}`).then(setG, setError);
    get<{ items?: Member[]; members?: Member[]; omitted?: number }>(`/api/groups/${encodeURIComponent(id)}/members`).then((m) => setMembers({ items: m.items ?? m.members ?? [], omitted: m.omitted }), setError);
  };
  useEffect(load, [id]);
  if (error) return <ErrorText error={error} />;
  if (!g) return <p aria-busy="true">Loading…</p>;
  const hint = g.actions?.['groups.members.write'] ?? 'no';
  return (
    <section aria-labelledby="group-title">
      <p>
        <Link to="/groups">← Groups</Link>
      </p>
      <h1 id="group-title">{g.name}</h1>
      {g.description && <p>{g.description}</p>}
      <h2>Members</h2>
      {hint !== 'no' && (
        <div className="actions">
          <button type="button" className={hint === 'approval' ? 'secondary' : undefined} onClick={() => setAdding(true)}>
            Add members{hint === 'approval' ? ' (request approval)' : ''}
          </button>
        </div>
      )}
      <ul className="plain">
        {members?.items.map((m) => (
          <li key={m.id}>
            {m.displayName ?? m.name ?? m.username ?? m.id}{' '}
            {hint !== 'no' && (
              <button type="button" className="link" onClick={() => setRemove(m)}>
                Remove{hint === 'approval' ? ' (request approval)' : ''}
              </button>
            )}
          </li>
        ))}
      </ul>
      {!!members?.omitted && <p className="hint">{members.omitted} member(s) the console never manages are not listed.</p>}
      {adding && <AddMembers group={g} present={new Set(members?.items.map((m) => m.id.toLowerCase()))} hint={hint} onClose={() => { setAdding(false); load(); }} />}
      {remove && <RemoveMember group={g} member={remove} hint={hint} onClose={() => { setRemove(undefined); load(); }} />}
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
        : await a.run(() => withStepUp(() => del(`/api/groups/${encodeURIComponent(group.id)}/members/${encodeURIComponent(member.id)}`)));
    if (r) setDone(hint === 'approval' ? 'Request filed.' : 'Member removed.');
  };
  return (
    <Modal title={`Remove ${member.displayName ?? member.name ?? member.id} from ${group.name}`} onClose={onClose}>
      {done ? (
        <p role="status">{done}</p>
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
            <button type="submit" disabled={a.busy}>
              {hint === 'approval' ? 'File request' : 'Remove'}
            </button>
            <button type="button" className="secondary" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}

interface Candidate {
  id: string;
  label: string;
  detail?: string;
}
type MemberOutcome = { id: string; change: 'add' | 'remove'; outcome: string; code?: string };

/**
 * Add users or groups to a group: picked from a search of what the operator manages, then done
 * directly (step-up, POST /api/groups/{id}/members) or filed as a request, like every action.
 */
function AddMembers({ group, present, hint, onClose }: { group: Group; present: Set<string>; hint: Hint; onClose: () => void }) {
  const [kind, setKind] = useState<'users' | 'groups'>('users');
  const [q, setQ] = useState('');
  const [picked, setPicked] = useState<Candidate[]>([]);
  const [ticket, setTicket] = useState('');
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<{ text: string; members?: MemberOutcome[] }>();
  const [filed, setFiled] = useState<string>();
  const { withStepUp } = useStepUp();
  const { go } = useRoute();
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
          <p role="status">{filed ? 'Request filed: the approvers were notified.' : done!.text}</p>
          {done?.members && (
            <ul className="plain" aria-label="Result per member">
              {done.members.map((m) => (
                <li key={m.id}>
                  {name(m.id)}: {m.outcome === 'succeeded' ? 'added' : m.outcome === 'unchanged' ? 'already a member' : `not added${m.code ? `: ${WORDS[m.code] ?? m.code}` : ''}`}
                </li>
              ))}
            </ul>
          )}
          <div className="actions">
            {filed && (
              <button type="button" onClick={() => go(`/approvals/${filed}`)}>
                Open the request
              </button>
            )}
            <button type="button" className="secondary" onClick={onClose}>
              Close
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit}>
          {hint === 'approval' && <p className="notice">You hold this action only with approval: your request goes to the approvers, who carry it out.</p>}
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
          <label className="search">
            Search members to add
            <input type="search" name="member-search" value={q} onChange={(e) => setQ(e.target.value)} />
          </label>
          <ErrorText error={s.error} />
          <ul className="plain" aria-label="Candidates">
            {candidates.map((c) => (
              <li key={c.id}>
                <label className="check">
                  <input type="checkbox" checked={isPicked(c.id)} onChange={() => toggle(c)} />
                  {c.label} {c.detail && <span className="muted">({c.detail})</span>}
                </label>
              </li>
            ))}
            {s.items && candidates.length === 0 && <li>Nothing to add found.</li>}
          </ul>
          <p data-testid="picked-members">{picked.length ? `To add: ${picked.map((p) => p.label).join(', ')}` : 'Nobody picked yet.'}</p>
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
            <button type="submit" disabled={a.busy || picked.length === 0}>
              {hint === 'approval' ? 'File request' : `Add ${picked.length || ''} member${picked.length === 1 ? '' : 's'}`.replace('  ', ' ')}
            </button>
            <button type="button" className="secondary" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
