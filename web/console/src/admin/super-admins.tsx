import { useState } from 'react';
import { get, post, type Me } from '../api';
import { Busy, Empty, ErrorText, Loaded, useAction, useLoaded, useStepUp } from '../ui';
import { PrincipalPicker, type Principal } from './pickers';

interface SuperAdministrator {
  guid: string;
  username?: string;
  name?: string;
  displayName?: string;
}

/** The Super administrators: every permission on every managed OU. Only a Super administrator grants it. */
export function SuperAdministrators({ me }: { me: Me }) {
  const { data, error, reload } = useLoaded('super', () =>
    get<{ superAdministrators?: SuperAdministrator[]; items?: SuperAdministrator[] }>('/api/admin/super-administrators').then((r) => r.superAdministrators ?? r.items ?? []),
  );
  const [who, setWho] = useState<Principal[]>([]);
  const { withStepUp } = useStepUp();
  const a = useAction();
  return (
    <>
      <p className="hint">A Super administrator holds every permission on every managed OU, including this screen. Keep the list short.</p>
      <Loaded data={data} error={error} onRetry={reload}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No Super administrator.</Empty>
          ) : (
            <ul className="plain">
              {list.map((s) => (
                <li key={s.guid}>
                  {s.displayName ? `${s.displayName} (${s.username ?? s.name ?? s.guid})` : (s.username ?? s.name ?? s.guid)}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      {me.superAdministrator && (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            let ok = true;
            for (const p of who) ok = ok && !!(await a.run(() => withStepUp(() => post('/api/admin/super-administrators', { operator: p.guid }))));
            if (ok) setWho([]);
            reload();
          }}
        >
          <PrincipalPicker legend="Make Super administrator" kinds={['user']} value={who} onChange={setWho} />
          <ErrorText error={a.error} />
          <Busy type="submit" busy={a.busy} disabled={who.length === 0}>
            Grant
          </Busy>
        </form>
      )}
    </>
  );
}
