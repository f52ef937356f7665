// What a person reads for each error code of the API (tests/unit/web-words.test.ts fails when
// lib/ or functions/ throws a code that has no words here).
export const WORDS: Record<string, string> = {
  // sign-in and sessions
  invalid_credentials: 'The user name, password or code is not right.',
  totp_required: 'Enter the 6-digit code from your authenticator app.',
  totp_invalid: 'That code is not right or was already used. Wait for the next code and try again.',
  totp_enrolment_required: 'Set up your authenticator app to finish signing in.',
  no_console_role: 'Your account has no role in this console. Ask an administrator for access.',
  password_signin_disabled: 'Directory password sign-in is turned off on this console.',
  access_platform_only: 'This console accepts sign-in through the access platform only.',
  access_signin_not_configured: 'Sign-in through the access platform is not configured on this console.',
  access_token_required: 'Open the console through the access platform to sign in with it.',
  no_directory_account: 'Your access-platform identity names no enabled directory account.',
  migration_pending: 'The console is waiting for its database upgrade: an administrator runs the migrate command.',
  migration_in_progress: 'The console is upgrading its database. Try again in a minute.',
  schema_newer_than_code: 'The database was upgraded by a newer version of the console: this version cannot use it.',
  signin_rate_limited: 'Too many sign-in attempts. Try again later.',
  unauthenticated: 'Your session has ended. Sign in again.',
  session_revoked: 'Your session was ended. Sign in again.',
  not_configured: 'This console is not set up yet.',
  operator_disabled: 'Your directory account is disabled.',
  // step-up
  reauth_required: 'Confirm it is you to continue.',
  strict_reauth_required: 'Revealing or expiring a password needs you to confirm it is you first.',
  reauth_failed: 'That confirmation was not right.',
  // passkeys (issue 32)
  passkey_required: 'Use your passkey: touch or unlock your security key or device.',
  passkey_enrolment_required: 'Register a passkey to finish signing in.',
  passkey_enrolment_not_open: 'You already have an authenticator or a passkey: sign in with it.',
  passkey_challenge_invalid: 'That passkey answer was already used or came too late. Try again.',
  passkey_origin_mismatch: 'The passkey was used for another site than this console. Open the console at its own address.',
  passkey_rp_mismatch: 'That passkey belongs to another site.',
  passkey_user_verification_required: 'Your authenticator did not check that it is you (PIN or fingerprint). Use one that does.',
  passkey_counter_regressed: 'That passkey looks copied from another device: it was refused. Tell your administrator.',
  passkey_not_registered: 'That passkey is not registered to you (or was removed).',
  passkey_invalid: 'The passkey answer could not be checked. Try again.',
  passkey_signin_disabled: 'Signing in with a passkey alone is turned off on this console.',
  passkey_limit_reached: 'You already have the most passkeys allowed (10): remove one first.',
  passkey_already_registered: 'That passkey is already registered.',
  passkeys_not_configured: 'Passkeys need the console’s public address to be configured.',
  no_passkey: 'No passkey is registered.',
  access_platform_operator: 'Your access-platform session is your confirmation: no passkey is needed here.',
  reauth_rate_limited: 'Too many confirmation attempts. Try again later.',
  no_authenticator: 'You have no authenticator app set up: confirm with your password.',
  password_required: 'This console asks for your password to confirm.',
  authenticator_code_required: 'Confirm with a code from your authenticator app.',
  proof_required: 'Give a code or your password to confirm.',
  // browser and transport
  csrf_token_missing: 'The page lost its security token. Reload the page and try again.',
  csrf_token_invalid: 'The page security token expired. Try again.',
  cross_site_request: 'This request came from another site and was refused.',
  network_error: 'The console cannot be reached. Check your connection and try again.',
  internal_error: 'Something went wrong on the console.',
  service_unreachable: 'The console does not answer right now. Try again in a moment.',
  body_too_large: 'What you sent is too large.',
  invalid_json: 'The request could not be read.',
  json_required: 'The request could not be read.',
  validation_failed: 'Some fields are not filled in correctly.',
  bad_request: 'The request could not be read.',
  method_not_allowed: 'That operation is not available here.',
  unsupported_media_type: 'The request could not be read.',
  not_found: 'Not found, or outside what you manage.',
  forbidden: 'You are not allowed to do that.',
  missing_permission: 'You are not allowed to do that.',
  invalid_cursor: 'The list changed or expired. Search again.',
  invalid_id: 'That identifier is not valid.',
  not_ready: 'The console is starting. Try again in a moment.',
  too_many_attempts: 'Too many attempts. Try again later.',
  // directory
  directory_unavailable: 'The directory cannot be reached right now. Try again in a moment.',
  overloaded: 'The console is too busy to take this request right now.',
  no_dc_reachable: 'No domain controller answers right now. Try again in a moment.',
  directory_outcome_unknown: 'The directory did not confirm the change. Check the object before trying again.',
  ad_denied: 'The directory refused the change (missing rights of the console account).',
  moved: 'The object moved while you were working on it. Open it again.',
  own_account: 'You cannot act on your own account.',
  // LAPS
  ticket_required: 'A ticket number is required.',
  confirmation_required: 'Confirm before going on.',
  laps_no_password: 'This computer has no readable local administrator password.',
  laps_encrypted_unsupported: 'This computer stores only an encrypted password, which the console does not read.',
  laps_not_managed: 'This computer is not managed by LAPS.',
  rate_limited: 'Too many reveals or expiries for this computer in the last 10 minutes.',
  laps_not_configured: 'The LAPS account is not configured on the password service.',
  laps_unavailable: 'The password service is unavailable. Try again later.',
  trust_not_pinned: 'The password service is not pinned to the domain yet (administrator: pin-password-service).',
  laps_account_not_allowed: 'That account cannot be the LAPS account.',
  // users and groups
  reset_unavailable: 'The password service is unavailable. Try again later.',
  reset_not_configured: 'The password-reset account is not configured on the password service.',
  password_policy: 'The directory refused the generated password (password policy).',
  member_not_allowed: 'That member cannot be added or removed.',
  duplicate_member: 'That member is listed twice.',
  no_member_change: 'Nothing to change.',
  too_many_changes: 'Too many changes at once.',
  group_not_found: 'Group not found.',
  // approvals
  approval_required: 'This action needs an approval: file a request.',
  approval_not_required: 'You may do this directly; no request is needed.',
  action_not_approvable: 'This action cannot be requested for approval.',
  self_approval: 'You cannot approve your own request.',
  approver_not_allowed: 'You are not an approver of this request.',
  'approver_not_allowed:already_approved': 'You already approved this request.',
  'approver_not_allowed:not_captured': 'You were not an approver when this request was filed.',
  'approver_not_allowed:not_named': 'You are no longer named as an approver.',
  'approver_not_allowed:widens_own_rights': 'Approving would widen your own rights.',
  not_requester: 'Only the requester can cancel this request.',
  request_not_pending: 'This request is no longer pending.',
  request_changed_concurrently: 'Someone else acted on this request at the same time. Reload it.',
  request_id_collision: 'Try again.',
  requester_disabled: "The requester's account is disabled.",
  invalid_parameters: 'The request parameters are not valid.',
  // bulk requests and the leaver flow
  action_not_available: 'This action cannot be requested this way.',
  too_many_targets: 'Too many accounts in one request: split it.',
  duplicate_target: 'An account is named twice in the request.',
  bulk_target_refused: 'Some accounts cannot be part of this request.',
  bulk_sources_differ: 'These accounts are approved by different approvers: file one request per delegation.',
  job_not_running: 'This request has no unfinished job.',
  not_executor: 'Only the approver who executed this request can resume it or download its passwords.',
  already_downloaded: 'The passwords of this request were downloaded already: they are shown only once.',
  download_expired: 'The time to download these passwords is over: nothing was reset. File a new request.',
  download_not_available: 'This request has no passwords to download.',
  job_running: 'The job is still running.',
  // administration
  computers_read_required: 'A role with a LAPS permission also needs computers.read.',
  users_read_required: 'This permission also needs users.read in the same role.',
  users_rename_required: 'Changing sign-in names also needs users.rename in the same role.',
  groups_read_required: 'This permission also needs groups.read in the same role.',
  unknown_permission: 'Unknown permission.',
  role_not_found: 'Role not found.',
  role_read_only: 'The built-in Super administrator role cannot be changed.',
  role_in_use: 'This role is used by a delegation.',
  role_name_taken: 'Another role has that name.',
  duplicate_role: 'Another role has that name.',
  role_not_delegable: 'This role cannot be delegated.',
  delegation_not_found: 'Delegation not found.',
  action_not_in_delegation: 'That action is not part of the delegation.',
  assignee_not_found: 'That user or group was not found in the directory.',
  assignee_not_security_group: 'Only security groups can be assigned.',
  ou_not_found: 'That OU was not found.',
  ou_not_managed: 'That OU is not a managed OU.',
  ou_in_tier: 'That OU is inside a Tier 0/1 OU.',
  ou_not_below_domain_root: 'The OU must be below the domain root.',
  not_an_ou: 'That is not an organizational unit.',
  version_conflict: 'Someone changed this meanwhile. Reload and try again.',
  concurrent_update: 'Someone changed this meanwhile. Reload and try again.',
  authz_changed_concurrently: 'Rights changed meanwhile. Reload and try again.',
  settings_changed_concurrently: 'Settings changed meanwhile. Reload and try again.',
  operator_not_found: 'Operator not found.',
  operator_rights_not_held: "You need all of that operator's rights to do this.",
  super_administrator_required: 'Only a Super administrator can do this.',
  super_administrator_not_found: 'Super administrator not found.',
  already_super_administrator: 'Already a Super administrator.',
  last_super_administrator: 'The last Super administrator cannot be removed.',
  url_and_secret_required: 'A channel needs an https URL and a secret.',
  invalid_import_file: 'The import file is not valid.',
  weak_password: 'That password is too weak.',
  invalid_time_range: 'The start of the time range must not be after its end.',
  https_required: 'The address must start with https://.',
  // setup
  invalid_dc_url: 'A domain controller address must look like ldaps://host:636.',
  ldaps_required: 'Domain controllers are reached over LDAPS only (ldaps://).',
  ldaps_port_refused: 'Only port 636 is allowed (389, 3268 and 3269 are refused).',
  ca_contains_private_key: 'The certificate file holds a private key: give the certificate only.',
  setup_closed: 'Setup is closed: this console is already set up.',
  setup_token_invalid: 'The setup token is not right.',
  read_account_rejected: 'The directory refused the read account.',
  write_account_rejected: 'The directory refused the write account.',
  invalid_token: 'The token is not valid.',
  // fleet plane (shared codes)
  client_exists: 'That client already exists.',
  client_has_consoles: 'That client still has consoles.',
  unknown_client: 'Unknown client.',
  kind_not_available: 'Not available for this kind.',
  lock_failed: 'The lock could not be set.',
  protected_node: 'That node is protected.',
  url_required: 'A channel needs a URL.',
  target_refused: 'That address is inside a private network (loopback, private, link-local or reserved): it is not called unless the outbound allow-list admits it.',
  secrets_key_missing: 'The key that protects channel secrets is missing on the server.',
  too_many_channels: 'Too many channels: remove one first.',
  too_many_requests: 'Too many requests. Try again in a moment.',
  // console upgrades and per-client access roles
  nothing_to_upgrade: 'Every chosen console is already at the target version.',
  target_not_set: 'Set a target version first.',
  would_overwrite: 'A role of that name already exists and was not made by the fleet plane: replace it only on purpose.',
  // proxy deployments and join tokens
  deployment_exists: 'That deployment already exists.',
  deployment_gone: 'That deployment was removed meanwhile.',
  deployment_not_validated: 'Validate the deployment first.',
  deployment_not_finished: 'Press Finish once the proxy is installed, then check for its desktop.',
  deployment_finished: 'The install is marked finished: its site facts cannot change any more.',
  deployment_completed: 'This deployment is complete.',
  token_revoke_failed: 'The join token could not be revoked: it stays valid until it expires. Run the command shown, or fix the fleet role (token delete) and check again.',
  // instance administration: protection list, operator records, baseline
  group_not_security_group: 'Only a security group can protect its members: a distribution group is never in a sign-in token.',
  already_protected: 'That group is already on the protection list.',
  baseline_invalid: 'The baseline was not imported: some of its entries cannot be used on this console. Nothing was changed.',
  baseline_conflicts: 'The baseline was not imported: it would replace roles or delegations that differ here. Import again with "replace" to overwrite them. Nothing was changed.',
  assignee_kind_mismatch: 'An assignee of the baseline is not of the kind it names (user or group) here.',
  duplicate_delegation: 'The baseline names the same delegation twice.',
  delegation_exists: 'A different delegation with that id exists here.',
  // directory management (moves, renames, groups) and the delegation export
  same_ou: 'The account is already in that OU.',
  name_taken: 'Another object in that OU already has this name.',
  upn_suffix_unknown: 'That sign-in name suffix is not one of the domain\'s UPN suffixes.',
  login_taken: 'Another object in the domain already uses that sign-in name.',
  members_not_confirmed: 'The member list changed since you reviewed it. Review the members again before deleting the group.',
  manager_not_allowed: 'That account cannot be set as the group\'s owner.',
  laps_right_refused: 'The LAPS export grants only reading msLAPS-Password (and writing the expiration time) on computer objects.',
  laps_identity_upn_missing: 'The LAPS account has no sign-in name (UPN) configured.',
  delegation_identity_not_found: 'The account named in the export was not found in the directory.',
  schema_name_unknown: 'The directory schema does not know an attribute or class the export names.',
  // directory connection changes
  upn_suffix_invalid: 'That is not a valid UPN suffix (a DNS name such as corp.example.com).',
  dc_duplicate: 'That domain controller is already in the list.',
  dc_check_failed: 'A new domain controller did not pass the check (TLS with the configured CA and host name, then a sign-in of the read account). Nothing was saved.',
  ca_unreadable: 'The certificate file could not be read as PEM certificates.',
  ca_not_a_ca: 'That certificate is not a certificate authority.',
  ca_check_failed: 'Not every domain controller chains to the new CA. Nothing was saved.',
  account_file_provided: 'That account\'s password comes from a file on the password service host and is changed there.',
  account_bind_refused: 'The new password did not sign in on every domain controller. Nothing was saved.',
  discovery_failed: 'The domain\'s DNS did not answer with domain controllers.',
};

