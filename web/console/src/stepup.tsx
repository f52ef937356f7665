import { createContext, useCallback, useContext, useState, type ReactNode } from 'react';
import { ApiFailure, post, type Me } from './api';
import { Busy, ErrorText, Modal, useAction } from '../../shared/ui';
import { passkeyErrorText, passkeysSupported, stepUpWithPasskey, type PasskeyPurpose } from './passkeys';

// The step-up: an action the API refuses with reauth_required / strict_reauth_required asks the
// operator to confirm (authenticator code, password or passkey), then runs again. A strict
// step-up's refusal names what a passkey assertion is to be made for (issue 32).

type Proof = 'authenticator' | 'password' | 'passkey';
type RunWithStepUp = <T>(fn: () => Promise<T>) => Promise<T>;
const StepUpCtx = createContext<{ withStepUp: RunWithStepUp; confirmNow: () => Promise<boolean> }>({ withStepUp: (fn) => fn(), confirmNow: async () => false });
export const useStepUp = () => useContext(StepUpCtx);
const STEP_UP_CODES = new Set(['reauth_required', 'strict_reauth_required']);

export class Cancelled extends ApiFailure {
  constructor() {
    super(0, 'cancelled', {});
  }
}

export function StepUpProvider({ me, onConfirmed, children }: { me: Me; onConfirmed: () => void; children: ReactNode }) {
  const [ask, setAsk] = useState<{ proof: Proof; purpose?: PasskeyPurpose; resolve: (ok: boolean) => void }>();
  const usual: Proof = me.stepUpMode === 'password' ? 'password' : me.stepUpMode === 'passkey' ? 'passkey' : 'authenticator';
  const prompt = useCallback((proof: Proof, purpose?: PasskeyPurpose) => new Promise<boolean>((resolve) => setAsk({ proof, purpose, resolve })), []);
  const withStepUp: RunWithStepUp = useCallback(
    async (fn) => {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof ApiFailure) || !STEP_UP_CODES.has(e.code) || e.body.proof === null) throw e;
        const ok = await prompt((e.body.proof as Proof | undefined) ?? usual, e.body.passkey as PasskeyPurpose | undefined);
        setAsk(undefined);
        if (!ok) throw new Cancelled();
        return await fn();
      }
    },
    [prompt, usual],
  );
  const confirmNow = useCallback(async () => {
    const ok = await prompt(usual);
    setAsk(undefined);
    return ok;
  }, [prompt, usual]);
  return (
    <StepUpCtx.Provider value={{ withStepUp, confirmNow }}>
      {children}
      {ask && (
        <StepUpDialog
          proof={ask.proof}
          purpose={ask.purpose}
          onDone={(ok) => {
            if (ok) onConfirmed();
            ask.resolve(ok);
          }}
        />
      )}
    </StepUpCtx.Provider>
  );
}

function StepUpDialog({ proof: asked, purpose, onDone }: { proof: Proof; purpose?: PasskeyPurpose; onDone: (ok: boolean) => void }) {
  const [proof, setProof] = useState<Proof>(asked);
  const [value, setValue] = useState('');
  const a = useAction();
  // one touch: the challenge is made for what is asked (a strict step-up names its request)
  const usePasskey = async () => {
    const ok = await a.run(async () => {
      await stepUpWithPasskey(purpose);
      return true;
    });
    if (ok) onDone(true);
  };
  // the browser's own refusal (cancelled, no authenticator) in words; the console's by its code
  const problem = a.error && !(a.error instanceof ApiFailure) ? (passkeyErrorText(a.error) ?? 'The passkey could not be used.') : undefined;
  const errors = (
    <>
      <ErrorText error={a.error instanceof ApiFailure ? a.error : undefined} />
      {problem && <p className="error">{problem}</p>}
    </>
  );
  const passkeyButton = (className?: string) =>
    passkeysSupported() && (
      <Busy type="button" className={className} busy={a.busy} onClick={() => void usePasskey()}>
        Use a passkey
      </Busy>
    );
  const cancel = (
    <button type="button" className="secondary" onClick={() => onDone(false)}>
      Cancel
    </button>
  );
  if (proof === 'passkey') {
    return (
      <Modal title="Confirm it is you" onClose={() => onDone(false)}>
        <p>Use your passkey: touch or unlock your security key or device.</p>
        {errors}
        <div className="actions">
          {passkeyButton()}
          {cancel}
        </div>
      </Modal>
    );
  }
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const ok = await a.run(() => post('/api/auth/reauth', proof === 'authenticator' ? { code: value.trim() } : { password: value }));
    if (ok !== undefined) onDone(true);
  };
  return (
    <Modal title="Confirm it is you" onClose={() => onDone(false)}>
      <form onSubmit={submit}>
        <p>{proof === 'authenticator' ? 'Enter the current code from your authenticator app.' : 'Enter your directory password again.'}</p>
        <label>
          {proof === 'authenticator' ? 'Authenticator code' : 'Password'}
          {proof === 'authenticator' ? (
            <input name="stepup-code" inputMode="numeric" autoComplete="one-time-code" pattern="\d{6}" title="6 digits" maxLength={6} required value={value} onChange={(e) => setValue(e.target.value)} />
          ) : (
            <input name="stepup-password" type="password" autoComplete="current-password" required value={value} onChange={(e) => setValue(e.target.value)} />
          )}
        </label>
        {errors}
        {a.error instanceof ApiFailure && a.error.code === 'no_authenticator' && proof === 'authenticator' && (
          <button type="button" className="link" onClick={() => setProof('password')}>
            Use my password instead
          </button>
        )}
        <div className="actions">
          <Busy type="submit" busy={a.busy}>
            Confirm
          </Busy>
          {passkeyButton('secondary')}
          {cancel}
        </div>
      </form>
    </Modal>
  );
}
