import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { ApiFailure, post, type Me } from './api';
import { ErrorText, Modal, useAction } from '../../shared/ui';

// The console's own pieces: the step-up prompt, the once-shown secret. The modal dialog, the error
// in words, the router and the busy flag are web/shared/ui.tsx (the fleet dashboard uses them too).
export { ErrorText, Link, Modal, RouterProvider, useAction, useLoaded, useRoute, when } from '../../shared/ui';

// ---- step-up -------------------------------------------------------------------------------
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
            <input name="stepup-code" inputMode="numeric" autoComplete="one-time-code" pattern="\d{6}" maxLength={6} required autoFocus value={value} onChange={(e) => setValue(e.target.value)} />
          ) : (
            <input name="stepup-password" type="password" autoComplete="current-password" required autoFocus value={value} onChange={(e) => setValue(e.target.value)} />
          )}
        </label>
        <ErrorText error={a.error} />
        {a.error instanceof ApiFailure && a.error.code === 'no_authenticator' && proof === 'authenticator' && (
          <button type="button" className="link" onClick={() => setProof('password')}>
            Use my password instead
          </button>
        )}
        <div className="actions">
          <button type="submit" disabled={a.busy}>
            Confirm
          </button>
          <button type="button" className="secondary" onClick={() => onDone(false)}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

// ---- a password shown once ---------------------------------------------------------------
export const SECRET_SECONDS = 30;

/** Digits, upper case, lower case and symbols drawn apart, in a font where 0/O and 1/l/I differ. */
export function SecretText({ value }: { value: string }) {
  return (
    <code className="secret" data-testid="secret">
      {[...value].map((ch, i) => (
        <span key={i} className={/\d/.test(ch) ? 'c-digit' : /[A-Z]/.test(ch) ? 'c-upper' : /[a-z]/.test(ch) ? 'c-lower' : 'c-symbol'}>
          {ch}
        </span>
      ))}
    </code>
  );
}

/**
 * The secret with its copy button and countdown; after 30 s it calls onExpired (the owner drops
 * the value from its state). The value is never put anywhere else: no storage, URL or history.
 */
export function SecretView({ label, value, onExpired }: { label: string; value: string; onExpired: () => void }) {
  const [left, setLeft] = useState(SECRET_SECONDS);
  const [copied, setCopied] = useState<'yes' | 'no'>();
  useEffect(() => {
    const until = Date.now() + SECRET_SECONDS * 1000;
    const hide = setTimeout(onExpired, SECRET_SECONDS * 1000);
    const tick = setInterval(() => setLeft(Math.max(0, Math.ceil((until - Date.now()) / 1000))), 1000);
    return () => {
      clearTimeout(hide);
      clearInterval(tick);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  };
  return (
    <div className="secret-box">
      <div className="muted">{label}</div>
      <SecretText value={value} />
      <div className="actions">
        <button type="button" onClick={copy}>
          Copy
        </button>
        <span className="muted" aria-live="polite">
          {copied === 'yes' ? 'Copied. ' : copied === 'no' ? 'Copy failed: select the text instead. ' : ''}Hidden in {left} s.
        </span>
      </div>
      <p className="hint">Digits are blue, capitals bold, symbols orange: 0 (zero) and O, 1 and l and I look different in this font.</p>
    </div>
  );
}

/** `OU=Workstations,OU=Managed,DC=corp,DC=example` → `Managed / Workstations` */
export const ouPath = (dn?: string) =>
  (dn ?? '')
    .split(/,(?=(?:OU|CN|DC)=)/i)
    .filter((p) => !/^DC=/i.test(p))
    .map((p) => p.replace(/^(OU|CN)=/i, ''))
    .reverse()
    .join(' / ') || '—';
