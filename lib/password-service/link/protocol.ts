// What travels over the signed link between the console and the password service: the requests
// the console may make and the answers it gets (a password only ever sealed: see ./index).

export type LapsOperation = 'laps.read' | 'laps.expire';
export interface LapsRequest {
  op: LapsOperation;
  computerGuid: string;
  /** the DN the console's decision was made on */
  expectedDn: string;
  /** the console's decision included vip.manage (DESIGN decision 2) */
  vipAllowed: boolean;
  operator: { guid: string; name: string };
  correlationId: string;
}

export interface ResetRequest {
  op: 'users.password.reset';
  userGuid: string;
  expectedDn: string;
  vipAllowed: boolean;
  /** pwdLastSet = 0: the user changes it at next sign-in */
  mustChange: boolean;
  /** also clear lockoutTime */
  unlock: boolean;
  operator: { guid: string; name: string };
  correlationId: string;
}

export type ServiceRequest = { op: 'health' } | { op: 'pin' } | { op: 'laps.diagnose'; scopeDns: string[] } | LapsRequest | ResetRequest;

export interface ScopeDiagnosis {
  scope: string;
  sample?: string;
  checks: string[];
}

export type ServiceResponse =
  | { ok: true; sealed?: string; expired?: true; source?: 'windows' | 'legacy'; pinned?: string; laps?: 'configured' | 'not_configured'; identity?: string; scopes?: ScopeDiagnosis[]; trusted?: boolean }
  /** retryAfterMs: with `rate_limited`, until the oldest operation in the window leaves it */
  | { ok: false; code: string; retryAfterMs?: number };

/** A revealed LAPS password, sealed service → console. */
export interface LapsPayload {
  account: string;
  password: string;
  updatedUtc: string | null;
  expiresUtc: string | null;
  source: 'windows' | 'legacy';
}

/** A generated reset password, sealed service → console. */
export interface ResetPayload {
  password: string;
}
