import { useState } from 'react';
import { download, get, levelOf, post, put, type Me } from '../api';
import { Busy, DataTable, Empty, ErrorText, Link, Loaded, Modal, useAction, when } from '../../../shared/ui';
import { usePolled } from '../poll';
import { Drift } from './consoles';

// Console upgrades (docs/fleet.md, "Console upgrades"): the target the consoles should run, the
// plans and their progress (technicians: their clients only), the settings (administrators), and
// upgrade packs for the consoles the caller may operate (administrators, operators of the client):
// json shown as the commands to run on each console's host, zip downloaded as a file. A viewer
// reads the plans only: no control that his level cannot use.

type PlanState = 'pending' | 'overdue' | 'upgraded';
interface Plan {
  consoleId: string;
  clientCode: string;
  url: string;
  from: string | null;
  to: string;
  image: string;
  plannedAt: string;
  state: PlanState;
  upgradedAt: string | null;
  currentVersion: string | null;
  overdueSince: string | null;
}
interface Settings {
  targetTag: string | null;
  repository: string | null;
  alertAfterDays: number;
  updatedAt: string | null;
  updatedBy: string | null;
}
interface UpgradesView {
  target: { tag: string; repository: string | null } | null;
  settings: Settings;
  plans: Plan[];
  progress: { planned: number; upgraded: number; pending: number; overdue: number };
  consoles: { up_to_date: number; behind: number; unknown: number } | null;
}
type DriftState = 'up_to_date' | 'behind' | 'unknown';
interface ConsoleRow {
  id: string;
  clientCode: string;
  url: string;
  version: string | null;
  drift: DriftState | null;
}
interface PackConsole {
  id: string;
  url: string;
  host: string;
  from: string | null;
  to: string;
  drift: DriftState;
  plannedAt: string;
  newlyPlanned: boolean;
  commands: string[];
}
interface Pack {
  target: { tag: string; repository: string | null; image: string };
  generatedAt: string;
  clients: Array<{ code: string; name: string; consoles: PackConsole[] }>;
  leftOut: Array<{ id: string; reason: string }>;
}

const STATE_WORDS: Record<PlanState, { text: string; cls: string }> = {
  pending: { text: 'Pending', cls: 'badge' },
  overdue: { text: 'Overdue', cls: 'badge bad' },
  upgraded: { text: 'Upgraded', cls: 'badge good' },
};

export function UpgradesPage({ me }: { me: Me }) {
  const { data, error, refresh } = usePolled(async () => {
    const [view, consoles] = await Promise.all([get<UpgradesView>('/api/upgrades'), get<{ consoles: ConsoleRow[] }>('/api/consoles')]);
    return { view, consoles: consoles.consoles };
  }, []);
  const [editing, setEditing] = useState(false);
  const operable = data ? data.consoles.filter((c) => levelOf(me, c.clientCode) === 'operator') : [];
  const mayPack = me.admin || (me.scope.all === false && me.scope.clients.some((c) => c.level === 'operator'));
  return (
    <section aria-labelledby="upgrades-title">
      <h1 id="upgrades-title">Console upgrades</h1>
      <Loaded data={data} error={error} onRetry={refresh} loading="Loading the upgrade plans…">
        {(data) => (
        <>
          <h2>Target</h2>
          <dl className="facts" data-testid="upgrade-target">
            <dt>Target version</dt>
            <dd data-testid="target-tag">{data.view.target ? data.view.target.tag : 'Not set: versions are not compared, no pack can be made.'}</dd>
            <dt>Image repository</dt>
            <dd>{data.view.settings.repository ?? 'None: each console keeps the repository of its own hdc.env, only the tag changes.'}</dd>
            <dt>Overdue after</dt>
            <dd>{data.view.settings.alertAfterDays} days without the target version</dd>
            <dt>Last change</dt>
            <dd>{data.view.settings.updatedAt ? `${when(data.view.settings.updatedAt)} by ${data.view.settings.updatedBy ?? '?'}` : '—'}</dd>
          </dl>
          {me.admin && (
            <div className="actions">
              <button type="button" onClick={() => setEditing(true)}>
                Change upgrade settings
              </button>
            </div>
          )}
          <h2>Progress</h2>
          <ul className="cards plain" data-testid="upgrade-progress" aria-label="Progress of the planned upgrades">
            {(
              [
                ['planned', 'Planned'],
                ['upgraded', 'Upgraded'],
                ['pending', 'Pending'],
                ['overdue', 'Overdue'],
              ] as const
            ).map(([k, label]) => (
              <li key={k} className="stat" data-testid={`progress-${k}`}>
                <span className="n">{data.view.progress[k]}</span> {label}
              </li>
            ))}
          </ul>
          {data.view.consoles && (
            <p data-testid="drift-counts">
              Consoles you see: {data.view.consoles.behind} behind, {data.view.consoles.up_to_date} up to date, {data.view.consoles.unknown} unknown.
            </p>
          )}
          <h2>Plans</h2>
          <PlansTable plans={data.view.plans} />
          {mayPack && <PackSection target={data.view.target?.tag} consoles={operable} onDone={() => void refresh()} />}
          {editing && <SettingsDialog settings={data.view.settings} onClose={() => setEditing(false)} onSaved={() => (setEditing(false), void refresh())} />}
        </>
        )}
      </Loaded>
    </section>
  );
}

