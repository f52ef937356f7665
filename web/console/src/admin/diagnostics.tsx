import { get } from '../api';
import { Empty, Loaded, ouPath, useLoaded, when } from '../ui';

// Diagnostics in sentences (issue 29): what each check found, in words first, its code and the
// remedy below; grouped by what they check; a LAPS scope is named by its OU path and its sample.

interface Check {
  code: string;
  section: 'directory' | 'signin' | 'delegation' | 'laps';
  severity: 'ok' | 'info' | 'warning' | 'error';
  remedy: string;
  details?: Record<string, unknown>;
}
interface Report {
  generatedAt: string;
  summary: { errors: number; warnings: number };
  checks: Check[];
  lapsScopes: Array<{ scope: string; sample?: string; checks: Check[] }>;
  /** the BitLocker account's rights per delegated scope (issue 33) */
  bitlockerScopes?: Array<{ scope: string; sample?: string; checks: Check[] }>;
}

const d = (c: Check, k: string) => (c.details && typeof c.details[k] === 'string' ? (c.details[k] as string) : undefined);
const SENTENCES: Record<string, (c: Check) => string> = {
  dc_ok: (c) => `The domain controller ${d(c, 'dc') ?? ''} answers.`,
  dc_unreachable: (c) => `The domain controller ${d(c, 'dc') ?? ''} does not answer${d(c, 'problem') ? ` (${d(c, 'problem')})` : ''}.`,
  no_dc_reachable: () => 'No domain controller answers: the console cannot read the directory.',
  dc_fewer_than_two: () => 'Only one domain controller is configured: there is no failover.',
  temporary_membership_removal_failed: (c) => `${Number(c.details?.count ?? 1)} temporary group membership(s) expired but could not be removed yet: the next run retries.`,
  ca_expiring: () => 'A certificate of the configured CA expires within 30 days.',
  ca_expired: () => 'A certificate of the configured CA has expired.',
  trust_not_pinned: () => 'The password service is not pinned to this domain.',
  signin_password_only: () => 'Sensitive actions are confirmed with the directory password only.',
  step_up_disabled: () => 'Sensitive actions are not confirmed at all (LAPS still asks).',
  signin_enrolment_pending: () => 'Some operators started to set up their authenticator and did not finish.',
  access_claim_reaches_super_administrator: () => 'A claim of the access platform reaches a Super administrator.',
  access_claim_reaches_protected_account: () => 'A claim of the access platform reaches a protected account that holds a role.',
  delegation_export_current: () => 'The delegation export matches the directory.',
  delegation_export_out_of_date: () => 'The delegation export no longer matches the delegations: run it again.',
  laps_schema_windows: () => 'The directory has the Windows LAPS schema.',
  laps_schema_legacy_only: () => 'The directory has only the legacy LAPS schema.',
  laps_schema_missing: () => 'The directory has no LAPS schema.',
  laps_identity_upn_missing: () => 'The LAPS account is not named on the console.',
  laps_identity_not_configured: () => 'The password service holds no LAPS account.',
  laps_bind_failed: () => 'The LAPS account cannot sign in.',
  laps_identity_ok: () => 'The LAPS account signs in.',
  laps_service_unreachable: () => 'The console cannot reach the password service.',
  laps_read_rights_effective: () => 'The LAPS account can read the password here.',
  laps_read_rights_missing: () => 'The LAPS account cannot read the password here.',
  laps_encrypted_only: () => 'The sample computer stores only an encrypted password, which the console does not read.',
  laps_expire_rights_present: () => 'The LAPS account may expire the password here.',
  laps_expire_rights_missing: () => 'The LAPS account may not expire the password here.',
  no_sample_computer: () => 'No LAPS-managed standard computer here: the rights cannot be checked.',
  laps_needs_password_service: () => 'A delegation grants a LAPS action but the helpdesk is off.',
  bitlocker_needs_password_service: () => 'A delegation grants BitLocker recovery keys but the helpdesk is off.',
  bitlocker_service_unreachable: () => 'The console cannot reach the password service for the BitLocker checks.',
  bitlocker_identity_not_configured: () => 'The password service holds no BitLocker account.',
  bitlocker_bind_failed: () => 'The BitLocker account cannot sign in.',
  bitlocker_identity_ok: () => 'The BitLocker account signs in.',
  no_bitlocker_sample: () => 'No BitLocker recovery key the console can list here: the rights cannot be checked.',
  bitlocker_console_key_hidden: () => "The console's own account lists the recovery keys here without reading them.",
  bitlocker_console_reads_key: () => "The console's own account can read recovery keys here: only the BitLocker account may.",
  bitlocker_read_rights_effective: () => 'The BitLocker account can read the recovery key here.',
  bitlocker_read_rights_missing: () => 'The BitLocker account cannot read the recovery key here.',
};
const SECTIONS: Array<[Check['section'], string]> = [
  ['directory', 'Directory connection'],
  ['signin', 'Sign-in and confirmations'],
  ['delegation', 'Delegation export'],
  ['laps', 'LAPS and BitLocker'],
];
const MARK: Record<Check['severity'], { text: string; cls: string }> = {
  ok: { text: 'OK', cls: 'badge good' },
  info: { text: 'Note', cls: 'badge info' },
  warning: { text: 'Warning', cls: 'badge warn' },
  error: { text: 'Problem', cls: 'badge bad' },
};

