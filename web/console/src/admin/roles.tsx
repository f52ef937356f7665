import { useState } from 'react';
import { get, put } from '../api';
import { AdminList, Empty, ErrorText, FormDialog, Loaded, useAction, useLoaded, useStepUp } from '../ui';
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
  return (
    <Loaded data={data} error={error} onRetry={reload} loading="Loading the roles…">
      {(roles) => (
        <AdminList
          caption="Roles"
          rows={roles}
          rowKey={(r) => r.id}
          rowTestId={(r) => `role-${r.id}`}
          name={(r) => r.name}
          empty={<Empty>No role yet.</Empty>}
          columns={[
            { header: 'Role', cell: (r) => r.name },
            { header: 'Grants', cell: (r) => <Grants role={r} />, className: 'perms' },
            { header: 'Used by', cell: (r) => r.delegations?.join(', ') || <span className="muted">no delegation</span> },
          ]}
          addLabel="New role"
          editor={(r, done) => <RoleEditor role={r} onClose={done.saved} />}
          editLabel={(r) => `Edit ${r.name}`}
          canEdit={(r) => !r.readOnly}
          onChanged={reload}
          buttons="link"
        />
      )}
    </Loaded>
  );
}

function RoleEditor({ role, onClose }: { role?: Role; onClose: () => void }) {
  const [name, setName] = useState(role?.name ?? '');
  const [perms, setPerms] = useState<string[]>(role?.permissions ?? []);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const id = role?.id ?? name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const body = { name: name.trim(), permissions: PERMISSIONS.filter((p) => perms.includes(p)), ...(role ? { version: role.version } : {}) };
  const submit = async () => {
    const r = await a.run(() => withStepUp(() => put(`/api/admin/roles/${encodeURIComponent(id)}`, body)));
    if (r) onClose();
  };
  return (
    <FormDialog
      title={role ? `Edit role ${role.name}` : 'New role'}
      onClose={onClose}
      onSubmit={submit}
      busy={a.busy}
      errorSlot={isSelfWidening(a.error) ? <SelfWidening error={a.error} action="roles.save" target={id} parameters={body} onFiled={onClose} /> : <ErrorText error={a.error} />}
      submit="Save role"
      wide
    >
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
    </FormDialog>
  );
}