const duration = (s: number) => (s >= 90 ? `${Math.ceil(s / 60)} min` : `${s} s`);

/** An app's own phrasing over the shared table (the fleet dashboard's words for the fleet API's codes). */
const overrides: Record<string, string> = {};
export function addWords(words: Record<string, string>) {
  Object.assign(overrides, words);
}

/** The words for a failure, with what its details add (time left, field errors, correlation id). */
export function say(err: unknown, opts: { withCorrelation?: boolean } = {}): string {
  // an ApiFailure of ./api (not imported: this table is also read by the unit tests, under Node)
  const e = err as { status?: number; code?: unknown; body?: Record<string, any> };
  if (!e || typeof e.code !== 'string' || typeof e.status !== 'number' || !e.body) return 'Something went wrong.';
  if (e.code === 'cancelled') return 'Cancelled: nothing was done.';
  const word = (c: string) => overrides[c] ?? WORDS[c];
  const withReason = typeof e.body.reason === 'string' ? overrides[`${e.code}:${e.body.reason}`] : undefined;
  // a gateway's own 5xx (no JSON body of ours): the service is not answering
  const unreachable = /^http_5\d\d$/.test(e.code) ? `${word('service_unreachable')} (HTTP ${e.status})` : undefined;
  const base = withReason ?? unreachable ?? word(e.code) ?? word(e.code.split(':')[0]) ?? (e.status >= 500 ? word('internal_error') : `Refused (${e.code}).`);
  const extra: string[] = [];
  if (typeof e.body.retryAfterSeconds === 'number') extra.push(`Try again in ${duration(e.body.retryAfterSeconds)}.`);
  else if (e.code === 'rate_limited') extra.push('Try again within 10 minutes, when the oldest of them leaves the window.');
  for (const k of ['ou', 'assignee', 'member'] as const) if (typeof e.body[k] === 'string') extra.push(`(${e.body[k]})`);
  if (e.body.fields && typeof e.body.fields === 'object') extra.push(Object.entries(e.body.fields as Record<string, unknown>).map(([f, m]) => `${f}: ${String(m)}`).join('; '));
  if (Array.isArray(e.body.errors)) extra.push(e.body.errors.map((x: { field: string; message: string }) => `${x.field.replace(/^body\./, '')}: ${x.message}`).join('; '));
  if (e.body.correlationId && opts.withCorrelation !== false) extra.push(`Give your administrator the correlation id ${e.body.correlationId}.`);
  return [base, ...extra].join(' ');
}
