import { useEffect, useState } from 'react';
import { ApiFailure, del, get, post, put, type Me } from './api';
import { ErrorText, Link, Modal, ouPath, useAction, useRoute, useStepUp } from './ui';
import { WORDS } from './words';

// Administration (settings.manage): roles, delegations, Super administrators, approval settings,
// notification channels, step-up mode, instance identification, operator records, the protection
// list and the LAPS account (read-only), LAPS diagnostics: what the API offers, nothing more.
const PERMISSIONS = [
  'computers.read', 'computers.laps.read', 'computers.laps.expire', 'vip.manage', 'users.read', 'groups.read',
  'users.password.reset', 'users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'groups.members.write',
  'users.move', 'users.rename', 'users.rename.login', 'groups.create', 'groups.attributes.write', 'groups.delete',
  'groups.owned.members.write', 'audit.read', 'settings.manage',
];
const TABS = [
  ['roles', 'Roles'],
  ['delegations', 'Delegations'],
  ['super-administrators', 'Super administrators'],
  ['approvals', 'Approval settings'],
  ['channels', 'Notification channels'],
  ['step-up', 'Step-up mode'],
  ['identification', 'Identification'],
  ['operators', 'Operators'],
  ['protection', 'Protection'],
  ['baseline', 'Baseline'],
  ['diagnostics', 'Diagnostics'],
] as const;

