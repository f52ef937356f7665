import { useEffect, useState } from 'react';
import { renderSVG } from 'uqr';
import { ApiFailure, get, post, setCsrfToken } from './api';
import { answerPasskey, answerRegistration, passkeyErrorText, passkeysSupported } from './passkeys';
import { Busy, ErrorText, useAction } from './ui';

// Sign-in: user name, password and authenticator code in one form; an operator without an
// authenticator enrols inside it (scan the key or type it, then the first code; or register a
// passkey). An operator holding a passkey touches it instead of typing a code, and when an
// administrator allows it a passkey alone signs in (issue 32). No session exists before that last step.
export function SignIn({ onSignedIn, expired, instance, why }: { onSignedIn: () => void; expired?: boolean; instance?: string; why?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [enrol, setEnrol] = useState<{ secret?: string; uri?: string; passkeyRegistrationOptions?: unknown }>();
  const [passkeyOptions, setPasskeyOptions] = useState<unknown>();
  const [alone, setAlone] = useState(false);
  // the browser's own refusal of a passkey ceremony (cancelled, timed out), in words
  const [problem, setProblem] = useState<string>();
  const a = useAction();
  const [busy, setBusy] = useState<'form' | 'access' | 'passkey'>();
  useEffect(() => {
    if (passkeysSupported()) get<{ allowed: boolean }>('/api/auth/passkey-sign-in').then((r) => setAlone(r.allowed), () => undefined);
  }, []);

  const signedIn = (r: { csrfToken: string }) => {
    setCsrfToken(r.csrfToken);
    setPassword('');
    setCode('');
    setEnrol(undefined);
    setPasskeyOptions(undefined);
    onSignedIn();
  };
  const failed = (err: unknown) => {
    if (err instanceof ApiFailure && (err.code === 'csrf_token_invalid' || err.code === 'csrf_token_missing')) setCsrfToken(undefined);
    if (err instanceof ApiFailure) a.setError(err);
    else setProblem(passkeyErrorText(err) ?? 'The passkey could not be used.');
  };
  // the passkey as the second factor, the enrolment of one, or a passkey alone: one touch each
  const withPasskey = async (how: 'second' | 'enrol' | 'alone') => {
    a.setError(undefined);
    setProblem(undefined);
    setBusy('passkey');
    try {
      if (how === 'alone') {
        const options = await post('/api/auth/passkeys/sign-in-options');
        signedIn(await post<{ csrfToken: string }>('/api/auth/passkey-login', { passkey: await answerPasskey(options) }));
      } else if (how === 'second') {
        signedIn(await post<{ csrfToken: string }>('/api/auth/login', { username, password, passkey: await answerPasskey(passkeyOptions) }));
      } else {
        signedIn(await post<{ csrfToken: string }>('/api/auth/login', { username, password, passkeyRegistration: await answerRegistration(enrol!.passkeyRegistrationOptions) }));
      }
    } catch (err) {
      failed(err);
    } finally {
      setBusy(undefined);
    }
  };

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    a.setError(undefined);
    setBusy('form');
    try {
      signedIn(await post<{ csrfToken: string }>('/api/auth/login', { username, password, ...(code.trim() ? { code: code.trim() } : {}) }));
    } catch (err) {
      if (err instanceof ApiFailure && (err.code === 'totp_enrolment_required' || err.code === 'passkey_enrolment_required')) {
        setEnrol({ secret: err.body.secret, uri: err.body.otpauthUri, passkeyRegistrationOptions: passkeysSupported() ? err.body.passkeyRegistrationOptions : undefined });
        setCode('');
        return;
      }
      if (err instanceof ApiFailure && (err.code === 'totp_required' || err.code === 'passkey_required') && err.body.passkeyOptions && passkeysSupported()) {
        setPasskeyOptions(err.body.passkeyOptions);
        if (err.code === 'passkey_required') return;
      }
      if (err instanceof ApiFailure && (err.code === 'csrf_token_invalid' || err.code === 'csrf_token_missing')) setCsrfToken(undefined);
      a.setError(err);
    } finally {
      setBusy(undefined);
    }
  };

  // behind the access platform its proxy adds its signed assertion to every request: the console
  // turns it into a session (POST /api/auth/access); anywhere else this answers a clear refusal
  const accessSignIn = async () => {
    a.setError(undefined);
    setBusy('access');
    try {
      const r = await post<{ csrfToken: string }>('/api/auth/access');
      setCsrfToken(r.csrfToken);
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiFailure && (err.code === 'csrf_token_invalid' || err.code === 'csrf_token_missing')) setCsrfToken(undefined);
      a.setError(err);
    } finally {
      setBusy(undefined);
    }
  };

  const Wrap = expired ? 'div' : 'main'; // over a page (session ended): not a second main landmark
  return (
    <Wrap className="signin" id={expired ? undefined : 'main'}>
      <form onSubmit={submit} className="card" aria-labelledby="signin-title">
        <h1 id="signin-title">{enrol ? 'Set up your authenticator' : 'Sign in'}</h1>
        <p className="product" data-testid="product">
          Helpdesk console
        </p>
        {instance && (
          <p className="instance" data-testid="signin-instance">
            {instance}
          </p>
        )}
        {expired && !enrol && <p className="notice">Your session ended. Sign in again: what you were doing stays on the page.</p>}
        {why && !expired && !enrol && <p className="notice">{why}</p>}
        {!enrol ? (
          <>
            <label>
              User name
              <input name="username" autoComplete="username" required autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
            <label>
              Authenticator code
              <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="\d{6}" title="6 digits" maxLength={6} value={code} onChange={(e) => setCode(e.target.value)} aria-describedby="code-hint" />
            </label>
            <p id="code-hint" className="hint">
              Leave the code empty if you have not set up an authenticator app yet.
            </p>
          </>
        ) : !enrol.secret ? (
          <p>Register a passkey to finish signing in: touch or unlock your security key or device.</p>
        ) : (
          <>
            <p>Scan this code with your authenticator app, or type the key, then enter the first code it shows.</p>
            <img className="qr" alt="QR code of your authenticator key" src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(enrol.uri!, { border: 2 }))}`} />
            <p>
              Key: <code className="secret key" data-testid="enrol-secret">{enrol.secret.replace(/(.{4})/g, '$1 ').trim()}</code>
            </p>
            <label>
              First code
              <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="\d{6}" title="6 digits" maxLength={6} required autoFocus value={code} onChange={(e) => setCode(e.target.value)} />
            </label>
          </>
        )}
        <ErrorText error={a.error} />
        {problem && (
          <p role="alert" className="error">
            {problem}
          </p>
        )}
        <p role="status" className="muted">
          {busy ? 'Signing in…' : ''}
        </p>
        {passkeyOptions !== undefined && !enrol && (
          <p className="notice">Touch your passkey to finish signing in{code ? '' : ', or type the code from your authenticator app'}.</p>
        )}
        <div className="actions">
          {passkeyOptions !== undefined && !enrol && (
            <Busy type="button" busy={busy === 'passkey'} disabled={!!busy} onClick={() => void withPasskey('second')}>
              Use your passkey
            </Busy>
          )}
          {enrol?.passkeyRegistrationOptions !== undefined && (
            <Busy type="button" className={enrol.secret ? 'secondary' : undefined} busy={busy === 'passkey'} disabled={!!busy} onClick={() => void withPasskey('enrol')}>
              {enrol.secret ? 'Register a passkey instead' : 'Register a passkey'}
            </Busy>
          )}
          {(!enrol || enrol.secret) && (
            <Busy type="submit" busy={busy === 'form'} disabled={!!busy}>
              {enrol ? 'Finish and sign in' : 'Sign in'}
            </Busy>
          )}
          {enrol && (
            <button type="button" className="secondary" onClick={() => setEnrol(undefined)}>
              Back
            </button>
          )}
          {!enrol && (
            <Busy className="secondary" busy={busy === 'access'} disabled={!!busy} onClick={() => void accessSignIn()}>
              Use the access platform
            </Busy>
          )}
          {!enrol && alone && passkeyOptions === undefined && (
            <Busy className="secondary" busy={busy === 'passkey'} disabled={!!busy} onClick={() => void withPasskey('alone')}>
              Sign in with a passkey
            </Busy>
          )}
        </div>
      </form>
    </Wrap>
  );
}
