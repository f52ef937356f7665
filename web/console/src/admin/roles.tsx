import { useState } from 'react';
import { get, put } from '../api';
import { Busy, DataTable, Empty, ErrorText, Loaded, Modal, useAction, useLoaded, useStepUp } from '../ui';
import { PERMISSION_GROUPS, PERMISSIONS, permissionWords } from './permissions';
import { isSelfWidening, SelfWidening } from './self-widening';

// Roles: what each grants, in words with the code beside, who uses it; the editor groups the
// permissions by what they act on.

export interface Role {
  id: string;
  name: string;
  permissions: string[];
  builtIn: boolean;
  readOnly: boolean;
  version?: number;
  delegations?: string[];
}

export const loadRoles = () => get<{ roles: Role[] }>('/api/admin/roles').then((r) => r.roles);

function Grants({ role }: { role: Role }) {
  if (role.builtIn) return <span>Every permission (built in, read-only)</span>;
  if (!role.permissions.length) return <span className="muted">Nothing</span>;
  return (
    <ul className="plain perms">
      {PERMISSIONS.filter((p) => role.permissions.includes(p)).map((p) => (
        <li key={p}>
          {permissionWords(p)} <code className="muted">{p}</code>
        </li>
      ))}
    </ul>
  );
}

export function Roles() {
  const { data, error, reload } = useLoaded('roles', loadRoles);
  const [edit, setEdit] = useState<Role | 'new'>();
  return (
    <>
      <div className="actions">
        <button type="button" onClick={() => setEdit('new')}>
          New role
        </button>
      </div>
      <Loaded data={data} error={error} onRetry={reload} loading="Loading the roles…">
        {(roles) => (
          <DataTable
            caption="Roles"
            rows={roles}
            rowKey={(r) => r.id}
            rowTestId={(r) => `role-${r.id}`}
            empty={<Empty>No role yet.</Empty>}
            columns={[
              { header: 'Role', cell: (r) => r.name },
              { header: 'Grants', cell: (r) => <Grants role={r} />, className: 'perms' },
              { header: 'Used by', cell: (r) => r.delegations?.join(', ') || <span className="muted">no delegation</span> },
              {
                header: <span className="sr-only">Actions</span>,
                label: '',
                cell: (r) =>
                  !r.readOnly && (
                    <button type="button" className="link" onClick={() => setEdit(r)}>
                      Edit {r.name}
                    </button>
                  ),
              },
            ]}
          />
        )}
      </Loaded>
      {edit && (
        <RoleEditor
          role={edit === 'new' ? undefined : edit}
          onClose={() => {
            setEdit(undefined);
            reload();
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
  const body = { name: name.trim(), permissions: PERMISSIONS.filter((p) => perms.includes(p)), ...(role ? { version: role.version } : {}) };
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
        {PERMISSION_GROUPS.map((g) => (
          <fieldset key={g.group} className="grid">
            <legend>{g.group}</legend>
            {g.permissions.map(([p, words]) => (
              <label key={p} className="check">
                <input type="checkbox" name={p} checked={perms.includes(p)} onChange={(e) => setPerms(e.target.checked ? [...perms, p] : perms.filter((x) => x !== p))} />
                <span>
                  {words} <code className="muted">{p}</code>
                </span>
              </label>
            ))}
          </fieldset>
        ))}
        {isSelfWidening(a.error) ? <SelfWidening error={a.error} action="roles.save" target={id} parameters={body} onFiled={onClose} /> : <ErrorText error={a.error} />}
        <div className="actions">
          <Busy type="submit" busy={a.busy}>
            Save role
          </Busy>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