function CheckLine({ c }: { c: Check }) {
  const m = MARK[c.severity];
  return (
    <li className={`check-line check-${c.severity}`}>
      <p>
        <span className={m.cls}>{m.text}</span> {SENTENCES[c.code]?.(c) ?? 'A check reported something.'}
      </p>
      <p className="hint">
        <code>{c.code}</code>
        {c.severity === 'ok' ? '' : ` · ${c.remedy}`}
      </p>
    </li>
  );
}

export function Diagnostics() {
  const { data, error, reload } = useLoaded('diagnostics', () => get<Report>('/api/diagnostics'));
  return (
    <Loaded data={data} error={error} onRetry={reload} loading="Running the checks (each domain controller, the password service)…">
      {(r) => (
        <div data-testid="diagnostics">
          <p role="status" className={r.summary.errors ? 'error' : r.summary.warnings ? '' : 'ok'}>
            {r.summary.errors || r.summary.warnings ? `${r.summary.errors} problem(s), ${r.summary.warnings} warning(s)` : 'Every check passed'}, checked {when(r.generatedAt)}.{' '}
            <button type="button" className="link" onClick={reload}>
              Check again
            </button>
          </p>
          {SECTIONS.map(([section, title]) => {
            const list = r.checks.filter((c) => c.section === section);
            // the BitLocker scopes (issue 33) follow the LAPS ones, named as such
            const scopes = section === 'laps' ? [...r.lapsScopes, ...(r.bitlockerScopes ?? []).map((x) => ({ ...x, bitlocker: true }))] : [];
            if (!list.length && !scopes.length) return null;
            return (
              <section key={section} aria-label={title}>
                <h2>{title}</h2>
                <ul className="plain checks">
                  {list.map((c, i) => (
                    <CheckLine key={i} c={c} />
                  ))}
                </ul>
                {scopes.map((s) => (
                  <div key={`${'bitlocker' in s ? 'bitlocker' : 'laps'}:${s.scope}`}>
                    <h3>
                      {'bitlocker' in s ? 'BitLocker: ' : ''}
                      {ouPath(s.scope)}
                      {s.sample ? <span className="muted"> (checked on {s.sample})</span> : null}
                    </h3>
                    {s.checks.length ? (
                      <ul className="plain checks">
                        {s.checks.map((c, i) => (
                          <CheckLine key={i} c={c} />
                        ))}
                      </ul>
                    ) : (
                      <Empty>Nothing checked here.</Empty>
                    )}
                  </div>
                ))}
              </section>
            );
          })}
        </div>
      )}
    </Loaded>
  );
}
