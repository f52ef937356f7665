import { useState } from 'react';
import { get } from '../api';
import { Link, Loaded, Modal, SecretView, ouPath, useLoaded, when } from '../ui';
import { LapsExpiry, lapsKindText, type Computer } from './computers';
import { RecoveryKeys } from './recovery-keys';
import { useTicketedReveal } from './ticket-confirm';

// A computer: its facts, the reveal or expiry of its LAPS password, and its BitLocker recovery
// keys (issue 33), when the rights allow.

export function ComputerPage({ id }: { id: string }) {
  const { data, error, reload } = useLoaded(id, (x) => get<Computer>(`/api/computers/${encodeURIComponent(x)}`));
  const [dialog, setDialog] = useState<'reveal' | 'expire'>();
  return (
    <section aria-labelledby="computer-title">
      <p>
        <Link to="/computers">← Computers</Link>
      </p>
      <Loaded data={data} error={error} onRetry={reload}>
        {(c) => (
          <>
            <h1 id="computer-title">{c.name}</h1>
            <dl className="facts">
              <dt>Class</dt>
              <dd>{c.protected ? 'Protected (VIP)' : 'Standard'}</dd>
              <dt>OU</dt>
              <dd>{ouPath(c.ou)}</dd>
              <dt>DNS name</dt>
              <dd>{c.dnsName ?? '—'}</dd>
              <dt>OS</dt>
              <dd>{c.os ?? '—'}</dd>
              <dt>Last sign-in</dt>
              <dd>
                {when(c.lastSignIn)} <span className="hint">(may lag up to about 14 days)</span>
              </dd>
              <dt>Enabled</dt>
              <dd>{c.enabled ? 'yes' : 'no'}</dd>
              <dt>LAPS</dt>
              <dd>{lapsKindText(c.lapsKind)}</dd>
              <dt>LAPS expiry</dt>
              <dd data-testid="laps-expiry">
                <LapsExpiry at={c.lapsExpiry} />
              </dd>
            </dl>
            <div className="actions">
              {c.actions?.revealLaps && (
                <button type="button" onClick={() => setDialog('reveal')}>
                  Reveal local administrator password
                </button>
              )}
              {c.actions?.expireLaps && (
                <button type="button" className="secondary" onClick={() => setDialog('expire')}>
                  Expire password now
                </button>
              )}
            </div>
            {dialog && (
              <LapsDialog
                computer={c}
                mode={dialog}
                onClose={() => {
                  setDialog(undefined);
                  reload();
                }}
              />
            )}
            {c.actions?.revealBitlocker && <RecoveryKeys computer={c} />}
          </>
        )}
      </Loaded>
    </section>
  );
}

interface Reveal {
  account: string;
  password: string;
  updatedUtc: string | null;
  expiresUtc: string | null;
  source: 'windows' | 'legacy';
}

/**
 * Reveal or expire: the ticket and an explicit confirmation first, then the step-up when the API
 * asks for it. The revealed password lives only in this dialog's state: hidden after 30 s,
 * dropped when the dialog closes.
 */
function LapsDialog({ computer, mode, onClose }: { computer: Computer; mode: 'reveal' | 'expire'; onClose: () => void }) {
  const r = useTicketedReveal<Reveal>(onClose);
  const [expired, setExpired] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const answer = await r.send<Reveal & { expired?: true }>(`/api/computers/${encodeURIComponent(computer.id)}/laps${mode === 'expire' ? '/expire' : ''}`);
    if (!answer) return;
    if (mode === 'expire') setExpired(true);
    else r.show(answer);
  };
  const title = mode === 'reveal' ? `Local administrator password of ${computer.name}` : `Expire the password of ${computer.name}`;
  return (
    <Modal title={title} onClose={r.close}>
      {r.shown ? (
        <>
          <SecretView
            label={`Account ${r.shown.account} (${r.shown.source === 'legacy' ? 'legacy LAPS' : 'Windows LAPS'}), set ${when(r.shown.updatedUtc)}, expires ${when(r.shown.expiresUtc)}`}
            value={r.shown.password}
            onExpired={r.expire}
          />
          {r.closeButton}
        </>
      ) : r.hidden ? (
        <>
          <p role="status">The password was hidden after 30 seconds. Reveal it again if you still need it (each reveal is audited and counted).</p>
          {r.closeButton}
        </>
      ) : expired ? (
        <>
          <p role="status">The password expires now: the computer sets a new one at its next policy cycle.</p>
          {r.closeButton}
        </>
      ) : (
        r.form({
          confirmText: mode === 'reveal' ? 'I need this password for the ticket above; the reveal is audited.' : 'Expire the password now; the computer will set a new one.',
          submitText: mode === 'reveal' ? 'Reveal' : 'Expire',
          onSubmit: submit,
        })
      )}
    </Modal>
  );
}
