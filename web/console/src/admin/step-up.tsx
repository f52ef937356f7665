import { useEffect, useState } from 'react';
import { get, put, type Me } from '../api';
import { Busy, ErrorText, useAction, useStepUp } from '../ui';

const MODES = {
  authenticator: 'Authenticator code or passkey (recommended)',
  passkey: 'Passkey only (each operator registers one under My security)',
  password: 'Directory password again',
  none: 'No confirmation (revealing or expiring a LAPS password still asks)',
} as const;

export function StepUpMode({ me }: { me: Me }) {
  const [mode, setMode] = useState<keyof typeof MODES>(me.stepUpMode ?? 'authenticator');
  const [saved, setSaved] = useState<keyof typeof MODES>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  return (
    <form
      aria-label="Step-up mode"
      onSubmit={async (e) => {
        e.preventDefault();
        if (await a.run(() => withStepUp(() => put('/api/settings/step-up-mode', { mode })))) setSaved(mode);
      }}
    >
      <fieldset>
        <legend>How operators confirm sensitive actions</legend>
        {(Object.keys(MODES) as Array<keyof typeof MODES>).map((m) => (
          <label key={m} className="check">
            <input type="radio" name="mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
            {MODES[m]}
          </label>
        ))}
      </fieldset>
      <ErrorText error={a.error} />
      {saved && <p role="status">Saved: {MODES[saved].toLowerCase()}.</p>}
      <Busy type="submit" busy={a.busy}>
        Save step-up mode
      </Busy>
    </form>
  );
}

/** Sign-in with a passkey alone (issue 32): an administrator's choice, default off. */
export function PasskeySignIn() {
  const [allowed, setAllowed] = useState<boolean>();
  const { withStepUp } = useStepUp();
  const a = useAction();
  useEffect(() => {
    get<{ allowed: boolean }>('/api/auth/passkey-sign-in').then((r) => setAllowed(r.allowed), () => setAllowed(false));
  }, []);
  if (allowed === undefined) return null;
  return (
    <form aria-label="Passkey sign-in" onSubmit={(e) => e.preventDefault()}>
      <label className="check">
        <input
          type="checkbox"
          checked={allowed}
          disabled={a.busy}
          onChange={async (e) => {
            const next = e.target.checked;
            if (await a.run(() => withStepUp(() => put('/api/settings/passkey-sign-in', { allowed: next })))) setAllowed(next);
          }}
        />
        Operators may sign in with a passkey alone (no password)
      </label>
      <ErrorText error={a.error} />
    </form>
  );
}
