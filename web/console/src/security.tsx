import { useState } from 'react';
import { ApiFailure, del, get } from './api';
import { passkeyErrorText, passkeysSupported, registerPasskey } from './passkeys';
import { Busy, Empty, ErrorState, ErrorText, Loading, useAction, useConfirm, useLoaded, useStepUp } from './ui';

// My security (issue 32): the operator's passkeys: add one (step-up first, then one touch),
// see when each was added and last used, remove one. Nothing of a key is shown.

interface Passkey {
  ref: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
}
const when = (iso?: string) => (iso ? new Date(iso).toLocaleString() : 'never');

export function SecurityPage() {
  const list = useLoaded('passkeys', () => get<{ items: Passkey[]; max: number }>('/api/auth/passkeys'));
  const { withStepUp } = useStepUp();
  const confirm = useConfirm();
  const [name, setName] = useState('');
  const [said, setSaid] = useState<string>();
  const a = useAction();
  const supported = passkeysSupported();

  const add = async (e: React.FormEvent) => {
    e.preventDefault();
    setSaid(undefined);
    const label = name.trim() || 'passkey';
    const ok = await a.run(async () => {
      await withStepUp(() => registerPasskey(label));
      return true;
    });
    if (ok) {
      setName('');
      setSaid(`Passkey “${label}” added.`);
      list.reload();
    }
  };
  const remove = async (p: Passkey) => {
    if (!(await confirm({ title: 'Remove the passkey', body: <p>“{p.name}” will no longer sign you in or confirm actions.</p>, confirm: 'Remove the passkey', danger: true }))) return;
    setSaid(undefined);
    if (await a.run(async () => (await withStepUp(() => del(`/api/auth/passkeys/${encodeURIComponent(p.ref)}`)), true))) {
      setSaid(`Passkey “${p.name}” removed.`);
      list.reload();
    }
  };
  const problem = a.error && !(a.error instanceof ApiFailure) ? (passkeyErrorText(a.error) ?? 'The passkey could not be used.') : undefined;

  return (
    <section aria-labelledby="security-title">
      <h1 id="security-title">My security</h1>
      <section aria-labelledby="passkeys-title">
        <h2 id="passkeys-title">Passkeys</h2>
        <p className="hint">A passkey confirms it is you with one touch of your security key or device (PIN or fingerprint), at sign-in and for sensitive actions.</p>
        {list.loading && !list.data ? (
          <Loading />
        ) : list.error ? (
          <ErrorState error={list.error} onRetry={list.reload} />
        ) : list.data!.items.length === 0 ? (
          <Empty>No passkey yet.</Empty>
        ) : (
          <table data-testid="passkeys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Added</th>
                <th>Last used</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data!.items.map((p) => (
                <tr key={p.ref}>
                  <td>{p.name}</td>
                  <td>{when(p.createdAt)}</td>
                  <td>{when(p.lastUsedAt)}</td>
                  <td>
                    <Busy className="secondary" busy={a.busy} onClick={() => void remove(p)}>
                      Remove
                    </Busy>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {supported ? (
          <form onSubmit={add} aria-label="Add a passkey">
            <label>
              Name of the passkey
              <input name="passkey-name" maxLength={60} placeholder="e.g. laptop" value={name} onChange={(e) => setName(e.target.value)} />
            </label>
            <Busy type="submit" busy={a.busy}>
              Add a passkey
            </Busy>
          </form>
        ) : (
          <p className="notice">This browser cannot use passkeys.</p>
        )}
        <ErrorText error={a.error instanceof ApiFailure ? a.error : undefined} />
        {problem && (
          <p role="alert" className="error">
            {problem}
          </p>
        )}
        {said && <p role="status">{said}</p>}
      </section>
    </section>
  );
}
