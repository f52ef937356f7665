import { useState } from 'react';
import { del, get, post } from '../api';
import { AdminList, Busy, Empty, ErrorText, Loaded, ouPath, useAction, useLoaded, useStepUp } from '../ui';
import { PrincipalPicker, type Principal } from './pickers';

/** The protection list (members of these groups are VIP) and the LAPS account, read-only. */
export function Protection() {
  const groups = useLoaded('protected', () => get<{ groups: Array<{ id: string; dn: string; found: boolean }> }>('/api/admin/protected-groups').then((r) => r.groups));
  const laps = useLoaded('laps-account', () => get<{ upn: string | null; source: string | null; helpdeskEnabled: boolean }>('/api/admin/laps-account'));
  const [add, setAdd] = useState<Principal[]>([]);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const name = (dn: string) => /^CN=((?:\\.|[^,\\])*)/i.exec(dn)?.[1]?.replace(/\\(.)/g, '$1') ?? dn;
  return (
    <>
      <h2>Protected groups</h2>
      <p className="hint">Members of these groups (direct or nested) are VIP: acting on them also needs the permission to act on protected accounts (vip.manage).</p>
      <Loaded data={groups.data} error={groups.error} onRetry={groups.reload}>
        {(list) => (
          <AdminList
            caption="Protected groups"
            testId="protected-groups"
            rows={list}
            rowKey={(g) => g.id}
            name={(g) => name(g.dn)}
            empty={<Empty>No protected group.</Empty>}
            columns={[
              { header: 'Group', cell: (g) => <strong>{name(g.dn)}</strong> },
              { header: 'Where', cell: (g) => (g.found ? ouPath(g.dn.replace(/^(?:\\.|[^,\\])*,/, '')) : <span className="hint">not found in the directory</span>) },
            ]}
            remove={{
              ask: (g) => ({ title: `Remove ${name(g.dn)} from the protection list?`, body: <p>Its members are no longer protected (VIP) unless another protected group holds them.</p>, confirm: 'Remove from the list', danger: true }),
              run: (g) => withStepUp(() => del(`/api/admin/protected-groups/${g.id}`)),
            }}
            buttons="link"
            onChanged={groups.reload}
          />
        )}
      </Loaded>
      <ErrorText error={a.error} />
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          let ok = true;
          for (const g of add) ok = ok && !!(await a.run(() => withStepUp(() => post('/api/admin/protected-groups', { group: g.guid }))));
          if (ok) setAdd([]);
          groups.reload();
        }}
      >
        <PrincipalPicker legend="Add security groups" kinds={['group']} value={add} onChange={setAdd} />
        <Busy type="submit" busy={a.busy} disabled={add.length === 0}>
          Add to the protection list
        </Busy>
      </form>
      <h2>LAPS account</h2>
      <Loaded data={laps.data} error={laps.error} onRetry={laps.reload}>
        {(l) => (
          <dl className="facts" data-testid="laps-account">
            <dt>Account (UPN)</dt>
            <dd>{l.upn ?? 'not set'}</dd>
            <dt>Set by</dt>
            <dd>{l.source ?? '—'}</dd>
          </dl>
        )}
      </Loaded>
      <p className="hint">Read-only: the LAPS account and its password are set on the host for the password service; the console never holds the password.</p>
    </>
  );
}
