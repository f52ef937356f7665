import { useEffect, useState } from 'react';
import { get, post, type Me } from '../api';
import { durationWords, timeLeft } from '../approval-words';
import { DataTable, Empty, ErrorText, Link, Loaded, useAction, useConfirm, useLoaded, when } from '../ui';

// "My temporary memberships" (issue 33): the memberships the operator asked for or holds, the
// active ones with the time left (counted down), the ended ones with how they ended; the
// requester ends an active one early.

export interface TemporaryMembership {
  request: string;
  reason: string;
  requester: { guid: string; username: string };
  group: { id: string; name: string };
  member: { id: string; name: string };
  durationMinutes: number;
  addedAt: string;
  expiresAt: string;
  state: 'active' | 'ended';
  ended?: { at: string; how: 'expired' | 'ended_early' | 'removed_by_hand'; by: string };
  removal?: { attempts: number; lastCode: string };
}

const ENDED: Record<string, string> = { expired: 'removed when the time was up', ended_early: 'ended early', removed_by_hand: 'removed by hand before the end' };

/** Re-render every 30 s so that the time left moves. */
function useTick(ms = 30_000) {
  const [, set] = useState(0);
  useEffect(() => {
    const t = setInterval(() => set((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
}

export function TemporaryMembershipsPage({ me }: { me: Me }) {
  const { data, error, reload } = useLoaded('mine', () => get<{ items: TemporaryMembership[]; truncated: boolean }>('/api/temporary-memberships'));
  const confirm = useConfirm();
  const a = useAction();
  const [said, setSaid] = useState<string>();
  useTick();
  const end = async (m: TemporaryMembership) => {
    if (!(await confirm({ title: `End the membership of ${m.group.name}`, body: `${m.member.name} is removed from ${m.group.name} now.`, confirm: 'End now', danger: true }))) return;
    if (await a.run(() => post(`/api/temporary-memberships/${encodeURIComponent(m.request)}/end`))) {
      setSaid(`${m.member.name} is no longer a member of ${m.group.name}.`);
      reload();
    }
  };
  return (
    <section aria-labelledby="jit-title">
      <h1 id="jit-title">My temporary memberships</h1>
      <p className="hint">Ask for one from a group's page. Each is removed when its time is up.</p>
      <div aria-live="polite">{said && <p className="ok" data-testid="jit-said">{said}</p>}</div>
      <ErrorText error={a.error} />
      <Loaded data={data} error={error} onRetry={reload} loading="Loading the memberships…">
        {({ items }) => (
          <DataTable
            caption="Temporary memberships"
            testId="temporary-memberships"
            rows={items}
            rowKey={(m) => m.request}
            rowTestId={(m) => `jit-${m.request}`}
            empty={<Empty>No temporary membership.</Empty>}
            columns={[
              { header: 'Group', cell: (m) => <Link to={`/groups/${m.group.id}`}>{m.group.name}</Link> },
              { header: 'Member', cell: (m) => m.member.name },
              { header: 'For', cell: (m) => durationWords(m.durationMinutes) },
              {
                header: 'Time left',
                cell: (m) =>
                  m.state === 'active' ? (
                    <span title={`Until ${when(m.expiresAt)}`} data-testid="jit-left">
                      {timeLeft(m.expiresAt)}
                      {!!m.removal?.attempts && <span className="badge warn"> removal failed, retried</span>}
                    </span>
                  ) : (
                    <span className="muted" data-testid="jit-ended">
                      {ENDED[m.ended?.how ?? ''] ?? 'ended'}, {when(m.ended?.at ?? m.expiresAt)}
                    </span>
                  ),
              },
              { header: 'Request', cell: (m) => <Link to={`/approvals/${m.request}`}>Open</Link> },
              {
                header: <span className="sr-only">End</span>,
                label: '',
                cell: (m) =>
                  m.state === 'active' && m.requester.username.toLowerCase() === me.username.toLowerCase() ? (
                    <button type="button" className="secondary" disabled={a.busy} onClick={() => void end(m)}>
                      End now<span className="sr-only"> the membership of {m.group.name}</span>
                    </button>
                  ) : null,
              },
            ]}
          />
        )}
      </Loaded>
    </section>
  );
}