function PlansTable({ plans }: { plans: Plan[] }) {
  return (
    <DataTable
      caption="Upgrade plans"
      testId="plans-table"
      rows={plans}
      rowKey={(p) => p.consoleId}
      rowTestId={(p) => `plan-${p.consoleId}`}
      empty={<Empty>No upgrade planned.</Empty>}
      columns={[
        { header: 'Console', cell: (p) => <Link to={`/consoles/${p.consoleId}`}>{p.url}</Link> },
        { header: 'Client', cell: (p) => p.clientCode },
        { header: 'From', cell: (p) => p.from ?? 'unknown' },
        { header: 'To', cell: (p) => p.to },
        { header: 'Now runs', cell: (p) => p.currentVersion ?? '—' },
        {
          header: 'State',
          cell: (p) => (
            <>
              <span className={STATE_WORDS[p.state].cls}>{STATE_WORDS[p.state].text}</span>
              {p.state === 'upgraded' && p.upgradedAt ? <span className="muted"> {when(p.upgradedAt)}</span> : null}
              {p.state === 'overdue' && p.overdueSince ? <span className="muted"> since {when(p.overdueSince)}</span> : null}
            </>
          ),
        },
        { header: 'Planned', cell: (p) => when(p.plannedAt), className: 'when' },
      ]}
    />
  );
}

