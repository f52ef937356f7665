import { REQUIRES } from '../../authz/rights';
import type { ErrorCodes } from '../../http/answers';

// Error codes several console routes answer through a shared outside system (the pipeline's own
// are in lib/http/console-openapi.ts).

/** Any read of the directory: every DC down (lib/directory/pool.ts). */
export const DIRECTORY_READ: ErrorCodes = { 503: ['directory_unavailable'] };
/** A change in the directory: refused to the technical account, or sent and unanswered. */
export const DIRECTORY_WRITE: ErrorCodes = { 403: ['ad_denied'], 502: ['directory_outcome_unknown'], 503: ['directory_unavailable'] };
/** The approvable actions (lib/actions): refused, needing an approval, or the password service's answer for a reset. */
export const ACTIONS: ErrorCodes = {
  400: ['duplicate_member', 'duration_out_of_range', 'member_not_allowed', 'no_member_change'],
  403: ['ad_denied', 'approval_required', 'forbidden', 'own_account'],
  404: ['not_found'],
  409: ['already_member', 'moved', 'password_policy'],
  502: ['directory_outcome_unknown'],
  503: ['directory_unavailable', 'reset_not_configured', 'reset_unavailable', 'trust_not_pinned'],
};
/** A LAPS reveal or expire through the password service (lib/laps/reveal.ts). */
export const LAPS: ErrorCodes = {
  400: ['confirmation_required', 'ticket_required'],
  403: ['ad_denied', 'forbidden', 'strict_reauth_required'],
  404: ['not_found'],
  409: ['laps_encrypted_unsupported', 'laps_no_password', 'laps_not_managed', 'moved'],
  429: ['rate_limited'],
  503: ['directory_unavailable', 'laps_not_configured', 'laps_unavailable', 'trust_not_pinned'],
};
/** A BitLocker reveal through the password service (issue 33; lib/laps/reveal.ts, op bitlocker.read). */
export const BITLOCKER: ErrorCodes = {
  400: ['confirmation_required', 'ticket_required'],
  403: ['forbidden', 'strict_reauth_required'],
  404: ['not_found'],
  409: ['bitlocker_no_password', 'moved'],
  429: ['rate_limited'],
  503: ['bitlocker_not_configured', 'directory_unavailable', 'laps_unavailable', 'trust_not_pinned'],
};
/** Moves, renames and group management (lib/actions/directory-management.ts). */
export const MANAGEMENT: ErrorCodes = { 403: ['ad_denied', 'approval_required', 'forbidden', 'own_account'], 404: ['not_found'], 502: ['directory_outcome_unknown'], 503: ['directory_unavailable'] };
/** A scoped list (lib/authz/scoped-list.ts): a cursor not from this list. */
export const SCOPED_LIST: ErrorCodes = { 400: ['invalid_cursor'], 503: ['directory_unavailable'] };

/** The role editor's refusals (lib/authz/rights.ts validateRole): a permission without its prerequisite is `<prerequisite>_required`. */
export const ROLE_EDITOR: ErrorCodes = {
  400: ['invalid_id', 'unknown_permission', 'validation_failed', ...[...new Set(Object.values(REQUIRES))].map((p) => `${p!.replace(/\./g, '_')}_required`)],
  403: ['role_read_only'],
};
/** The delegation editor's refusals (lib/authz/admin.ts). */
export const DELEGATION_EDITOR: ErrorCodes = {
  400: ['assignee_not_found', 'assignee_not_security_group', 'invalid_id', 'not_an_ou', 'ou_in_tier', 'ou_not_below_domain_root', 'ou_not_found', 'ou_not_managed', 'role_not_delegable', 'role_not_found'],
  503: ['directory_unavailable'],
};
/** Saving roles and delegations: one revision moves with every change; a change widening its author's rights needs an approval (decision 26). */
export const AUTHZ_SAVE: ErrorCodes = { 400: ['too_many_changes'], 401: ['session_revoked'], 403: ['approval_required'], 409: ['authz_changed_concurrently', 'not_configured', 'version_conflict'] };

/** The refusals of a passkey ceremony (lib/auth/passkeys.ts), each audited with its code: 403 at a step-up, 401 at a sign-in. */
export const PASSKEY_REFUSALS = ['passkey_challenge_invalid', 'passkey_counter_regressed', 'passkey_invalid', 'passkey_not_registered', 'passkey_origin_mismatch', 'passkey_rp_mismatch', 'passkey_user_verification_required'];
