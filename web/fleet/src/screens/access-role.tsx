import { useState } from 'react';
import { ApiFailure, get, post, type Me } from '../api';
import { usePolled } from '../poll';
import { Busy, ErrorText, Loaded, useAction } from '../../../shared/ui';

/**
 * The client's access role (docs/fleet.md, "Per-client access roles"): its YAML for every viewer of
 * the client; for administrators, create or refresh it in the cluster. A role of that name the fleet
 * did not make (409 would_overwrite) is replaced only after an explicit confirmation.
 */
export function AccessRoleSection({ me, code }: { me: Me; code: string }) {
  const { data, error } = usePolled(() => get<{ name: string; yaml: string }>(`/api/clients/${encodeURIComponent(code)}/access-role`), [code]);
  const a = useAction();
  const [done, setDone] = useState<{ name: string; outcome: 'created' | 'refreshed' | 'replaced' }>();
  const apply = async (overwrite: boolean) => {
    setDone(undefined);
    const r = await a.run(() => post<{ name: string; outcome: 'created' | 'refreshed' | 'replaced' }>(`/api/clients/${encodeURIComponent(code)}/access-role`, overwrite ? { overwrite: true } : {}));
    if (r) setDone(r);
  };
  const unmanaged = a.error instanceof ApiFailure && a.error.code === 'would_overwrite';
  const OUTCOME = { created: 'created in the cluster', refreshed: 'refreshed in the cluster (it was already the fleet\'s)', replaced: 'replaced in the cluster: the unmanaged role is now the fleet\'s' };
  return (
    <>
      <h2 id="access-role-title">Access role</h2>
      <p className="hint">
        The role that lets technicians reach this client's desktops and applications only. Give it to them in the access platform; a cluster administrator may also paste it into
        <code> tctl create -f</code>.
      </p>
      <Loaded data={data} error={error} loading="Reading the role…">
        {(role) => (
          <div data-testid="access-role">
            <p>
              Role <strong>{role.name}</strong>
            </p>
            <pre className="commands" tabIndex={0} aria-label={`The role ${role.name} in YAML`}>
              {role.yaml}
            </pre>
          </div>
        )}
      </Loaded>
      {me.admin && data && (
        <>
          <div className="actions">
            <Busy busy={a.busy} onClick={() => void apply(false)}>
              Create or refresh in the cluster
            </Busy>
          </div>
          <div aria-live="polite" data-testid="access-role-result">
            {done && (
              <p className="ok">
                {done.name} {OUTCOME[done.outcome]}.
              </p>
            )}
            {unmanaged ? (
              <div role="alert" className="error">
                <p>
                  The cluster already has a role named {data.name} that the fleet plane did not create (it lacks the label fleet-managed: &quot;true&quot;). Nothing was written. Replacing it
                  gives it exactly the rights above and drops whatever else it allowed: check with whoever made it first.
                </p>
                <button type="button" className="secondary" disabled={a.busy} onClick={() => void apply(true)}>
                  Replace the unmanaged role
                </button>
              </div>
            ) : (
              <ErrorText error={a.error} />
            )}
          </div>
        </>
      )}
    </>
  );
}
