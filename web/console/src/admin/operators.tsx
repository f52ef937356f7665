import { del, get, post, type Me } from '../api';
import { useState } from 'react';
import { DataTable, Empty, Loaded, useAction, useConfirm, useLoaded, useStepUp, when, ErrorText } from '../ui';

interface OperatorRow {
  id: string;
  username: string;
  displayName: string | null;
  provider: string | null;
  subject: string | null;
  lastSignInAt: string | null;
  authenticator: 'enrolled' | 'pending' | 'none';
  passkeys: number;
  directoryAccount: 'enabled' | 'disabled' | 'missing';
  roles: string[];
}

/** Operator records: who signed in, how, with which roles now; a record can be deleted (its authenticator and sessions end). */
export function Operators({ me }: { me: Me }) {
  const { data, error, reload } = useLoaded('operators', () => get<{ operators: OperatorRow[] }>('/api/admin/operators').then((r) => r.operators));
  const [done, setDone] = useState<string>();
  const { withStepUp } = useStepUp();
  const confirm = useConfirm();
  const a = useAction();
  const remove = async (o: OperatorRow) => {
    const ok = await confirm({
      title: `Delete the record of ${o.username}?`,
      body: (
        <p>
          The console forgets {o.username}: their authenticator is cleared and their sessions end. Their roles come from delegations and stay: to take access away, change the
          delegations.
        </p>
      ),
      confirm: 'Delete the record',
      danger: true,
    });
    if (ok && (await a.run(() => withStepUp(() => del(`/api/admin/operators/${o.id}`).then(() => true))))) {
      setDone(`The record of ${o.username} was deleted.`);
      reload();
    }
  };
  // recovery of a lost passkey (issue 32): every passkey of the operator goes, their sessions end
  const removePasskeys = async (o: OperatorRow) => {
    const ok = await confirm({
      title: `Remove the passkeys of ${o.username}?`,
      body: <p>Their {o.passkeys} passkey(s) will no longer sign them in or confirm actions, and their sessions end. They register new ones under My security.</p>,
      confirm: 'Remove the passkeys',
      danger: true,
    });
    if (ok && (await a.run(() => withStepUp(() => post(`/api/admin/operators/${o.id}/passkeys/reset`, { reason: 'passkey lost (removed by an administrator)' }).then(() => true))))) {
      setDone(`The passkeys of ${o.username} were removed.`);
      reload();
    }
  };
  return (
    <>
      <div aria-live="polite">{done && <p className="ok">{done}</p>}</div>
      <ErrorText error={a.error} />
      <Loaded data={data} error={error} onRetry={reload} loading="Loading the operators…">
        {(ops) => (
          <DataTable
            caption="Operators"
            rows={ops}
            rowKey={(o) => o.id}
            empty={<Empty>Nobody has signed in yet.</Empty>}
            columns={[
              {
                header: 'Operator',
                cell: (o) => (
                  <>
                    {o.displayName ? `${o.displayName} (${o.username})` : o.username}
                    {o.directoryAccount !== 'enabled' && <span className="hint"> · directory account {o.directoryAccount}</span>}
                  </>
                ),
              },
              { header: 'Signed in with', cell: (o) => (o.provider === 'access' ? `access platform (${o.subject})` : o.provider === 'ad' ? 'directory password' : '—') },
              { header: 'Last sign-in', cell: (o) => when(o.lastSignInAt) },
              { header: 'Authenticator', cell: (o) => (o.authenticator === 'enrolled' ? 'set up' : o.authenticator === 'pending' ? 'enrolment started' : 'none') },
              { header: 'Passkeys', cell: (o) => String(o.passkeys) },
              { header: 'Roles now', cell: (o) => (o.roles.length ? o.roles.join(', ') : 'none') },
              {
                header: <span className="sr-only">Actions</span>,
                label: '',
                cell: (o) =>
                  o.username !== me.username && (
                    <>
                      {o.passkeys > 0 && (
                        <button type="button" className="secondary" disabled={a.busy} onClick={() => void removePasskeys(o)}>
                          Remove passkeys of {o.username}
                        </button>
                      )}
                      <button type="button" className="secondary" disabled={a.busy} onClick={() => void remove(o)}>
                        Delete {o.username}
                      </button>
                    </>
                  ),
              },
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
