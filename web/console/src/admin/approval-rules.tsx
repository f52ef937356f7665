import { useState } from 'react';
import { get, put } from '../api';
import { ACTION_WORDS, actionWords } from '../approval-words';
import { Busy, ErrorText, Loaded, ouPath, useAction, useLoaded, useStepUp } from '../ui';
import { loadDelegations, type DelegationView } from './delegations';
import { loadRoles, type Role } from './roles';

// Approval rules (issue 29): per delegation, which of its actions need approval, who approves and
// how many; the instance's defaults (actions that always need approval, the approvers when a
// delegation names none, the request lifetime, the ticket rule). PUT /api/admin/approvals/settings
// with the same step-up and audit row (settings.approvals) as the API.

const APPROVABLE = ['users.password.reset', 'users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'groups.members.write'];
const SUPER = 'super-administrator';

interface Approvers {
  roles: string[];
  operators: string[];
}
interface DelegationRule {
  requiresApproval: string[];
  approvers: Approvers;
  approvalsNeeded: 1 | 2;
}
interface Settings {
  requestLifetimeDays: number;
  alwaysRequire: string[];
  instanceApprovers: Approvers;
  instanceApprovalsNeeded: 1 | 2;
  ticketRequired: boolean;
  consoleUrl?: string;
  delegations: Record<string, DelegationRule>;
}
interface Operator {
  id: string;
  username: string;
  displayName: string | null;
}

const NO_RULE: DelegationRule = { requiresApproval: [], approvers: { roles: [], operators: [] }, approvalsNeeded: 1 };
const named = (a: Approvers) => a.roles.length > 0 || a.operators.length > 0;

export function ApprovalRules() {
  const { withStepUp } = useStepUp();
  const { data, error, reload } = useLoaded('approval-rules', async () => {
    // reading the rules needs the step-up (the API asks for it)
    const [s, delegations, roles, operators] = await Promise.all([
      withStepUp(() => get<{ settings: Settings; version: number }>('/api/admin/approvals/settings')),
      loadDelegations(),
      loadRoles(),
      get<{ operators: Operator[] }>('/api/admin/operators').then((r) => r.operators),
    ]);
    return { ...s, delegations, roles, operators };
  });
  // "Saved" outlives the form, which starts again from the saved rules (and their new version)
  const [saved, setSaved] = useState(false);
  return (
    <Loaded data={data} error={error} onRetry={reload} loading="Loading the approval rules…">
      {(d) => <RulesForm key={d.version} loaded={d} saved={saved} setSaved={setSaved} onSaved={reload} />}
    </Loaded>
  );
}

function RulesForm({ loaded, saved, setSaved, onSaved }: { loaded: { settings: Settings; version: number; delegations: DelegationView[]; roles: Role[]; operators: Operator[] }; saved: boolean; setSaved: (s: boolean) => void; onSaved: () => void }) {
  const [s, setS] = useState<Settings>(loaded.settings);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const roleOf = new Map(loaded.roles.map((r) => [r.id, r]));
  const rule = (id: string) => s.delegations[id] ?? NO_RULE;
  const setRule = (id: string, r: DelegationRule) => {
    setSaved(false);
    setS({ ...s, delegations: { ...s.delegations, [id]: r } });
  };
  const set = (patch: Partial<Settings>) => {
    setSaved(false);
    setS({ ...s, ...patch });
  };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    // a delegation with neither an action nor approvers of its own says nothing: left out
    const delegations = Object.fromEntries(Object.entries(s.delegations).filter(([, r]) => r.requiresApproval.length || named(r.approvers)));
    const body = { ...s, delegations, consoleUrl: s.consoleUrl?.trim() || undefined, version: loaded.version };
    if (await a.run(() => withStepUp(() => put('/api/admin/approvals/settings', body)))) {
      setSaved(true);
      onSaved();
    }
  };
  return (
    <form onSubmit={submit} aria-label="Approval rules">
      <h2>Each delegation</h2>
      <p className="hint">Which actions of a delegation go to approvers instead of being done at once, who approves them, and how many approvals they need.</p>
      {loaded.delegations.length === 0 && <p className="muted">No delegation yet: create one first.</p>}
      {loaded.delegations.map((d) => {
        const role = roleOf.get(d.roleId);
        const held = APPROVABLE.filter((x) => role?.permissions.includes(x));
        const r = rule(d.id);
        return (
          <fieldset key={d.id} data-testid={`rule-${d.id}`}>
            <legend>
              {d.id}: {role?.name ?? d.roleId} on {d.scope.map((x) => ouPath(x.dn)).join('; ')}
            </legend>
            <div className="rule">
              {held.length === 0 ? (
                <p className="muted">Its role holds no action that can need approval.</p>
              ) : (
                <div role="group" aria-label={`Actions of ${d.id} that need approval`} className="choices">
                  <p className="hint">Needs approval:</p>
                  {held.map((x) => (
                    <label key={x} className="check">
                      <input type="checkbox" checked={r.requiresApproval.includes(x)} onChange={(e) => setRule(d.id, { ...r, requiresApproval: e.target.checked ? [...r.requiresApproval, x] : r.requiresApproval.filter((y) => y !== x) })} />
                      {actionWords(x)}
                    </label>
                  ))}
                </div>
              )}
              <ApproversEditor
                what={`Approvers of ${d.id}`}
                value={r.approvers}
                count={r.approvalsNeeded}
                roles={loaded.roles}
                operators={loaded.operators}
                fallback="Nobody named: the default approvers below decide."
                onChange={(approvers, approvalsNeeded) => setRule(d.id, { ...r, approvers, approvalsNeeded })}
              />
            </div>
          </fieldset>
        );
      })}
      <h2>Every delegation</h2>
      <fieldset className="grid">
        <legend>Always needs approval, whatever the delegation</legend>
        {APPROVABLE.map((x) => (
          <label key={x} className="check">
            <input type="checkbox" checked={s.alwaysRequire.includes(x)} onChange={(e) => set({ alwaysRequire: e.target.checked ? [...s.alwaysRequire, x] : s.alwaysRequire.filter((y) => y !== x) })} />
            {ACTION_WORDS[x]}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Default approvers</legend>
        <ApproversEditor
          what="Default approvers"
          value={s.instanceApprovers}
          count={s.instanceApprovalsNeeded}
          roles={loaded.roles}
          operators={loaded.operators}
          fallback="Nobody named: the Super administrators decide."
          onChange={(instanceApprovers, instanceApprovalsNeeded) => set({ instanceApprovers, instanceApprovalsNeeded })}
        />
      </fieldset>
      <h2>Requests</h2>
      <label>
        A request expires after (days)
        <input type="number" min={1} max={90} name="lifetime" value={s.requestLifetimeDays} onChange={(e) => set({ requestLifetimeDays: Number(e.target.value) })} />
      </label>
      <label className="check">
        <input type="checkbox" name="ticket-required" checked={s.ticketRequired} onChange={(e) => set({ ticketRequired: e.target.checked })} />
        Requests must carry a ticket
      </label>
      <label>
        The console's address in notification links (optional)
        <input type="url" name="console-url" placeholder="https://helpdesk.example.com" value={s.consoleUrl ?? ''} onChange={(e) => set({ consoleUrl: e.target.value })} />
      </label>
      <ErrorText error={a.error} />
      <div aria-live="polite">{saved && <p className="ok">Saved. New requests follow these rules; requests filed before keep theirs.</p>}</div>
      <Busy type="submit" busy={a.busy}>
        Save approval rules
      </Busy>
    </form>
  );
}

/** Who approves (roles and named operators) and how many approvals a request needs. */
function ApproversEditor({ what, value, count, roles, operators, fallback, onChange }: { what: string; value: Approvers; count: 1 | 2; roles: Role[]; operators: Operator[]; fallback: string; onChange: (a: Approvers, count: 1 | 2) => void }) {
  const opName = new Map(operators.map((o) => [o.id.toLowerCase(), o.displayName ? `${o.displayName} (${o.username})` : o.username]));
  const roleChoices = [{ id: SUPER, name: 'Super administrators' }, ...roles.filter((r) => !r.builtIn).map((r) => ({ id: r.id, name: `Holders of the role ${r.name}` }))];
  const toggleRole = (id: string, on: boolean) => onChange({ ...value, roles: on ? [...value.roles, id] : value.roles.filter((x) => x !== id) }, count);
  const chosen = new Set(value.operators.map((x) => x.toLowerCase()));
  return (
    <div role="group" aria-label={what} className="approvers">
      <p className="hint">{named(value) ? 'Who approves:' : fallback}</p>
      {roleChoices.map((r) => (
        <label key={r.id} className="check">
          <input type="checkbox" checked={value.roles.includes(r.id)} onChange={(e) => toggleRole(r.id, e.target.checked)} />
          {r.name}
        </label>
      ))}
      {value.operators.map((g) => (
        <p key={g} className="check">
          {opName.get(g.toLowerCase()) ?? `${g} (not a known operator)`}{' '}
          <button type="button" className="link" onClick={() => onChange({ ...value, operators: value.operators.filter((x) => x !== g) }, count)}>
            Remove<span className="sr-only"> {opName.get(g.toLowerCase()) ?? g}</span>
          </button>
        </p>
      ))}
      <label>
        Add an operator
        <select
          value=""
          onChange={(e) => {
            if (e.target.value) onChange({ ...value, operators: [...value.operators, e.target.value] }, count);
          }}
        >
          <option value="">Choose an operator who has signed in…</option>
          {operators
            .filter((o) => !chosen.has(o.id.toLowerCase()))
            .map((o) => (
              <option key={o.id} value={o.id}>
                {opName.get(o.id.toLowerCase())}
              </option>
            ))}
        </select>
      </label>
      <label>
        Approvals needed
        <select value={count} onChange={(e) => onChange(value, Number(e.target.value) as 1 | 2)}>
          <option value={1}>1 approver</option>
          <option value={2}>2 different approvers</option>
        </select>
      </label>
    </div>
  );
}
