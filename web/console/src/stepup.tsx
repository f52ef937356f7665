import { createContext, useCallback, useContext, useState, type ReactNode } from 'react';
import { ApiFailure, post, type Me } from './api';
import { Busy, ErrorText, Modal, useAction } from '../../shared/ui';

// The step-up: an action the API refuses with reauth_required / strict_reauth_required asks the
// operator to confirm (authenticator code or password), then runs again.

type Proof = 'authenticator' | 'password';
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
  const [ask, setAsk] = useState<{ proof: Proof; resolve: (ok: boolean) => void }>();
  const usual: Proof = me.stepUpMode === 'password' ? 'password' : 'authenticator';
  const prompt = useCallback((proof: Proof) => new Promise<boolean>((resolve) => setAsk({ proof, resolve })), []);
  const withStepUp: RunWithStepUp = useCallback(
    async (fn) => {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof ApiFailure) || !STEP_UP_CODES.has(e.code) || e.body.proof === null) throw e;
        const ok = await prompt((e.body.proof as Proof | undefined) ?? usual);
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
          onDone={(ok) => {
            if (ok) onConfirmed();
            ask.resolve(ok);
          }}
        />
      )}
    </StepUpCtx.Provider>
  );
}

function StepUpDialog({ proof: asked, onDone }: { proof: Proof; onDone: (ok: boolean) => void }) {
  const [proof, setProof] = useState<Proof>(asked);
  const [value, setValue] = useState('');
  const a = useAction();
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
        <ErrorText error={a.error} />
        {a.error instanceof ApiFailure && a.error.code === 'no_authenticator' && proof === 'authenticator' && (
          <button type="button" className="link" onClick={() => setProof('password')}>
            Use my password instead
          </button>
        )}
        <div className="actions">
          <Busy type="submit" busy={a.busy}>
            Confirm
          </Busy>
          <button type="button" className="secondary" onClick={() => onDone(false)}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
