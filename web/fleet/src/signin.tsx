import { useState } from 'react';
import { post, setLocalToken } from './api';
import { Busy, ErrorText, useAction } from '../../shared/ui';

// The local administrator's sign-in (break-glass). Everyone else arrives through the access
// platform, whose JWT the platform adds to every request: for them this page only shows when the
// platform refused them (403 signin_refused) or they opened the dashboard without it.
export function SignIn({ onSignedIn, refused }: { onSignedIn: () => void; refused?: unknown }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const a = useAction();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await a.run(() => post<{ token: string }>('/api/auth/login', { username: username.trim(), password }));
    if (r?.token) {
      setLocalToken(r.token);
      setPassword('');
      onSignedIn();
    }
  };
  return (
    <main className="signin" id="main">
      <div className="card">
        <h1>Fleet dashboard</h1>
        {refused ? <ErrorText error={refused} /> : null}
        <p className="hint">Technicians and administrators: open the dashboard through the access platform, which signs you in. The form below is the local administrator's break-glass sign-in.</p>
        <form onSubmit={submit}>
          <label>
            User name
            <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
          </label>
          <label>
            Password
            <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <ErrorText error={a.error} />
          <p role="status" className="muted">
            {a.busy ? 'Signing in…' : ''}
          </p>
          <div className="actions">
            <Busy type="submit" busy={a.busy}>
              Sign in
            </Busy>
          </div>
        </form>
      </div>
    </main>
  );
}
