import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ApiFailure, post, type Me } from './api';
import { say } from './words';

// Small shared pieces: the modal dialog, the step-up prompt, the once-shown secret, the router.

export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    return () => {
      if (d.open) d.close();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={wide ? 'wide' : undefined}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="dialog-head">
        <h2 id={id}>{title}</h2>
        <button type="button" className="ghost" aria-label="Close dialog" onClick={onClose}>
          ×
        </button>
      </div>
      {children}
    </dialog>
  );
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {say(error)}
    </p>
  );
}

/** Run an async action with a busy flag and its error in words. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

// ---- router: the History API, no library -------------------------------------------------
const RouteCtx = createContext<{ path: string; go: (p: string, replace?: boolean) => void }>({ path: '/', go: () => undefined });
export function RouterProvider({ children }: { children: ReactNode }) {
  const [path, setPath] = useState(location.pathname + location.search);
  useEffect(() => {
    const on = () => setPath(location.pathname + location.search);
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const go = useCallback((p: string, replace = false) => {
    if (replace) history.replaceState(null, '', p);
    else history.pushState(null, '', p);
    setPath(p);
    scrollTo(0, 0);
  }, []);
  return <RouteCtx.Provider value={{ path, go }}>{children}</RouteCtx.Provider>;
}
export const useRoute = () => useContext(RouteCtx);
export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  const { go, path } = useRoute();
  const current = path === to || (to !== '/' && path.startsWith(`${to}/`));
  return (
    <a
      href={to}
      className={className}
      aria-current={current ? 'page' : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        go(to);
      }}
    >
      {children}
    </a>
  );
}

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

export const when = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
/** `OU=Workstations,OU=Managed,DC=corp,DC=example` → `Managed / Workstations` */
export const ouPath = (dn?: string) =>
  (dn ?? '')
    .split(/,(?=(?:OU|CN|DC)=)/i)
    .filter((p) => !/^DC=/i.test(p))
    .map((p) => p.replace(/^(OU|CN)=/i, ''))
    .reverse()
    .join(' / ') || '—';
