import { addWords } from '../../shared/words';

// The fleet API's error codes in the dashboard's words (over the shared table of web/shared/words.ts).
export const FLEET_WORDS: Record<string, string> = {
  invalid_credentials: 'The user name or password is not right.',
  too_many_attempts: 'Too many failed sign-ins. Wait 15 minutes, or sign in through the access platform.',
  unauthenticated: 'You are signed out. Sign in again.',
  invalid_token: 'Your sign-in token is not valid any more. Sign in again.',
  signin_refused: 'Your access-platform account has no role that opens the fleet dashboard. Ask an MSP administrator for a technician assignment.',
  network_error: 'The fleet plane cannot be reached. Check your connection and try again.',
  internal_error: 'Something went wrong on the fleet plane.',
  service_unreachable: 'The fleet plane does not answer right now. Try again in a moment.',
  not_found: 'Not found, or outside the clients you can see.',
  insufficient_level: 'You can view this client but not change it: that needs the operator level.',
  client_scope: 'That names a client outside the clients you operate.',
  admin_required: 'Only MSP administrators can do that.',
  unknown_client: 'That client is not registered.',
  client_exists: 'A client with that code is already registered.',
  client_has_consoles: 'Remove the consoles of this client first.',
  'protected_node:protected_service': 'An Auth or Proxy node cannot be locked: locking it would cut the whole cluster.',
  'protected_node:unsupported_kind': 'This kind of node cannot be locked.',
  protected_node: 'This node cannot be locked.',
  lock_failed: "The lock could not be set: the fleet plane's cluster role lacks create and update on lock.",
  access_credentials_expired: "The fleet plane's cluster credentials expired (identity file or Machine ID). Renew them.",
  access_access_denied: "The fleet plane's cluster role lacks a rule for this.",
  access_unavailable: 'The access platform cannot be read right now. Try again.',
  too_many_requests: 'Too many test sends: at most 10 a minute.',
  'too_many_requests:poll_now': 'This console was polled now 6 times in the last minute, the most allowed.',
  nothing_to_upgrade: 'Nothing to upgrade: the chosen consoles already run the target version, or none you may operate is known to be behind it (a console that never answered is not; select it to include it).',
  target_not_set: 'No target version is set, so no console can be behind it: an administrator sets one in the upgrade settings first.',
  would_overwrite: 'The cluster has a role of that name that the fleet plane did not create: nothing was written.',
  token_revoke_failed: "The join token could not be revoked (the fleet plane's cluster role lacks token delete?): it stays valid until it expires. Run the manual command shown, then check again.",
};

