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

/** Reveal one BitLocker recovery password (issue 33): the LAPS reveal's chain, the BitLocker account. */
export interface BitlockerRequest {
  op: 'bitlocker.read';
  computerGuid: string;
  expectedDn: string;
  vipAllowed: boolean;
  /** the recovery entry's key id (msFVE-RecoveryGuid, the full GUID) */
  keyId: string;
  operator: { guid: string; name: string };
  correlationId: string;
}

/** The operations that read or change a secret of a computer: one admission (nonce, pin, chain row, rate window). */
export type ComputerSecretRequest = LapsRequest | BitlockerRequest;

export type ServiceRequest =
  | { op: 'health' }
  | { op: 'pin' }
  | { op: 'laps.diagnose'; scopeDns: string[] }
  /** per scope, one sample recovery entry found by the console's read account: can the BitLocker account read its key? */
  | { op: 'bitlocker.diagnose'; samples: Array<{ scope: string; dn: string }> }
  | LapsRequest
  | BitlockerRequest
  | ResetRequest;

export interface ScopeDiagnosis {
  scope: string;
  sample?: string;
  checks: string[];
}

export type ServiceResponse =
  | {
      ok: true;
      sealed?: string;
      expired?: true;
      source?: 'windows' | 'legacy';
      pinned?: string;
      laps?: 'configured' | 'not_configured';
      bitlocker?: 'configured' | 'not_configured';
      identity?: string;
      scopes?: ScopeDiagnosis[];
      trusted?: boolean;
    }
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

/** A revealed BitLocker recovery password, sealed service → console. */
export interface BitlockerPayload {
  keyId: string;
  volumeGuid: string | null;
  /** 48 digits in 8 groups of 6, as the directory holds it */
  recoveryPassword: string;
  date: string | null;
}

/** A generated reset password, sealed service → console. */
export interface ResetPayload {
  password: string;
}
