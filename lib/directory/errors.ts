import { ApiError, isApiError } from '../errors';

// The one directory error domain code sees: an LDAP result the directory answered with (the
// request was wrong or refused), as a kind a decision can name. Connection faults never reach
// here: the pool turns them into failover, `directory_unavailable` or `directory_outcome_unknown`.

export type DirectoryErrorKind =
  | 'denied' // insufficientAccessRights (50)
  | 'constraint' // constraintViolation (19): a password policy, a value the schema refuses
  | 'unwilling' // unwillingToPerform (53)
  | 'no_such_object' // 32
  | 'invalid_dn' // invalidDNSyntax (34)
  | 'value_exists' // attributeOrValueExists (20), entryAlreadyExists (68)
  | 'no_such_attribute' // 16
  | 'other';

const KINDS: Record<number, DirectoryErrorKind> = { 50: 'denied', 19: 'constraint', 53: 'unwilling', 32: 'no_such_object', 34: 'invalid_dn', 20: 'value_exists', 68: 'value_exists', 16: 'no_such_attribute' };

export class DirectoryError extends Error {
  readonly kind: DirectoryErrorKind;
  constructor(
    /** the LDAP result code */
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'DirectoryError';
    this.kind = KINDS[code] ?? 'other';
  }
}

export const isDirectoryError = (e: unknown, ...kinds: DirectoryErrorKind[]): e is DirectoryError =>
  e instanceof DirectoryError && (kinds.length === 0 || kinds.includes(e.kind));

/** The directory refused the credentials: never a reason to try another DC. */
export class DirectoryInvalidCredentials extends Error {
  constructor() {
    super('invalid directory credentials');
    this.name = 'DirectoryInvalidCredentials';
  }
}

/**
 * A directory failure as the API answers it (mapped once, here): the directory refused the
 * technical account → 403 `ad_denied`; a password the domain's policy refuses → 409
 * `password_policy`; an ApiError (unavailable, outcome unknown) as it is; anything else is
 * unexpected and rethrown (an internal error).
 */
export function directoryApiError(e: unknown): ApiError {
  if (isApiError(e)) return e;
  if (isDirectoryError(e, 'denied')) return new ApiError(403, 'ad_denied');
  throw e;
}

/** The service-side code of a directory failure, where the caller maps it (password service answers). */
export function directoryRefusalCode(e: unknown, op: 'modify' | 'password'): 'ad_denied' | 'password_policy' | undefined {
  if (isDirectoryError(e, 'denied')) return 'ad_denied';
  if (op === 'password' && isDirectoryError(e, 'constraint', 'unwilling')) return 'password_policy';
  return undefined;
}
