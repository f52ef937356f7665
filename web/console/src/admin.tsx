import { useEffect, useState } from 'react';
import { get, post, put, type Me } from './api';
import { ErrorText, Link, Modal, ouPath, useAction, useStepUp } from './ui';

// Administration (settings.manage): roles, delegations, Super administrators, approval settings,
// notification channels, step-up mode, LAPS diagnostics: what the API offers, nothing more.
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
      {tab === 'diagnostics' && <Diagnostics />}
    </section>
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
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const id = role?.id ?? name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    const r = await a.run(() => withStepUp(() => put(`/api/admin/roles/${encodeURIComponent(id)}`, { name: name.trim(), permissions: perms, ...(role ? { version: role.version } : {}) })));
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
        <ErrorText error={a.error} />
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

function Delegations() {
  const [list, setList] = useState<Array<{ id: string; roleId: string; roleName?: string; scope: Array<{ dn?: string } | string>; assignees: Array<{ name?: string } | string> }>>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    get<{ delegations: typeof list }>('/api/admin/delegations').then((r) => setList(r.delegations), setError);
  }, []);
  const txt = (x: unknown) => (typeof x === 'string' ? x : ((x as { name?: string; dn?: string }).name ?? ouPath((x as { dn?: string }).dn)));
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
          </tr>
        </thead>
        <tbody>
          {list?.map((d) => (
            <tr key={d.id}>
              <td>{d.id}</td>
              <td>{d.roleName ?? d.roleId}</td>
              <td>{d.scope.map(txt).join('; ')}</td>
              <td>{d.assignees.map(txt).join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
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

function Channels() {
  const [list, setList] = useState<Array<{ id: string; events?: string[]; kind?: string }>>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    get<{ channels: typeof list }>('/api/admin/notifications/channels').then((r) => setList(r.channels), setError);
  }, []);
  return (
    <>
      <ErrorText error={error} />
      <p className="hint">Channel URLs and secrets are never shown again after they are saved.</p>
      <ul className="plain">
        {list?.map((c) => (
          <li key={c.id}>
            {c.id} — {c.events?.join(', ')}
          </li>
        ))}
        {list?.length === 0 && <li>No channel.</li>}
      </ul>
    </>
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
