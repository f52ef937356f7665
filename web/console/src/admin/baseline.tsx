import { useState } from 'react';
import { ApiFailure, post } from '../api';
import { WORDS } from '../words';
import { Busy, ErrorText, useAction, useStepUp } from '../ui';

interface ImportSummary {
  dryRun: boolean;
  roles: { created: string[]; updated: string[]; unchanged: string[] };
  delegations: { created: string[]; updated: string[]; unchanged: string[] };
  approversToChoose: string[];
}

/** Baseline: download this console's roles, delegations and approval settings; import another's (checked first, then applied). */
export function BaselineTransfer() {
  const [file, setFile] = useState<{ name: string; baseline: unknown }>();
  const [replace, setReplace] = useState(false);
  const [preview, setPreview] = useState<ImportSummary>();
  const [done, setDone] = useState<ImportSummary>();
  const [readError, setReadError] = useState<string>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  const run = (dryRun: boolean) => a.run(() => withStepUp(() => post<ImportSummary>('/api/admin/baseline/import', { baseline: file!.baseline, replace, dryRun })));
  const list = (label: string, ids: string[]) => (ids.length ? <li>{`${label}: ${ids.join(', ')}`}</li> : null);
  const summary = (s: ImportSummary) => (
    <ul className="plain" data-testid="baseline-summary">
      {list('Roles created', s.roles.created)}
      {list('Roles replaced', s.roles.updated)}
      {list('Delegations created', s.delegations.created)}
      {list('Delegations replaced', s.delegations.updated)}
      {list('Unchanged roles', s.roles.unchanged)}
      {list('Unchanged delegations', s.delegations.unchanged)}
      {list('Choose approvers for (until then the instance approvers decide)', s.approversToChoose)}
    </ul>
  );
  const problems = a.error instanceof ApiFailure && Array.isArray(a.error.body.problems) ? (a.error.body.problems as Array<{ where: string; code: string }>) : [];
  return (
    <>
      <h2>Export</h2>
      <p>
        Roles, delegations (scope as OU paths below the domain root, assignees by name) and approval settings (actions and counts; never approvers).
      </p>
      <p>
        <a href="/api/admin/baseline" download data-testid="baseline-download">
          Download the baseline
        </a>{' '}
        <span className="hint">(the download is audited)</span>
      </p>
      <h2>Import</h2>
      <label>
        Baseline file (JSON)
        <input
          type="file"
          name="baseline-file"
          accept="application/json,.json"
          onChange={async (e) => {
            setPreview(undefined);
            setDone(undefined);
            setReadError(undefined);
            const f = e.target.files?.[0];
            if (!f) return setFile(undefined);
            try {
              setFile({ name: f.name, baseline: JSON.parse(await f.text()) });
            } catch {
              setFile(undefined);
              setReadError('That file is not JSON.');
            }
          }}
        />
      </label>
      <label className="check">
        <input type="checkbox" name="baseline-replace" checked={replace} onChange={(e) => setReplace(e.target.checked)} />
        Replace roles and delegations that exist here with other content (nothing is ever deleted)
      </label>
      {readError && <p className="error">{readError}</p>}
      <ErrorText error={a.error} />
      {problems.length > 0 && (
        <ul className="plain error" aria-label="Problems of the baseline">
          {problems.map((p, i) => (
            <li key={i}>
              {p.where}: {WORDS[p.code] ?? p.code}
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        <Busy
          className="secondary"
          busy={a.busy && !preview}
          disabled={!file || a.busy}
          onClick={async () => {
            setDone(undefined);
            const r = await run(true);
            setPreview(r ?? undefined);
          }}
        >
          Check the baseline
        </Busy>
        <Busy
          busy={a.busy && !!preview}
          disabled={!file || !preview || a.busy}
          onClick={async () => {
            const r = await run(false);
            if (r) {
              setDone(r);
              setPreview(undefined);
            }
          }}
        >
          Import
        </Busy>
      </div>
      {preview && (
        <div role="status">
          <p>The check passed. Importing would make these changes:</p>
          {summary(preview)}
        </div>
      )}
      {done && (
        <div role="status">
          <p>Imported.</p>
          {summary(done)}
        </div>
      )}
    </>
  );
}