function SettingsDialog({ settings, onClose, onSaved }: { settings: Settings; onClose: () => void; onSaved: () => void }) {
  const [targetTag, setTargetTag] = useState(settings.targetTag ?? '');
  const [repository, setRepository] = useState(settings.repository ?? '');
  const [days, setDays] = useState(String(settings.alertAfterDays));
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => put('/api/upgrades/settings', { targetTag: targetTag.trim(), repository: repository.trim() || null, alertAfterDays: Number(days) }));
    if (r !== undefined) onSaved();
  };
  return (
    <Modal title="Upgrade settings" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <label>
          Target version (image tag)
          <input name="targetTag" value={targetTag} onChange={(e) => setTargetTag(e.target.value)} />
          <span className="hint">The tag every console should run, e.g. 1.4.0. Empty: versions are not compared.</span>
        </label>
        <label>
          Image repository (optional)
          <input name="repository" value={repository} onChange={(e) => setRepository(e.target.value)} />
          <span className="hint">Without tag, e.g. registry.msp.example/hdc. Empty: each console keeps its own.</span>
        </label>
        <label>
          Overdue after (days)
          <input name="alertAfterDays" type="number" min={1} max={365} value={days} onChange={(e) => setDays(e.target.value)} />
          <span className="hint">A planned upgrade not seen after this many days raises an alert (1 to 365).</span>
        </label>
        <ErrorText error={a.error} />
        <div className="actions">
          <Busy type="submit" busy={a.busy}>
            Save settings
          </Busy>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function PackSection({ target, consoles, onDone }: { target?: string; consoles: ConsoleRow[]; onDone: () => void }) {
  const [which, setWhich] = useState<'behind' | 'selected'>('behind');
  const [selected, setSelected] = useState<string[]>([]);
  const [pack, setPack] = useState<Pack>();
  const [saved, setSaved] = useState<string>();
  const a = useAction();
  const body = () => (which === 'behind' ? { allBehind: true } : { consoleIds: selected });
  const show = async () => {
    setPack(undefined);
    setSaved(undefined);
    const r = await a.run(() => post<Pack>('/api/upgrades/pack', { ...body(), format: 'json' }));
    if (r) {
      setPack(r);
      onDone();
    }
  };
  const zip = async () => {
    setPack(undefined);
    setSaved(undefined);
    const r = await a.run(() => download('/api/upgrades/pack', { method: 'POST', body: { ...body(), format: 'zip' }, accept: 'application/zip', fallbackName: 'console-upgrade.zip' }));
    if (r) {
      setSaved(r);
      onDone();
    }
  };
  const none = which === 'selected' && selected.length === 0;
  return (
    <>
      <h2>Upgrade pack</h2>
      <p className="hint">
        The commands to run on each console's host (the fleet plane runs nothing there). Making a pack plans the upgrade of each console in it{target ? ` to ${target}` : ''}.
      </p>
      <fieldset>
        <legend>Consoles</legend>
        <label className="check">
          <input type="radio" name="pack-which" checked={which === 'behind'} onChange={() => setWhich('behind')} /> Every console behind the target that you may operate
        </label>
        <label className="check">
          <input type="radio" name="pack-which" checked={which === 'selected'} onChange={() => setWhich('selected')} /> The consoles selected below
        </label>
        {which === 'selected' && (
          <div className="scroll-x" role="region" aria-label="Consoles to include" tabIndex={0}>
          <table data-testid="pack-consoles">
            <thead>
              <tr>
                <th scope="col">Include</th>
                <th scope="col">Console</th>
                <th scope="col">Client</th>
                <th scope="col">Version</th>
                <th scope="col">Drift</th>
              </tr>
            </thead>
            <tbody>
              {consoles.map((c) => (
                <tr key={c.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Include ${c.url}`}
                      checked={selected.includes(c.id)}
                      onChange={(e) => setSelected((s) => (e.target.checked ? [...s, c.id] : s.filter((x) => x !== c.id)))}
                    />
                  </td>
                  <td>{c.url}</td>
                  <td>{c.clientCode}</td>
                  <td>{c.version ?? '—'}</td>
                  <td>
                    <Drift drift={c.drift} />
                  </td>
                </tr>
              ))}
              {consoles.length === 0 && (
                <tr>
                  <td colSpan={5}>No console you may operate.</td>
                </tr>
              )}
            </tbody>
          </table>
          </div>
        )}
      </fieldset>
      <div className="actions">
        <Busy busy={a.busy} disabled={none} onClick={() => void show()}>
          Show the commands
        </Busy>
        <Busy className="secondary" busy={a.busy} disabled={none} onClick={() => void zip()}>
          Download the pack (zip)
        </Busy>
      </div>
      <div aria-live="polite" data-testid="pack-result">
        <ErrorText error={a.error} />
        {saved && <p className="ok">Downloaded {saved}: one folder per client with README.md, a script per console and upgrade.sh.</p>}
        {pack && <PackView pack={pack} />}
      </div>
    </>
  );
}

function PackView({ pack }: { pack: Pack }) {
  return (
    <div data-testid="pack-commands">
      <p>
        Upgrade to <code>{pack.target.image}</code>, generated {when(pack.generatedAt)}. In each console's instance directory (the one holding hdc.env, e.g. /srv/hdc/acme) run:
      </p>
      {pack.clients.map((cl) => (
        <div key={cl.code}>
          <h3>
            {cl.name} ({cl.code})
          </h3>
          {cl.consoles.map((c) => (
            <div key={c.id} data-testid={`pack-${c.id}`}>
              <p>
                {c.url}: {c.from ?? 'unknown version'} → {c.to}
                {c.newlyPlanned ? '' : ' (already planned)'}
              </p>
              <pre className="commands" tabIndex={0}>{c.commands.join('\n')}</pre>
            </div>
          ))}
        </div>
      ))}
      {pack.leftOut.length > 0 && <p className="muted">{pack.leftOut.length} selected console(s) left out: already at the target version.</p>}
    </div>
  );
}
