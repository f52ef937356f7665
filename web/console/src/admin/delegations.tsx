import { useState } from 'react';
import { del, get, put } from '../api';
import { AdminList, Empty, ErrorText, FormDialog, Loaded, Modal, ouPath, useAction, useConfirm, useLoaded, useStepUp } from '../ui';
import { OuTreePicker, PrincipalPicker, type Principal } from './pickers';
import { loadRoles, type Role } from './roles';
import { isSelfWidening, SelfWidening } from './self-widening';

// Delegations: a role over OUs, given to users or security groups. The editor picks OUs from the
// tree of the managed OUs and assignees from a directory search (no DN or GUID typed); a delete
// is confirmed in the app's own dialog.

export interface DelegationView {
  id: string;
  roleId: string;
  roleName?: string | null;
  scope: Array<{ guid: string; dn: string }>;
  assignees: Array<{ kind: 'user' | 'group'; guid: string; name: string }>;
  version?: number;
}

export const loadDelegations = () => get<{ delegations: DelegationView[] }>('/api/admin/delegations').then((r) => r.delegations);

export function Delegations() {
  const { data, error, reload } = useLoaded('delegations', async () => {
    const [list, roles] = await Promise.all([loadDelegations(), loadRoles()]);
    return { list, roles };
  });
  return (
    <Loaded data={data} error={error} onRetry={reload} loading="Loading the delegations…">
      {({ list, roles }) => (
        <AdminList
          caption="Delegations"
          rows={list}
          rowKey={(d) => d.id}
          rowTestId={(d) => `delegation-${d.id}`}
          name={(d) => d.id}
          empty={<Empty>No delegation: only the Super administrators can act.</Empty>}
          columns={[
            { header: 'Delegation', cell: (d) => d.id },
            { header: 'Role', cell: (d) => d.roleName ?? d.roleId },
            { header: 'Scope', cell: (d) => d.scope.map((x) => ouPath(x.dn)).join('; ') },
            { header: 'Assigned to', cell: (d) => d.assignees.map((x) => `${x.name}${x.kind === 'group' ? ' (group)' : ''}`).join(', ') },
          ]}
          addLabel="New delegation"
          editor={(d, done) => <DelegationEditor delegation={d} roles={roles} onClose={done.saved} />}
          editLabel={(d) => `Edit ${d.id}`}
          onChanged={reload}
          buttons="link"
        />
      )}
    </Loaded>
  );
}

/** Create, replace or delete a delegation (PUT/DELETE /api/admin/delegations/{id}, step-up). */
function DelegationEditor({ delegation, roles, onClose }: { delegation?: DelegationView; roles: Role[]; onClose: () => void }) {
  const delegable = roles.filter((r) => !r.builtIn);
  const [id, setId] = useState(delegation?.id ?? '');
  const [roleId, setRoleId] = useState(delegation?.roleId ?? '');
  const [scope, setScope] = useState<string[]>((delegation?.scope ?? []).map((x) => x.guid));
  const [assignees, setAssignees] = useState<Principal[]>((delegation?.assignees ?? []).map((x) => ({ kind: x.kind, guid: x.guid, name: x.name })));
  const [saved, setSaved] = useState(false);
  const { withStepUp } = useStepUp();
  const confirm = useConfirm();
  const a = useAction();
  const body = { roleId, scope, assignees: assignees.map((x) => x.guid), ...(delegation?.version !== undefined ? { version: delegation.version } : {}) };
  const path = `/api/admin/delegations/${encodeURIComponent(id.trim())}`;
  const submit = async () => {
    const r = await a.run(() => withStepUp(() => put(path, body)));
    if (r) setSaved(true);
  };
  const remove = async () => {
    if (!(await confirm({ title: `Delete the delegation ${delegation!.id}?`, body: <p>Its assignees lose what it grants at their next request.</p>, confirm: 'Delete the delegation', danger: true }))) return;
    const r = await a.run(() => withStepUp(() => del(path).then(() => true)));
    if (r) onClose();
  };
  if (saved)
    return (
      <Modal title={delegation ? `Edit delegation ${delegation.id}` : 'New delegation'} onClose={onClose}>
        <p role="status">The delegation {id.trim()} is saved: its assignees hold {roles.find((r) => r.id === roleId)?.name ?? roleId} on the chosen OUs from their next request.</p>
        <div className="actions">
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </Modal>
    );
  return (
    <FormDialog
      title={delegation ? `Edit delegation ${delegation.id}` : 'New delegation'}
      onClose={onClose}
      onSubmit={submit}
      busy={a.busy}
      errorSlot={isSelfWidening(a.error) ? <SelfWidening error={a.error} action="delegations.save" target={id.trim()} parameters={body} onFiled={onClose} /> : <ErrorText error={a.error} />}
      submit="Save delegation"
      submitDisabled={!scope.length || !assignees.length || !roleId}
      extra={
        delegation && (
          <button type="button" className="secondary" disabled={a.busy} onClick={() => void remove()}>
            Delete delegation
          </button>
        )
      }
      wide
    >
      {!delegation && (
        <label>
          Id (lower-case letters, digits, hyphens)
          <input name="delegation-id" required pattern="[a-z0-9][a-z0-9\-]{0,63}" value={id} onChange={(e) => setId(e.target.value)} />
        </label>
      )}
      <label>
        Role
        <select name="delegation-role" required value={roleId} onChange={(e) => setRoleId(e.target.value)}>
          <option value="" disabled>
            Choose a role
          </option>
          {delegable.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      <OuTreePicker legend="Scope: the OUs it covers (and what is below them)" value={scope} onChange={setScope} />
      <PrincipalPicker legend="Assigned to" value={assignees} onChange={setAssignees} />
      {(!scope.length || !assignees.length) && <p className="hint">Choose at least one OU and one user or group.</p>}
    </FormDialog>
  );
}