export function AdminPage({ me, tab = 'roles' }: { me: Me; tab?: string }) {
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Administration</h1>
      <nav aria-label="Administration" className="tabs">
        {TABS.map(([t, label]) => (
          <Link key={t} to={`/admin/${t}`} className={t === tab ? 'active' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {tab === 'roles' && <Roles />}
      {tab === 'delegations' && <Delegations />}
      {tab === 'super-administrators' && <SuperAdministrators me={me} />}
      {tab === 'approvals' && <ApprovalSettings />}
      {tab === 'channels' && <Channels />}
      {tab === 'step-up' && <StepUpMode me={me} />}
      {tab === 'identification' && <Identification />}
      {tab === 'operators' && <Operators me={me} />}
      {tab === 'protection' && <Protection />}
      {tab === 'baseline' && <BaselineTransfer />}
      {tab === 'diagnostics' && <Diagnostics />}
    </section>
  );
}


/** A 403 approval_required of the role or delegation editor: the change widens the editor's own rights. */
const isSelfWidening = (e: unknown): e is ApiFailure => e instanceof ApiFailure && e.status === 403 && e.code === 'approval_required';

/** What a self-widening change would add, in words, and the request that lets another administrator approve it. */
function SelfWidening({ error, action, target, parameters, onFiled }: { error: ApiFailure; action: 'roles.save' | 'delegations.save'; target: string; parameters: Record<string, unknown>; onFiled: () => void }) {
  const [reason, setReason] = useState('');
  const [ticket, setTicket] = useState('');
  const [filed, setFiled] = useState<string>();
  const a = useAction();
  const { go } = useRoute();
  const widens = (error.body.widens ?? []) as Array<{ delegation: string; permissions: string[]; scope: string[] }>;
  if (filed)
    return (
      <div role="status">
        <p>Request filed: another administrator approves it, then the change is made.</p>
        <div className="actions">
          <button type="button" onClick={() => go(`/approvals/${filed}`)}>
            Open the request
          </button>
          <button type="button" className="secondary" onClick={onFiled}>
            Close
          </button>
        </div>
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
              {w.permissions.join(', ')} on {w.scope.map((x) => ouPath(x)).join('; ')} (delegation {w.delegation})
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
      <button
        type="button"
        disabled={a.busy || !reason.trim()}
        onClick={async () => {
          const r = await a.run(() => post<{ id: string }>('/api/approvals', { kind: 'action', action, target, parameters, reason: reason.trim(), ...(ticket.trim() ? { ticket: ticket.trim() } : {}) }));
          if (r) setFiled(r.id);
        }}
      >
        File a request for another administrator
      </button>
    </div>
  );
}

interface Role {
  id: string;
  name: string;
  permissions: string[];
  builtIn: boolean;
  readOnly: boolean;
  version?: number;
  delegations?: string[];
}

function Roles() {
  const [roles, setRoles] = useState<Role[]>();
  const [error, setError] = useState<unknown>();
  const [edit, setEdit] = useState<Role | 'new'>();
  const load = () => get<{ roles: Role[] }>('/api/admin/roles').then((r) => setRoles(r.roles), setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <ErrorText error={error} />
      <table>
        <caption className="sr-only">Roles</caption>
        <thead>
          <tr>
            <th scope="col">Role</th>
            <th scope="col">Permissions</th>
            <th scope="col">Used by</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {roles?.map((r) => (
            <tr key={r.id} data-testid={`role-${r.id}`}>
              <td>{r.name}</td>
              <td className="perms">{r.builtIn ? 'every permission (built in, read-only)' : r.permissions.join(', ')}</td>
              <td>{r.delegations?.join(', ') || '—'}</td>
              <td>
                {!r.readOnly && (
                  <button type="button" className="link" onClick={() => setEdit(r)}>
                    Edit {r.name}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={() => setEdit('new')}>
        New role
      </button>
      {edit && (
        <RoleEditor
          role={edit === 'new' ? undefined : edit}
          onClose={() => {
            setEdit(undefined);
            void load();
          }}
        />
      )}
    </>
  );
}

function RoleEditor({ role, onClose }: { role?: Role; onClose: () => void }) {
  const [name, setName] = useState(role?.name ?? '');
  const [perms, setPerms] = useState<string[]>(role?.permissions ?? []);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const id = role?.id ?? name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const body = { name: name.trim(), permissions: perms, ...(role ? { version: role.version } : {}) };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => withStepUp(() => put(`/api/admin/roles/${encodeURIComponent(id)}`, body)));
    if (r) onClose();
  };
  return (
    <Modal title={role ? `Edit role ${role.name}` : 'New role'} onClose={onClose} wide>
      <form onSubmit={submit}>
        <label>
          Name
          <input name="role-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <fieldset className="grid">
          <legend>Permissions</legend>
          {PERMISSIONS.map((p) => (
            <label key={p} className="check">
              <input type="checkbox" name={p} checked={perms.includes(p)} onChange={(e) => setPerms(e.target.checked ? [...perms, p] : perms.filter((x) => x !== p))} />
              {p}
            </label>
          ))}
        </fieldset>
        {isSelfWidening(a.error) ? <SelfWidening error={a.error} action="roles.save" target={id} parameters={body} onFiled={onClose} /> : <ErrorText error={a.error} />}
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Save role
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

interface DelegationView {
  id: string;
  roleId: string;
  roleName?: string | null;
  scope: Array<{ guid: string; dn: string }>;
  assignees: Array<{ kind: 'user' | 'group'; guid: string; name: string }>;
  version?: number;
}

function Delegations() {
  const [list, setList] = useState<DelegationView[]>();
  const [roles, setRoles] = useState<Role[]>([]);
  const [error, setError] = useState<unknown>();
  const [edit, setEdit] = useState<DelegationView | 'new'>();
  const load = () => get<{ delegations: DelegationView[] }>('/api/admin/delegations').then((r) => setList(r.delegations), setError);
  useEffect(() => {
    void load();
    get<{ roles: Role[] }>('/api/admin/roles').then((r) => setRoles(r.roles), setError);
  }, []);
  return (
    <>
      <ErrorText error={error} />
      <table>
        <caption className="sr-only">Delegations</caption>
        <thead>
          <tr>
            <th scope="col">Delegation</th>
            <th scope="col">Role</th>
            <th scope="col">Scope</th>
            <th scope="col">Assigned to</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list?.map((d) => (
            <tr key={d.id} data-testid={`delegation-${d.id}`}>
              <td>{d.id}</td>
              <td>{d.roleName ?? d.roleId}</td>
              <td>{d.scope.map((x) => ouPath(x.dn)).join('; ')}</td>
              <td>{d.assignees.map((x) => `${x.name}${x.kind === 'group' ? ' (group)' : ''}`).join(', ')}</td>
              <td>
                <button type="button" className="link" onClick={() => setEdit(d)}>
                  Edit {d.id}
                </button>
              </td>
            </tr>
          ))}
          {list?.length === 0 && (
            <tr>
              <td colSpan={5}>No delegation.</td>
            </tr>
          )}
        </tbody>
      </table>
      <button type="button" onClick={() => setEdit('new')}>
        New delegation
      </button>
      {edit && (
        <DelegationEditor
          delegation={edit === 'new' ? undefined : edit}
          roles={roles}
          onClose={() => {
            setEdit(undefined);
            void load();
          }}
        />
      )}
    </>
  );
}

const lines = (t: string) => t.split('\n').map((x) => x.trim()).filter(Boolean);

/** Create, replace or delete a delegation (PUT/DELETE /api/admin/delegations/{id}, step-up). */
function DelegationEditor({ delegation, roles, onClose }: { delegation?: DelegationView; roles: Role[]; onClose: () => void }) {
  const [id, setId] = useState(delegation?.id ?? '');
  const [roleId, setRoleId] = useState(delegation?.roleId ?? roles[0]?.id ?? '');
  const [scope, setScope] = useState((delegation?.scope ?? []).map((x) => x.dn).join('\n'));
  const [assignees, setAssignees] = useState((delegation?.assignees ?? []).map((x) => x.name || x.guid).join('\n'));
  const { withStepUp } = useStepUp();
  const a = useAction();
  const body = { roleId, scope: lines(scope), assignees: lines(assignees), ...(delegation?.version !== undefined ? { version: delegation.version } : {}) };
  const path = `/api/admin/delegations/${encodeURIComponent(id.trim())}`;
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => withStepUp(() => put(path, body)));
    if (r) onClose();
  };
  const remove = async () => {
    if (!window.confirm(`Delete the delegation ${delegation!.id}? Its assignees lose what it grants.`)) return;
    const r = await a.run(() => withStepUp(() => del(path).then(() => true)));
    if (r) onClose();
  };
  return (
    <Modal title={delegation ? `Edit delegation ${delegation.id}` : 'New delegation'} onClose={onClose} wide>
      <form onSubmit={submit}>
        {!delegation && (
          <label>
            Id (lower-case letters, digits, hyphens)
            <input name="delegation-id" required pattern="[a-z0-9][a-z0-9\-]{0,63}" value={id} onChange={(e) => setId(e.target.value)} />
          </label>
        )}
        <label>
          Role
          <select name="delegation-role" required value={roleId} onChange={(e) => setRoleId(e.target.value)}>
            {roles.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Scope: OUs inside the managed OUs, one per line (DN or GUID)
          <textarea name="delegation-scope" required rows={3} value={scope} onChange={(e) => setScope(e.target.value)} />
        </label>
        <label>
          Assigned to: users or security groups, one per line (login, DN or GUID)
          <textarea name="delegation-assignees" required rows={3} value={assignees} onChange={(e) => setAssignees(e.target.value)} />
        </label>
        {isSelfWidening(a.error) ? <SelfWidening error={a.error} action="delegations.save" target={id.trim()} parameters={body} onFiled={onClose} /> : <ErrorText error={a.error} />}
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Save delegation
          </button>
          {delegation && (
            <button type="button" className="secondary" disabled={a.busy} onClick={remove}>
              Delete delegation
            </button>
          )}
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function SuperAdministrators({ me }: { me: Me }) {
  const [list, setList] = useState<Array<{ guid: string; username?: string; name?: string; displayName?: string }>>();
  const [error, setError] = useState<unknown>();
  const [who, setWho] = useState('');
  const { withStepUp } = useStepUp();
  const a = useAction();
  const load = () =>
    get<{ superAdministrators?: typeof list; items?: typeof list }>('/api/admin/super-administrators').then((r) => setList(r.superAdministrators ?? r.items ?? []), setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <ErrorText error={error} />
      <ul className="plain">
        {list?.map((s) => (
          <li key={s.guid}>{s.displayName ?? s.username ?? s.name ?? s.guid}</li>
        ))}
      </ul>
      {me.superAdministrator && (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            if (await a.run(() => withStepUp(() => post('/api/admin/super-administrators', { operator: who.trim() })))) {
              setWho('');
              void load();
            }
          }}
        >
          <label>
            Grant to (login or GUID)
            <input name="grant-super" required value={who} onChange={(e) => setWho(e.target.value)} />
          </label>
          <ErrorText error={a.error} />
          <button type="submit" disabled={a.busy}>
            Grant
          </button>
        </form>
      )}
    </>
  );
}

function ApprovalSettings() {
  const [s, setS] = useState<{ settings: Record<string, any>; version?: number }>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    void a.run(() => withStepUp(() => get('/api/admin/approvals/settings')).then(setS));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  if (!s) return <ErrorText error={a.error} />;
  const st = s.settings ?? s;
  const set = (k: string, v: unknown) => setS({ ...s, settings: { ...st, [k]: v } });
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        if (await a.run(() => withStepUp(() => put('/api/admin/approvals/settings', { ...st, version: s.version })))) setSaved(true);
      }}
    >
      <label>
        Request lifetime (days)
        <input type="number" min={1} max={90} name="lifetime" value={st.requestLifetimeDays} onChange={(e) => set('requestLifetimeDays', Number(e.target.value))} />
      </label>
      <label>
        Approvals needed (instance)
        <select name="instance-count" value={st.instanceApprovalsNeeded} onChange={(e) => set('instanceApprovalsNeeded', Number(e.target.value))}>
          <option value={1}>1</option>
          <option value={2}>2</option>
        </select>
      </label>
      <label className="check">
        <input type="checkbox" checked={!!st.ticketRequired} onChange={(e) => set('ticketRequired', e.target.checked)} />
        Requests must carry a ticket
      </label>
      <p className="hint">
        Always require approval for: {(st.alwaysRequire as string[] | undefined)?.join(', ') || 'nothing'}. Delegations requiring approval: {Object.keys(st.delegations ?? {}).join(', ') || 'none'}.
      </p>
      <ErrorText error={a.error} />
      {saved && <p role="status">Saved.</p>}
      <button type="submit" disabled={a.busy}>
        Save approval settings
      </button>
    </form>
  );
}

interface ChannelView {
  id: string;
  name: string;
  type: 'webhook' | 'ntfy' | 'teams' | 'chat';
  enabled: boolean;
  topic?: string;
  urlOrigin: string;
  secretSet: boolean;
  tokenSet: boolean;
  events?: string[];
  lastDelivery?: { at?: string; outcome?: string; status?: number };
}
const CHANNEL_TYPES = [
  ['webhook', 'Generic webhook (signed)'],
  ['ntfy', 'Topic push'],
  ['teams', 'Team-chat card'],
  ['chat', 'Chat text'],
] as const;
const EVENTS = [
  ['approval_requested', 'A request waits for approval (to the approvers)'],
  ['approval_decided', 'A request was decided (to the requester)'],
] as const;

function Channels() {
  const [list, setList] = useState<ChannelView[]>();
  const [error, setError] = useState<unknown>();
  const [edit, setEdit] = useState<ChannelView | 'new'>();
  const load = () => get<{ channels: ChannelView[] }>('/api/admin/notifications/channels').then((r) => setList(r.channels), setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <ErrorText error={error} />
      <p className="hint">Channel URLs, secrets and tokens are never shown again after they are saved (only the URL's origin).</p>
      <ul className="plain">
        {list?.map((c) => (
          <li key={c.id} data-testid={`channel-${c.id}`}>
            <strong>{c.name}</strong> ({CHANNEL_TYPES.find(([t]) => t === c.type)?.[1] ?? c.type}, {c.urlOrigin}
            {c.topic ? `, topic ${c.topic}` : ''}){c.enabled ? '' : ' — disabled'} — {c.events?.join(', ') || 'no event'}{' '}
            <button type="button" className="link" onClick={() => setEdit(c)}>
              Edit {c.name}
            </button>
          </li>
        ))}
        {list?.length === 0 && <li>No channel.</li>}
      </ul>
      <button type="button" onClick={() => setEdit('new')}>
        New channel
      </button>
      {edit && (
        <ChannelEditor
          channel={edit === 'new' ? undefined : edit}
          onClose={() => {
            setEdit(undefined);
            void load();
          }}
        />
      )}
    </>
  );
}

/** Create, replace or delete a notification channel; an empty URL, secret or token keeps the stored one. */
function ChannelEditor({ channel, onClose }: { channel?: ChannelView; onClose: () => void }) {
  const [id, setId] = useState(channel?.id ?? '');
  const [name, setName] = useState(channel?.name ?? '');
  const [type, setType] = useState<ChannelView['type']>(channel?.type ?? 'webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [topic, setTopic] = useState(channel?.topic ?? '');
  const [token, setToken] = useState('');
  const [events, setEvents] = useState<string[]>(channel?.events ?? ['approval_requested']);
  const [enabled, setEnabled] = useState(channel?.enabled ?? true);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const path = `/api/admin/notifications/channels/${encodeURIComponent(id.trim())}`;
  const keeps = (set: boolean) => (channel && set ? ' (empty keeps the saved one)' : '');
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const body = {
      name: name.trim(),
      type,
      events,
      enabled,
      ...(url.trim() ? { url: url.trim() } : {}),
      ...(type === 'webhook' && secret ? { secret } : {}),
      ...(type === 'ntfy' ? { topic: topic.trim(), ...(token ? { token } : {}) } : {}),
    };
    const r = await a.run(() => withStepUp(() => put(path, body)));
    if (r) onClose();
  };
  const remove = async () => {
    if (!window.confirm(`Delete the channel ${channel!.name}? It is sent nothing more.`)) return;
    const r = await a.run(() => withStepUp(() => del(path).then(() => true)));
    if (r) onClose();
  };
  return (
    <Modal title={channel ? `Edit channel ${channel.name}` : 'New notification channel'} onClose={onClose} wide>
      <form onSubmit={submit}>
        {!channel && (
          <label>
            Id (lower-case letters, digits, hyphens)
            <input name="channel-id" required pattern="[a-z0-9][a-z0-9\-]{0,63}" value={id} onChange={(e) => setId(e.target.value)} />
          </label>
        )}
        <label>
          Name
          <input name="channel-name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Kind
          <select name="channel-type" value={type} onChange={(e) => setType(e.target.value as ChannelView['type'])}>
            {CHANNEL_TYPES.map(([t, label]) => (
              <option key={t} value={t}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          URL (https){channel && type === channel.type ? ` (now ${channel.urlOrigin}…; empty keeps it)` : ''}
          <input name="channel-url" type="url" autoComplete="off" required={!channel || type !== channel.type} maxLength={2048} value={url} onChange={(e) => setUrl(e.target.value)} />
        </label>
        {type === 'webhook' && (
          <label>
            Signing secret, at least 32 characters{keeps(!!channel?.secretSet)}
            <input name="channel-secret" type="password" autoComplete="new-password" minLength={32} maxLength={512} value={secret} onChange={(e) => setSecret(e.target.value)} />
          </label>
        )}
        {type === 'ntfy' && (
          <>
            <label>
              Topic
              <input name="channel-topic" required pattern="[A-Za-z0-9_\-]{1,64}" value={topic} onChange={(e) => setTopic(e.target.value)} />
            </label>
            <label>
              Access token{keeps(!!channel?.tokenSet)}
              <input name="channel-token" type="password" autoComplete="new-password" maxLength={1024} value={token} onChange={(e) => setToken(e.target.value)} />
            </label>
          </>
        )}
        <fieldset>
          <legend>Sent when</legend>
          {EVENTS.map(([ev, label]) => (
            <label key={ev} className="check">
              <input type="checkbox" name={ev} checked={events.includes(ev)} onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))} />
              {label}
            </label>
          ))}
        </fieldset>
        <label className="check">
          <input type="checkbox" name="channel-enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          Enabled
        </label>
        <ErrorText error={a.error} />
        <div className="actions">
          <button type="submit" disabled={a.busy || events.length === 0}>
            Save channel
          </button>
          {channel && (
            <button type="button" className="secondary" disabled={a.busy} onClick={remove}>
              Delete channel
            </button>
          )}
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function StepUpMode({ me }: { me: Me }) {
  const [mode, setMode] = useState(me.stepUpMode ?? 'authenticator');
  const [saved, setSaved] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (await a.run(() => withStepUp(() => put('/api/settings/step-up-mode', { mode })))) setSaved(mode);
      }}
    >
      <fieldset>
        <legend>How operators confirm sensitive actions</legend>
        {(['authenticator', 'password', 'none'] as const).map((m) => (
          <label key={m} className="check">
            <input type="radio" name="mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
            {m === 'authenticator' ? 'Authenticator code (recommended)' : m === 'password' ? 'Directory password again' : 'No confirmation (LAPS still asks)'}
          </label>
        ))}
      </fieldset>
      <ErrorText error={a.error} />
      {saved && <p role="status">Step-up mode is now {saved}.</p>}
      <button type="submit" disabled={a.busy}>
        Save step-up mode
      </button>
    </form>
  );
}

const CHECK_WORDS: Record<string, string> = {
  laps_schema_windows: 'The directory has the Windows LAPS schema.',
  laps_schema_legacy_only: 'The directory has only the legacy LAPS schema.',
  laps_schema_missing: 'The directory has no LAPS schema.',
  laps_identity_upn_missing: 'The LAPS account UPN is not set on the console.',
  laps_identity_not_configured: 'The password service holds no LAPS account.',
  laps_bind_failed: 'The LAPS account cannot sign in.',
  laps_identity_ok: 'The LAPS account signs in.',
  laps_service_unreachable: 'The console cannot reach the password service.',
  laps_read_rights_effective: 'The LAPS account can read the password attribute.',
  laps_read_rights_missing: 'The LAPS account cannot read the password attribute.',
  laps_encrypted_only: 'The sample stores only an encrypted password (unsupported).',
  laps_expire_rights_present: 'The LAPS account may write the expiration time.',
  laps_expire_rights_missing: 'The LAPS account may not write the expiration time.',
  no_sample_computer: 'No LAPS-managed standard computer in this scope: rights cannot be verified.',
  laps_needs_password_service: 'A delegation names a LAPS action but the helpdesk is off.',
};

function Diagnostics() {
  const [d, setD] = useState<{ checks: string[]; scopes: Array<{ scope: string; checks: string[]; sample?: string }> }>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    get('/api/diagnostics/laps').then(setD, setError);
  }, []);
  const line = (c: string) => (
    <li key={c}>
      <code>{c}</code> {CHECK_WORDS[c] ?? ''}
    </li>
  );
  return (
    <>
      <h2>LAPS rights</h2>
      <ErrorText error={error} />
      {d && (
        <div data-testid="diagnostics">
          <ul className="plain">{d.checks.map(line)}</ul>
          {d.scopes.map((s, i) => (
            <div key={i}>
              <h3>{ouPath(s.scope)}{s.sample ? ` (sample ${s.sample})` : ""}</h3>
              <ul className="plain">{s.checks.map(line)}</ul>
            </div>
          ))}
        </div>
      )}
    </>
  );
}

interface Branding {
  title: string | null;
  accentColour: string;
  showOnSignIn: boolean;
}

/** Instance identification: the title operators see in the top bar and tab, its colour, and whether the sign-in page shows it. */
function Identification() {
  const [loaded, setLoaded] = useState<{ branding: Branding; version: number }>();
  const [error, setError] = useState<unknown>();
  const [title, setTitle] = useState('');
  const [accent, setAccent] = useState('#1f5fbf');
  const [show, setShow] = useState(false);
  const [saved, setSaved] = useState(false);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const load = () =>
    get<{ branding: Branding; version: number }>('/api/settings/branding').then((r) => {
      setLoaded(r);
      setTitle(r.branding.title ?? '');
      setAccent(r.branding.accentColour);
      setShow(r.branding.showOnSignIn);
    }, setError);
  useEffect(() => {
    void load();
  }, []);
  // the fields appear with the saved values: nothing typed before they arrive is overwritten
  if (!loaded) return error ? <ErrorText error={error} /> : <p aria-busy="true">Loading…</p>;
  return (
    <form
      aria-label="Instance identification"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        const r = await a.run(() => withStepUp(() => put('/api/settings/branding', { title, accentColour: accent, showOnSignIn: show, version: loaded?.version })));
        if (r) {
          setSaved(true);
          void load();
        }
      }}
    >
      <ErrorText error={error} />
      <label>
        Title <span className="hint">(1 to 60 characters, plain text; shown in the top bar and the tab title)</span>
        <input name="branding-title" required maxLength={60} value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label>
        Accent colour
        <input name="branding-accent" type="color" value={accent} onChange={(e) => setAccent(e.target.value)} />
      </label>
      <label className="check">
        <input name="branding-show" type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} />
        Show the title on the sign-in page (visitors who are not signed in see it)
      </label>
      <ErrorText error={a.error} />
      {saved && <p role="status">Saved. Operators see the new title at their next page load.</p>}
      <button type="submit" disabled={a.busy || !loaded}>
        Save identification
      </button>
    </form>
  );
}

