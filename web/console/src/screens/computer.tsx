import { useState } from 'react';
import { get, post } from '../api';
import { Link, Loaded, Modal, SecretView, ouPath, useAction, useLoaded, useStepUp, when } from '../ui';
import { LapsExpiry, lapsKindText, type Computer } from './computers';
import { RecoveryKeys } from './recovery-keys';
import { TicketConfirmForm } from './ticket-confirm';

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
  const [ticket, setTicket] = useState('');
  const [confirm, setConfirm] = useState(false);
  const [shown, setShown] = useState<Reveal>();
  const [hidden, setHidden] = useState(false);
  const [expired, setExpired] = useState(false);
  const { withStepUp } = useStepUp();
  const a = useAction();
  const close = () => {
    setShown(undefined);
    onClose();
  };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const path = `/api/computers/${encodeURIComponent(computer.id)}/laps${mode === 'expire' ? '/expire' : ''}`;
    const r = await a.run(() => withStepUp(() => post<Reveal & { expired?: true }>(path, { confirm, ticket: ticket.trim() })));
    if (!r) return;
    if (mode === 'expire') setExpired(true);
    else {
      setHidden(false);
      setShown(r);
    }
  };
  const title = mode === 'reveal' ? `Local administrator password of ${computer.name}` : `Expire the password of ${computer.name}`;
  const closeButton = (
    <div className="actions">
      <button type="button" className="secondary" onClick={close}>
        Close
      </button>
    </div>
  );
  return (
    <Modal title={title} onClose={close}>
      {shown ? (
        <>
          <SecretView
            label={`Account ${shown.account} (${shown.source === 'legacy' ? 'legacy LAPS' : 'Windows LAPS'}), set ${when(shown.updatedUtc)}, expires ${when(shown.expiresUtc)}`}
            value={shown.password}
            onExpired={() => {
              setShown(undefined);
              setHidden(true);
            }}
          />
          {closeButton}
        </>
      ) : hidden ? (
        <>
          <p role="status">The password was hidden after 30 seconds. Reveal it again if you still need it (each reveal is audited and counted).</p>
          {closeButton}
        </>
      ) : expired ? (
        <>
          <p role="status">The password expires now: the computer sets a new one at its next policy cycle.</p>
          {closeButton}
        </>
      ) : (
        <TicketConfirmForm
          ticket={ticket}
          setTicket={setTicket}
          confirm={confirm}
          setConfirm={setConfirm}
          confirmText={mode === 'reveal' ? 'I need this password for the ticket above; the reveal is audited.' : 'Expire the password now; the computer will set a new one.'}
          submitText={mode === 'reveal' ? 'Reveal' : 'Expire'}
          action={a}
          onSubmit={submit}
          onCancel={close}
        />
      )}
    </Modal>
  );
}
