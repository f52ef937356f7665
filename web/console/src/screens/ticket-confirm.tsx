import { useState } from 'react';
import { post } from '../api';
import { Busy, ErrorText, useAction, useStepUp } from '../ui';

/** The reveal's first step (LAPS and BitLocker alike): the ticket and the explicit confirmation. */
export function TicketConfirmForm(p: {
  ticket: string;
  setTicket: (v: string) => void;
  confirm: boolean;
  setConfirm: (v: boolean) => void;
  confirmText: string;
  submitText: string;
  action: { busy: boolean; error?: unknown };
  onSubmit: (e: React.FormEvent) => void;
  onCancel: () => void;
}) {
  const missing = [!p.ticket.trim() && 'a ticket', !p.confirm && 'the confirmation'].filter(Boolean).join(' and ');
  return (
    <form onSubmit={p.onSubmit}>
      <label>
        Ticket
        <input name="ticket" required maxLength={200} value={p.ticket} onChange={(e) => p.setTicket(e.target.value)} />
      </label>
      <label className="check">
        <input type="checkbox" name="confirm" checked={p.confirm} onChange={(e) => p.setConfirm(e.target.checked)} required />
        {p.confirmText}
      </label>
      <ErrorText error={p.action.error} />
      {missing && <p className="hint">Give {missing} to go on.</p>}
      <div className="actions">
        <Busy type="submit" busy={p.action.busy} disabled={!p.confirm || !p.ticket.trim()}>
          {p.submitText}
        </Busy>
        <button type="button" className="secondary" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/**
 * A secret revealed once (a LAPS password, a BitLocker recovery key): the ticket and confirmation
 * sent with the step-up when the API asks for it, the answer kept only in the dialog's state until
 * it is hidden (after 30 s, by the SecretView) or the dialog closes.
 */
export function useTicketedReveal<T>(onClose: () => void) {
  const [ticket, setTicket] = useState('');
  const [confirm, setConfirm] = useState(false);
  const [shown, setShown] = useState<T>();
  const [hidden, setHidden] = useState(false);
  const { withStepUp } = useStepUp();
  const action = useAction();
  const close = () => {
    setShown(undefined);
    onClose();
  };
  return {
    shown,
    hidden,
    close,
    /** POST the ticket and the confirmation to `path`: the answer, or undefined when refused */
    send: <R = T,>(path: string) => action.run(() => withStepUp(() => post<R>(path, { confirm, ticket: ticket.trim() }))),
    show: (value: T) => {
      setHidden(false);
      setShown(value);
    },
    /** the SecretView's time is up: the secret leaves the state */
    expire: () => {
      setShown(undefined);
      setHidden(true);
    },
    closeButton: (
      <div className="actions">
        <button type="button" className="secondary" onClick={close}>
          Close
        </button>
      </div>
    ),
    form: (p: { confirmText: string; submitText: string; onSubmit: (e: React.FormEvent) => void }) => (
      <TicketConfirmForm ticket={ticket} setTicket={setTicket} confirm={confirm} setConfirm={setConfirm} action={action} onCancel={close} {...p} />
    ),
  };
}
