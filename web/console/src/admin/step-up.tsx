import { useState } from 'react';
import { put, type Me } from '../api';
import { Busy, ErrorText, useAction, useStepUp } from '../ui';

const MODES = {
  authenticator: 'Authenticator code (recommended)',
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
