// Every diagnostics check the console reports, with its severity and the remedy an operator reads
// (console spec, Diagnostics checks, High availability 1, Authentication 3 and 4, Versioning 4).
// The codes are the spec's where it names one; the others are ours (docs/operations.md lists all).

export type Severity = 'ok' | 'info' | 'warning' | 'error';
export type Section = 'directory' | 'signin' | 'delegation' | 'laps';

export interface CheckSpec {
  section: Section;
  severity: Severity;
  remedy: string;
}

export const CHECKS = {
  // ---- directory connection (High availability)
  dc_ok: { section: 'directory', severity: 'ok', remedy: 'Nothing to do: the DC completed a TLS handshake with the configured CA and accepted the read account.' },
  dc_unreachable: {
    section: 'directory',
    severity: 'warning',
    remedy: 'The DC named in details did not pass the handshake or the read-account bind (details.problem). Check that it runs, that TCP 636 is reachable from the console, that its certificate holds its host name and chains to the configured CA; remove it from Settings > Directory if it is gone for good.',
  },
  no_dc_reachable: { section: 'directory', severity: 'error', remedy: 'No configured DC works: the console cannot read the directory. Check the network path to TCP 636, the CA and the read account, or add a working DC.' },
  dc_fewer_than_two: {
    section: 'directory',
    severity: 'warning',
    remedy: 'Only one DC is configured: there is no failover. Add a second DC (Settings > Directory, Discover proposes the domain\'s DCs from its DNS).',
  },
  ca_expiring: { section: 'directory', severity: 'warning', remedy: 'A certificate of the configured CA PEM expires within 30 days: add the renewed CA to the PEM (both during the migration), then remove the old one.' },
  ca_expired: { section: 'directory', severity: 'error', remedy: 'A certificate of the configured CA PEM has expired: replace the PEM with the current CA (Settings > Directory > Certificate authority).' },
  trust_not_pinned: {
    section: 'directory',
    severity: 'error',
    remedy: 'The password service is not pinned to this domain and CA (first use, or the CA changed): every LAPS and reset operation is refused. Run `pin-password-service` (after a CA change with HDC_PWD_ALLOW_REPIN=1 set on the password service).',
  },
  // a temporary group membership past its expiry that the scheduled run could not remove (issue 33)
  temporary_membership_removal_failed: {
    section: 'directory',
    severity: 'warning',
    remedy:
      'A temporary group membership has expired but its member is still in the group (details.memberships: request, group, member, attempts, last code): the scheduled run failed to remove it (a DC down, or the write account lost its right on member) and retries at every run. Check the DCs and the write account; or remove the member by hand (the next run records it).',
  },
  // ---- sign-in and step-up (Authentication 3, 4)
  signin_password_only: {
    section: 'signin',
    severity: 'warning',
    remedy: 'The step-up mode is "password": a stolen directory password is enough to act. Switch to "authenticator" (Settings > Step-up).',
  },
  step_up_disabled: { section: 'signin', severity: 'warning', remedy: 'The step-up mode is "none": changes need no confirmation. Switch to "authenticator" (Settings > Step-up).' },
  signin_enrolment_pending: {
    section: 'signin',
    severity: 'warning',
    remedy: 'Operators holding a role have not enrolled an authenticator yet (details.count, details.operators): they enrol at their next sign-in; remove the roles of those who no longer need them.',
  },
  // ---- sign-in through the access platform (issue 25): a claim names the directory account
  access_claim_reaches_super_administrator: {
    section: 'signin',
    severity: 'warning',
    remedy:
      'Access-platform sign-in is on, and a platform identity whose claims (details.claims: user name, windows_logins) name a Super administrator\'s account (details.accounts) signs in as that Super administrator, and that sign-in counts as the step-up, without the account\'s authenticator. Set Authentication:Access:SuperAdministratorsRequireRoleMapping=true and map the platform role your Super administrators hold (Settings > Access platform), or make sure nobody can set those claims on the platform.',
  },
  access_claim_reaches_protected_account: {
    section: 'signin',
    severity: 'warning',
    remedy:
      'Access-platform sign-in is on, and accounts holding a console role are protected in the directory (adminCount=1, details.accounts): any platform identity whose claims name them signs in as them. Give those people a separate, unprivileged account for the console, or restrict who may set the claims (details.claims) on the platform.',
  },
  // ---- delegation export (Versioning 4)
  delegation_export_current: { section: 'delegation', severity: 'ok', remedy: 'Nothing to do: the directory holds every right the current delegations need (write account and LAPS account).' },
  delegation_export_out_of_date: {
    section: 'delegation',
    severity: 'warning',
    remedy:
      'The directory lacks rights the current delegations need (details.missing): the delegations changed, or this version added delegable actions. Export the delegation script again (Administration > Delegation export) and run it on the domain.',
  },
  // ---- LAPS (Diagnostics checks, LAPS section)
  laps_schema_windows: { section: 'laps', severity: 'ok', remedy: 'Nothing to do: the Windows LAPS schema is present.' },
  laps_schema_legacy_only: { section: 'laps', severity: 'warning', remedy: 'Only the legacy LAPS schema is present: passwords are read-only from ms-Mcs-AdmPwd. Extend the schema for Windows LAPS (Update-LapsADSchema).' },
  laps_schema_missing: { section: 'laps', severity: 'error', remedy: 'No LAPS schema in the directory: extend it (Update-LapsADSchema) before granting LAPS actions.' },
  laps_identity_upn_missing: { section: 'laps', severity: 'warning', remedy: 'Set HDC_LAPS_UPN (Helpdesk:LapsIdentityUpn) on the console so that it can show the LAPS account.' },
  laps_identity_not_configured: { section: 'laps', severity: 'error', remedy: 'The password service holds no LAPS account: give it HDC_LAPS_UPN and HDC_LAPS_PASSWORD_FILE (installer, helpdesk option).' },
  laps_bind_failed: { section: 'laps', severity: 'error', remedy: "The LAPS account's sign-in failed: set its password again in the directory and in the password service's secret file." },
  laps_identity_ok: { section: 'laps', severity: 'ok', remedy: 'Nothing to do: the password service signs in with the LAPS account.' },
  laps_service_unreachable: { section: 'laps', severity: 'error', remedy: 'The console cannot reach the password service: check that it runs and that the helpdesk link key is the same on both.' },
  laps_read_rights_effective: { section: 'laps', severity: 'ok', remedy: 'Nothing to do: the directory returns msLAPS-Password to the LAPS account on the sample computer.' },
  laps_read_rights_missing: { section: 'laps', severity: 'error', remedy: 'The LAPS account cannot read the password in this scope: run the LAPS rights export for it (Read property + Control access on msLAPS-Password, computer objects).' },
  laps_encrypted_only: { section: 'laps', severity: 'warning', remedy: 'The sample stores only an encrypted password (unsupported): set the LAPS policy of this OU to back up to the directory without encryption.' },
  laps_expire_rights_present: { section: 'laps', severity: 'ok', remedy: 'Nothing to do: the LAPS account may write the expiration time.' },
  laps_expire_rights_missing: { section: 'laps', severity: 'warning', remedy: 'The LAPS account may not write msLAPS-PasswordExpirationTime here: run the LAPS rights export with computers.laps.expire for this scope.' },
  no_sample_computer: { section: 'laps', severity: 'info', remedy: 'No LAPS-managed standard computer in this scope: its rights cannot be verified until one has a LAPS password.' },
  laps_needs_password_service: { section: 'laps', severity: 'error', remedy: 'A delegation names a LAPS action but the helpdesk (password service) is off: deploy it (Helpdesk:Enabled) or remove the LAPS actions.' },
  // ---- BitLocker recovery keys (issue 33): the BitLocker account's rights, checked like the LAPS account's
  bitlocker_needs_password_service: { section: 'laps', severity: 'error', remedy: 'A delegation names computers.bitlocker.read but the helpdesk (password service) is off: deploy it (Helpdesk:Enabled) or remove the permission.' },
  bitlocker_service_unreachable: { section: 'laps', severity: 'error', remedy: 'The console cannot reach the password service for the BitLocker checks: check that it runs and that the helpdesk link key is the same on both.' },
  bitlocker_identity_not_configured: { section: 'laps', severity: 'error', remedy: 'The password service holds no BitLocker account: give it HDC_BITLOCKER_UPN and HDC_BITLOCKER_PASSWORD_FILE (installer: --bitlocker-upn, --bitlocker-password-file).' },
  bitlocker_bind_failed: { section: 'laps', severity: 'error', remedy: "The BitLocker account's sign-in failed: set its password again in the directory and in the password service's secret file." },
  bitlocker_identity_ok: { section: 'laps', severity: 'ok', remedy: 'Nothing to do: the password service signs in with the BitLocker account.' },
  no_bitlocker_sample: { section: 'laps', severity: 'info', remedy: "No recovery entry the console's read account can list below a standard computer of this scope: its rights cannot be verified until one exists (or grant the read account Read on msFVE-RecoveryInformation objects: the BitLocker rights export)." },
  bitlocker_console_key_hidden: { section: 'laps', severity: 'ok', remedy: "Nothing to do: the console's read account lists the recovery entry but the directory withholds its key." },
  bitlocker_console_reads_key: { section: 'laps', severity: 'error', remedy: "The console's read account can read msFVE-RecoveryPassword in this scope: remove its Control Access (or Full Control) on msFVE-RecoveryInformation objects; only the BitLocker account may read the key." },
  bitlocker_read_rights_effective: { section: 'laps', severity: 'ok', remedy: 'Nothing to do: the directory returns msFVE-RecoveryPassword to the BitLocker account on the sample entry.' },
  bitlocker_read_rights_missing: { section: 'laps', severity: 'error', remedy: 'The BitLocker account cannot read the recovery password in this scope: run the BitLocker rights export for it (Read property + Control access on msFVE-RecoveryPassword, msFVE-RecoveryInformation objects).' },
} satisfies Record<string, CheckSpec>;

export type CheckCode = keyof typeof CHECKS;

export interface Check {
  code: string;
  section: Section;
  severity: Severity;
  remedy: string;
  details?: Record<string, unknown>;
}

/** A check with its catalogue entry; an unknown code (a newer password service) is an error to look at. */
export function check(code: string, details?: Record<string, unknown>): Check {
  const spec: CheckSpec | undefined = (CHECKS as Record<string, CheckSpec>)[code];
  return { code, section: spec?.section ?? 'laps', severity: spec?.severity ?? 'error', remedy: spec?.remedy ?? 'Unknown check: see the password service log.', ...(details ? { details } : {}) };
}