interface OperatorRow {
  id: string;
  username: string;
  displayName: string | null;
  provider: string | null;
  subject: string | null;
  lastSignInAt: string | null;
  authenticator: 'enrolled' | 'pending' | 'none';
  directoryAccount: 'enabled' | 'disabled' | 'missing';
  roles: string[];
}

/** Operator records: who signed in, how, with which roles now; a record can be deleted (its authenticator and sessions end). */
function Operators({ me }: { me: Me }) {
  const [ops, setOps] = useState<OperatorRow[]>();
  const [error, setError] = useState<unknown>();
  const [confirm, setConfirm] = useState<OperatorRow>();
  const [done, setDone] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const load = () => get<{ operators: OperatorRow[] }>('/api/admin/operators').then((r) => setOps(r.operators), setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <ErrorText error={error} />
      {done && <p role="status">{done}</p>}
      <table>
        <caption className="sr-only">Operators</caption>
        <thead>
          <tr>
            <th scope="col">Operator</th>
            <th scope="col">Signed in with</th>
            <th scope="col">Last sign-in</th>
            <th scope="col">Authenticator</th>
            <th scope="col">Roles now</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {ops?.map((o) => (
            <tr key={o.id}>
              <td>
                {o.displayName ? `${o.displayName} (${o.username})` : o.username}
                {o.directoryAccount !== 'enabled' && <span className="hint"> · directory account {o.directoryAccount}</span>}
              </td>
              <td>{o.provider === 'access' ? `access platform (${o.subject})` : o.provider === 'ad' ? 'directory password' : '—'}</td>
              <td>{o.lastSignInAt ? new Date(o.lastSignInAt).toLocaleString() : '—'}</td>
              <td>{o.authenticator === 'enrolled' ? 'set up' : o.authenticator === 'pending' ? 'enrolment started' : 'none'}</td>
              <td>{o.roles.length ? o.roles.join(', ') : 'none'}</td>
              <td>
                {o.username !== me.username && (
                  <button type="button" className="secondary" onClick={() => setConfirm(o)}>
                    Delete {o.username}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {confirm && (
        <Modal title={`Delete the record of ${confirm.username}`} onClose={() => setConfirm(undefined)}>
          <p>
            The console forgets {confirm.username}: their authenticator is cleared and their sessions end. Their roles come from delegations and stay: to
            take access away, change the delegations.
          </p>
          <ErrorText error={a.error} />
          <div className="actions">
            <button
              type="button"
              disabled={a.busy}
              onClick={async () => {
                if (await a.run(() => withStepUp(() => del(`/api/admin/operators/${confirm.id}`)))) {
                  setDone(`The record of ${confirm.username} was deleted.`);
                  setConfirm(undefined);
                  void load();
                }
              }}
            >
              Delete the record
            </button>
            <button type="button" className="secondary" onClick={() => setConfirm(undefined)}>
              Cancel
            </button>
          </div>
        </Modal>
      )}
    </>
  );
}

/** The protection list (members of these groups are VIP) and the LAPS account, read-only. */
function Protection() {
  const [groups, setGroups] = useState<Array<{ id: string; dn: string; found: boolean }>>();
  const [laps, setLaps] = useState<{ upn: string | null; source: string | null; helpdeskEnabled: boolean }>();
  const [error, setError] = useState<unknown>();
  const [add, setAdd] = useState('');
  const { withStepUp } = useStepUp();
  const a = useAction();
  const load = () => get<{ groups: typeof groups }>('/api/admin/protected-groups').then((r) => setGroups(r.groups), setError);
  useEffect(() => {
    void load();
    get('/api/admin/laps-account').then(setLaps, setError);
  }, []);
  return (
    <>
      <h2>Protected groups</h2>
      <p className="hint">Members of these groups (direct or nested) are VIP: acting on them also needs vip.manage.</p>
      <ErrorText error={error} />
      <ul className="plain" data-testid="protected-groups">
        {groups?.map((g) => (
          <li key={g.id}>
            {ouPath(g.dn)}
            {!g.found && <span className="hint"> (not found in the directory)</span>}{' '}
            <button type="button" className="link" disabled={a.busy} onClick={() => void a.run(() => withStepUp(() => del(`/api/admin/protected-groups/${g.id}`))).then((r) => r && load())}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await a.run(() => withStepUp(() => post('/api/admin/protected-groups', { group: add.trim() })))) {
            setAdd('');
            void load();
          }
        }}
      >
        <label>
          Add a security group (name, DN or GUID)
          <input name="protected-group" required value={add} onChange={(e) => setAdd(e.target.value)} />
        </label>
        <ErrorText error={a.error} />
        <button type="submit" disabled={a.busy}>
          Add to the protection list
        </button>
      </form>
      <h2>LAPS account</h2>
      {laps && (
        <dl className="facts" data-testid="laps-account">
          <dt>Account (UPN)</dt>
          <dd>{laps.upn ?? 'not set'}</dd>
          <dt>Set by</dt>
          <dd>{laps.source ?? '—'}</dd>
        </dl>
      )}
      <p className="hint">Read-only: the LAPS account and its password are set on the host for the password service; the console never holds the password.</p>
    </>
  );
}

interface ImportSummary {
  dryRun: boolean;
  roles: { created: string[]; updated: string[]; unchanged: string[] };
  delegations: { created: string[]; updated: string[]; unchanged: string[] };
  approversToChoose: string[];
}

/** Baseline: download this console's roles, delegations and approval settings; import another's (checked first, then applied). */
function BaselineTransfer() {
  const [file, setFile] = useState<{ name: string; baseline: unknown }>();
  const [replace, setReplace] = useState(false);
  const [preview, setPreview] = useState<ImportSummary>();
  const [done, setDone] = useState<ImportSummary>();
  const [readError, setReadError] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const run = (dryRun: boolean) => a.run(() => withStepUp(() => post<ImportSummary>('/api/admin/baseline/import', { baseline: file!.baseline, replace, dryRun })));
  const list = (label: string, ids: string[]) => (ids.length ? <li>{`${label}: ${ids.join(', ')}`}</li> : null);
  const summary = (s: ImportSummary) => (
    <ul className="plain" data-testid="baseline-summary">
      {list('Roles created', s.roles.created)}
      {list('Roles replaced', s.roles.updated)}
      {list('Delegations created', s.delegations.created)}
      {list('Delegations replaced', s.delegations.updated)}
      {list('Unchanged roles', s.roles.unchanged)}
      {list('Unchanged delegations', s.delegations.unchanged)}
      {list('Choose approvers for (until then the instance approvers decide)', s.approversToChoose)}
    </ul>
  );
  const problems = a.error instanceof ApiFailure && Array.isArray(a.error.body.problems) ? (a.error.body.problems as Array<{ where: string; code: string }>) : [];
  return (
    <>
      <h2>Export</h2>
      <p>
        Roles, delegations (scope as OU paths below the domain root, assignees by name) and approval settings (actions and counts; never approvers).
      </p>
      <p>
        <a href="/api/admin/baseline" download data-testid="baseline-download">
          Download the baseline
        </a>{' '}
        <span className="hint">(the download is audited)</span>
      </p>
      <h2>Import</h2>
      <label>
        Baseline file (JSON)
        <input
          type="file"
          name="baseline-file"
          accept="application/json,.json"
          onChange={async (e) => {
            setPreview(undefined);
            setDone(undefined);
            setReadError(undefined);
            const f = e.target.files?.[0];
            if (!f) return setFile(undefined);
            try {
              setFile({ name: f.name, baseline: JSON.parse(await f.text()) });
            } catch {
              setFile(undefined);
              setReadError('That file is not JSON.');
            }
          }}
        />
      </label>
      <label className="check">
        <input type="checkbox" name="baseline-replace" checked={replace} onChange={(e) => setReplace(e.target.checked)} />
        Replace roles and delegations that exist here with other content (nothing is ever deleted)
      </label>
      {readError && <p className="error">{readError}</p>}
      <ErrorText error={a.error} />
      {problems.length > 0 && (
        <ul className="plain error" aria-label="Problems of the baseline">
          {problems.map((p, i) => (
            <li key={i}>
              {p.where}: {WORDS[p.code] ?? p.code}
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        <button
          type="button"
          className="secondary"
          disabled={!file || a.busy}
          onClick={async () => {
            setDone(undefined);
            const r = await run(true);
            setPreview(r ?? undefined);
          }}
        >
          Check the baseline
        </button>
        <button
          type="button"
          disabled={!file || !preview || a.busy}
          onClick={async () => {
            const r = await run(false);
            if (r) {
              setDone(r);
              setPreview(undefined);
            }
          }}
        >
          Import
        </button>
      </div>
      {preview && (
        <div role="status">
          <p>The check passed. Importing would make these changes:</p>
          {summary(preview)}
        </div>
      )}
      {done && (
        <div role="status">
          <p>Imported.</p>
          {summary(done)}
        </div>
      )}
    </>
  );
}
