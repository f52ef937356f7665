import type { Me } from '../api';
import { Link } from '../ui';
import { ApprovalRules } from './approval-rules';
import { BaselineTransfer } from './baseline';
import { Channels } from './channels';
import { Delegations } from './delegations';
import { Diagnostics } from './diagnostics';
import { Identification } from './identification';
import { Operators } from './operators';
import { Protection } from './protection';
import { Roles } from './roles';
import { PasskeySignIn, StepUpMode } from './step-up';
import { SuperAdministrators } from './super-admins';

// Administration (settings.manage), its screens grouped the way Entra and Okta group theirs:
// who may do what, approvals and notifications, security, the instance.

const GROUPS: Array<{ group: string; tabs: Array<[string, string]> }> = [
  {
    group: 'Access',
    tabs: [
      ['roles', 'Roles'],
      ['delegations', 'Delegations'],
      ['super-administrators', 'Super administrators'],
      ['operators', 'Operators'],
    ],
  },
  {
    group: 'Approvals',
    tabs: [
      ['approvals', 'Approval rules'],
      ['channels', 'Notification channels'],
    ],
  },
  {
    group: 'Security',
    tabs: [
      ['step-up', 'Step-up mode'],
      ['protection', 'Protection'],
      ['diagnostics', 'Diagnostics'],
    ],
  },
  {
    group: 'Instance',
    tabs: [
      ['identification', 'Identification'],
      ['baseline', 'Baseline'],
    ],
  },
];

export function AdminPage({ me, tab = 'roles' }: { me: Me; tab?: string }) {
  const title = GROUPS.flatMap((g) => g.tabs).find(([t]) => t === tab)?.[1] ?? 'Roles';
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">
        Administration <span className="muted">· {title}</span>
      </h1>
      <nav aria-label="Administration" className="admin-nav">
        {GROUPS.map((g) => (
          <div key={g.group} className="admin-group">
            <span className="admin-group-name" aria-hidden="true">
              {g.group}
            </span>
            <ul className="tabs" aria-label={g.group}>
              {g.tabs.map(([t, label]) => (
                <li key={t}>
                  <Link to={`/admin/${t}`} className={t === tab ? 'active' : undefined}>
                    {label}
                  </Link>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      {tab === 'roles' && <Roles />}
      {tab === 'delegations' && <Delegations />}
      {tab === 'super-administrators' && <SuperAdministrators me={me} />}
      {tab === 'approvals' && <ApprovalRules />}
      {tab === 'channels' && <Channels />}
      {tab === 'step-up' && (
        <>
          <StepUpMode me={me} />
          <PasskeySignIn />
        </>
      )}
      {tab === 'identification' && <Identification />}
      {tab === 'operators' && <Operators me={me} />}
      {tab === 'protection' && <Protection />}
      {tab === 'baseline' && <BaselineTransfer />}
      {tab === 'diagnostics' && <Diagnostics />}
    </section>
  );
}
