import type { Config } from '../config';
import type { Store } from '../store';
import { countInWindow, giveBack, noteInWindow, peekWindow, takeFromWindows, type WindowSpec } from '../store/window';

// Sign-in and step-up limits (docs/decisions.md, Console 7), on the sliding windows of lib/store:
//   per source address          hard: MaxFailuresPerAddress, then 429 from that address only
//   per account and address     hard: MaxFailuresPerAccountAndAddress, then 429 for that account
//                               from that address only
//   per account, all addresses  soft: from MaxFailuresPerAccount on, every attempt on the account
//                               waits AccountSlowdown before its check; it is never refused, so
//                               strangers failing from other addresses cannot keep its owner out
//   step-ups per account        hard: MaxStepUpFailures, then 429 reauth_rate_limited (only a
//                               signed-in session can fail a step-up; it never blocks sign-in)
// An attempt takes its place in the hard windows before the directory is asked (atomically: N
// parallel attempts admit at most the limit) and gives it back when it succeeds, so only failures
// stay counted.

export type SignInLimits = Config['SignIn'];

/**
 * The account a sign-in counts against: the resolved account's objectGUID, whatever spelling was
 * typed (`CORP\user`, `x\user`, the UPN, any case). A name that resolves to no account counts
 * under the name reduced the same way (domain prefix and UPN suffix dropped, lower case), so an
 * unknown name meets the same limits as an existing one and the limits reveal nothing.
 */
export function accountSubject(resolvedGuid: string | undefined, typed: string): string {
  if (resolvedGuid) return `guid:${resolvedGuid.toLowerCase()}`;
  const bare = typed.trim().toLowerCase().split('\\').pop()!.split('@')[0];
  return `name:${bare}`;
}

const windowMs = (l: SignInLimits) => l.FailureWindow * 1000;
const accountWide = (l: SignInLimits, subject: string): WindowSpec => ({ scope: 'signin-account', subject, limit: l.MaxFailuresPerAccount, windowMs: windowMs(l) });

export interface Attempt {
  /** the account is past its account-wide limit: this attempt was slowed */
  slowed: boolean;
  /** the check failed: it stays counted, and counts account-wide */
  failed(): Promise<void>;
  /** the check passed: give the places back (a success is not a failure) */
  succeeded(): Promise<void>;
}
export type Admission = ({ admitted: true } & Attempt) | { admitted: false; limit: 'address' | 'account_address' | 'step_up'; retryAfterSeconds: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function admitInto(store: Store, limits: SignInLimits, hard: WindowSpec[], subject: string, names: Record<string, 'address' | 'account_address' | 'step_up'>, wait: (ms: number) => Promise<unknown>): Promise<Admission> {
  const taken = await takeFromWindows(store, hard);
  if (!taken.admitted) return { admitted: false, limit: names[taken.refusedBy], retryAfterSeconds: Math.ceil(taken.retryAfterMs / 1000) };
  const account = accountWide(limits, subject);
  const slowed = (await countInWindow(store, account)) >= limits.MaxFailuresPerAccount;
  if (slowed) await wait(limits.AccountSlowdown * 1000);
  return {
    admitted: true,
    slowed,
    failed: () => noteInWindow(store, account),
    succeeded: () => giveBack(store, hard, taken.id),
  };
}

const addressWindow = (l: SignInLimits, address: string): WindowSpec => ({ scope: 'signin-address', subject: address, limit: l.MaxFailuresPerAddress, windowMs: windowMs(l) });

/**
 * An address already past its limit, checked before the name is even looked up (a flood from one
 * address costs no directory work). A read only: admitSignIn decides, atomically.
 */
export async function addressRefused(store: Store, limits: SignInLimits, address: string): Promise<Admission | undefined> {
  const p = await peekWindow(store, addressWindow(limits, address));
  return p.admitted ? undefined : { admitted: false, limit: 'address', retryAfterSeconds: Math.ceil(p.retryAfterMs / 1000) };
}

/** Admit a sign-in attempt from `address` on `subject` (see accountSubject), before any bind. */
export function admitSignIn(store: Store, limits: SignInLimits, subject: string, address: string, wait = sleep): Promise<Admission> {
  return admitInto(
    store,
    limits,
    [
      addressWindow(limits, address),
      { scope: 'signin-account-address', subject: `${subject}|${address}`, limit: limits.MaxFailuresPerAccountAndAddress, windowMs: windowMs(limits) },
    ],
    subject,
    { 'signin-address': 'address', 'signin-account-address': 'account_address' },
    wait,
  );
}

/** Admit a step-up attempt of the signed-in operator (objectGUID). */
export function admitStepUp(store: Store, limits: SignInLimits, guid: string, wait = sleep): Promise<Admission> {
  const subject = accountSubject(guid, '');
  return admitInto(store, limits, [{ scope: 'stepup-account', subject, limit: limits.MaxStepUpFailures, windowMs: windowMs(limits) }], subject, { 'stepup-account': 'step_up' }, wait);
}
