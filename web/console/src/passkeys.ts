import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { post } from './api';

// Passkeys in the browser (issue 32) through @simplewebauthn/browser: the console sends the
// ceremony's options, the browser's authenticator answers, the console checks the answer.

export const passkeysSupported = () => browserSupportsWebAuthn();

/** What a step-up assertion is made for: a strict step-up's refusal names it; otherwise the step-up window. */
export interface PasskeyPurpose {
  action: string;
  target?: string;
}
export const WINDOW_STEP_UP: PasskeyPurpose = { action: 'step-up' };

/** A step-up with a passkey: a challenge made for `purpose`, one touch, then POST /api/auth/reauth. */
export async function stepUpWithPasskey(purpose: PasskeyPurpose = WINDOW_STEP_UP): Promise<void> {
  const optionsJSON = await post('/api/auth/passkeys/step-up-options', purpose);
  const passkey = await startAuthentication({ optionsJSON });
  await post('/api/auth/reauth', { passkey });
}

/** Register a passkey (the caller has stepped up): the console's options, the authenticator's new credential. */
export async function registerPasskey(name: string): Promise<void> {
  const optionsJSON = await post('/api/auth/passkeys/registration-options');
  const response = await startRegistration({ optionsJSON });
  await post('/api/auth/passkeys', { response, name });
}

/** Answer sign-in options (second factor or passkey alone) with the authenticator. */
export const answerPasskey = (optionsJSON: any) => startAuthentication({ optionsJSON });
/** Answer the enrolment's registration options inside the sign-in. */
export const answerRegistration = (optionsJSON: any) => startRegistration({ optionsJSON });

/** The browser's refusal (the operator cancelled, no authenticator) in words. */
export function passkeyErrorText(e: unknown): string | undefined {
  if (e instanceof Error && (e.name === 'NotAllowedError' || e.name === 'AbortError')) return 'The passkey was not used (cancelled or timed out). Try again.';
  if (e instanceof Error && e.name === 'InvalidStateError') return 'This authenticator already holds a passkey for you.';
  if (e instanceof Error && e.name === 'SecurityError') return 'Passkeys need the console’s own address (https or localhost).';
  return undefined;
}
