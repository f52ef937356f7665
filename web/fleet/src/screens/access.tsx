import { get } from '../api';
import { usePolled } from '../poll';
import { DataTable, Empty, Link, Loaded, when } from '../../../shared/ui';

// The access gateways and the agents' auto-update rollout (read-only).

interface Gateway {
  id: string;
  hostname: string;
  clientCodes: string[];
  status: string;
  version: string | null;
  windowsServers: number;
  lastSeen: string | null;
}
interface AutoUpdate {
  mode?: string;
  targetVersion?: string;
  startVersion?: string;
  schedule?: string;
  strategy?: string;
  rollout: { state?: string; startTime?: string; groups: Array<{ name: string; state?: string; lastUpdateTime?: string; lastUpdateReason?: string; days: string[]; startHour?: number; presentCount?: number; upToDateCount?: number }> } | null;
  warnings: Array<{ code: string; resource: string }>;
  /** clients' update groups the rollout does not hold; null when the rollout could not be read */
  notScheduled: Array<{ name: string; clientCode: string }> | null;
}
type Group = NonNullable<AutoUpdate['rollout']>['groups'][number] & { notScheduled?: boolean };

/** The rollout's groups, then each client's group it does not hold, shown as not scheduled (never left out). */
const updateGroups = (u: AutoUpdate): Group[] => [...(u.rollout?.groups ?? []), ...(u.notScheduled ?? []).map((g) => ({ name: g.name, days: [], notScheduled: true }))];

export function AccessPage() {
  const gw = usePolled(() => get<{ gateways: Gateway[]; readAt: string }>('/api/access/gateways'), []);
  const au = usePolled(() => get<AutoUpdate>('/api/access/autoupdate'), []);
  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">Gateways and updates</h1>
      <h2>Windows desktop gateways</h2>
      <Loaded data={gw.data} error={gw.error} onRetry={gw.refresh} loading="Reading the gateways from the cluster…">
        {(g) => (
          <DataTable
            caption="Windows desktop gateways"
            testId="gateways"
            rows={g.gateways}
            rowKey={(x) => x.id}
            empty={<Empty>No gateway you can see.</Empty>}
            columns={[
              { header: 'Host', cell: (x) => <Link to={`/proxies/${x.id}`}>{x.hostname}</Link> },
              { header: 'Clients', cell: (x) => x.clientCodes.join(', ') || '—' },
              { header: 'Status', cell: (x) => x.status },
              { header: 'Version', cell: (x) => x.version ?? '—' },
              { header: 'Windows servers', cell: (x) => x.windowsServers },
              { header: 'Last seen', cell: (x) => when(x.lastSeen), className: 'when' },
            ]}
          />
        )}
      </Loaded>
      <h2>Agent auto-update</h2>
      <Loaded data={au.data} error={au.error} onRetry={au.refresh} loading="Reading the rollout from the cluster…">
        {(u) => (
          <>
            {u.warnings.map((w) => (
              <p key={w.resource} className="notice">
                {w.resource}: {w.code === 'access_denied' ? "the fleet plane's role may not read it" : w.code === 'missing' || w.code === 'not_found' ? 'not configured in the cluster' : w.code}
              </p>
            ))}
            <dl className="facts" data-testid="autoupdate">
              <dt>Mode</dt>
              <dd>{u.mode ?? '—'}</dd>
              <dt>Target version</dt>
              <dd>{u.targetVersion ?? '—'}</dd>
              <dt>Strategy</dt>
              <dd>{u.strategy ?? '—'}</dd>
              <dt>Schedule</dt>
              <dd>{u.schedule ?? '—'}</dd>
              <dt>Rollout</dt>
              <dd>{u.rollout ? `${u.rollout.state ?? '—'} since ${when(u.rollout.startTime)}` : '—'}</dd>
            </dl>
            {(u.rollout || (u.notScheduled ?? []).length > 0) && (
              <DataTable
                caption="Update groups"
                testId="update-groups"
                rows={updateGroups(u)}
                rowKey={(g) => g.name}
                empty={<Empty>No update group.</Empty>}
                columns={[
                  { header: 'Update group', cell: (g) => g.name },
                  { header: 'State', cell: (g) => (g.notScheduled ? <span title="Not in the rollout: its agents are never updated automatically">Not scheduled</span> : (g.state ?? '—')) },
                  { header: 'Up to date', cell: (g) => (g.presentCount !== undefined && g.presentCount !== null ? `${g.upToDateCount ?? 0} of ${g.presentCount}` : '—') },
                  { header: 'Window', cell: (g) => (g.notScheduled ? '—' : `${g.days.join(', ') || '—'}${g.startHour !== undefined && g.startHour !== null ? ` at ${g.startHour}:00 UTC` : ''}`) },
                  { header: 'Last change', cell: (g) => (g.notScheduled ? '—' : `${when(g.lastUpdateTime)} ${g.lastUpdateReason ?? ''}`) },
                ]}
              />
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
