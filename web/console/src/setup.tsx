import { useState } from 'react';
import { post } from './api';
import { Busy, ErrorText, useAction } from './ui';

// First run: the setup wizard (GET/POST /api/setup) with the one-time token the admin CLI prints
// (`npm run admin -- setup-token`). Lists are one entry per line.
const lines = (s: string) => s.split('\n').map((x) => x.trim()).filter(Boolean);

export function SetupPage({ onDone }: { onDone: () => void }) {
  const [f, setF] = useState<Record<string, string>>({});
  const [step, setStep] = useState(1);
  const a = useAction();
  const field = (name: string, label: string, opts: { type?: string; area?: boolean; required?: boolean; hint?: string } = {}) => (
    <label key={name}>
      {label}
      {opts.area ? (
        <textarea name={name} required={opts.required !== false} value={f[name] ?? ''} onChange={(e) => setF({ ...f, [name]: e.target.value })} />
      ) : (
        <input name={name} type={opts.type ?? 'text'} required={opts.required !== false} value={f[name] ?? ''} onChange={(e) => setF({ ...f, [name]: e.target.value })} />
      )}
      {opts.hint && <span className="hint">{opts.hint}</span>}
    </label>
  );
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (step < 3) return setStep(step + 1);
    const body = {
      domain: f.domain?.trim(),
      dcs: lines(f.dcs ?? '').map((l) => {
        const [name, url] = l.split(/\s+/);
        return { name, url };
      }),
      caPem: f.caPem,
      readAccount: { user: f.readUser?.trim(), password: f.readPassword },
      writeAccount: { user: f.writeUser?.trim(), password: f.writePassword },
      ...(f.lapsUpn?.trim() ? { lapsIdentityUpn: f.lapsUpn.trim() } : {}),
      managedOus: lines(f.managedOus ?? ''),
      tierOus: lines(f.tierOus ?? ''),
      protectedGroups: lines(f.protectedGroups ?? ''),
      superAdministrator: f.superAdministrator?.trim(),
    };
    if (await a.run(() => post('/api/setup', body, { 'x-setup-token': f.token?.trim() ?? '' }))) {
      setF({});
      onDone();
    }
  };
  return (
    <main className="signin" id="main">
      <form onSubmit={submit} className="card wide" aria-labelledby="setup-title">
        <h1 id="setup-title">Set up this console ({step}/3)</h1>
        {step === 1 && (
          <>
            {field('token', 'Setup token', { type: 'password', hint: 'Printed by: npm run admin -- setup-token' })}
            {field('domain', 'Domain (DNS name)')}
            {field('dcs', 'Domain controllers, one per line: name ldaps://host:636', { area: true })}
            {field('caPem', 'Certificate authority (PEM)', { area: true })}
          </>
        )}
        {step === 2 && (
          <>
            {field('readUser', 'Read account (UPN or DN)')}
            {field('readPassword', 'Read account password', { type: 'password' })}
            {field('writeUser', 'Write account (UPN or DN)')}
            {field('writePassword', 'Write account password', { type: 'password' })}
            {field('lapsUpn', 'LAPS account UPN (display only; its password goes to the password service)', { required: false })}
          </>
        )}
        {step === 3 && (
          <>
            {field('managedOus', 'Managed OUs, one DN per line', { area: true })}
            {field('tierOus', 'Tier 0/1 OUs, one DN per line', { area: true, required: false })}
            {field('protectedGroups', 'Protected (VIP) groups, one DN per line', { area: true, required: false })}
            {field('superAdministrator', 'First Super administrator (login)')}
          </>
        )}
        <ErrorText error={a.error} />
        <div className="actions">
          {step > 1 && (
            <button type="button" className="secondary" onClick={() => setStep(step - 1)}>
              Back
            </button>
          )}
          <Busy type="submit" busy={a.busy}>
            {step < 3 ? 'Next' : 'Check and save'}
          </Busy>
        </div>
      </form>
    </main>
  );
}
