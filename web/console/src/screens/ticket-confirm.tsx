import { Busy, ErrorText } from '../ui';

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
