import { useState } from 'react';
import { get } from '../api';
import { DataTable, Empty, Loaded, Modal, SecretView, useLoaded, when } from '../ui';
import type { Computer } from './computers';
import { useTicketedReveal } from './ticket-confirm';

// The "Recovery keys" panel of a computer (issue 33): its BitLocker recovery entries (key id as the
// recovery screen shows it, volume, date), never a key; each revealed once through the same steps
// as a LAPS password (ticket, confirmation, step-up), shown in groups of six digits with a read-out,
// hidden after 30 s, dropped when the dialog closes.

interface RecoveryEntry {
  keyId: string;
  keyIdPrefix: string;
  volumeGuid: string | null;
  date: string | null;
}
interface RecoveryPassword {
  keyId: string;
  volumeGuid: string | null;
  recoveryPassword: string;
  date: string | null;
}

export function RecoveryKeys({ computer }: { computer: Computer }) {
  const { data, error, reload } = useLoaded(computer.id, (id) => get<{ entries: RecoveryEntry[]; truncated: boolean }>(`/api/computers/${encodeURIComponent(id)}/bitlocker`));
  const [open, setOpen] = useState<RecoveryEntry>();
  return (
    <section aria-labelledby="recovery-keys-title" data-testid="recovery-keys">
      <h2 id="recovery-keys-title">Recovery keys</h2>
      <p className="hint">Ask the user for the key ID the BitLocker recovery screen shows: its first 8 characters are enough to find the entry.</p>
      <Loaded data={data} error={error} onRetry={reload}>
        {(d) => (
          <DataTable
            caption={`BitLocker recovery keys of ${computer.name}`}
            rows={d.entries}
            rowKey={(e) => e.keyId}
            rowTestId={(e) => `recovery-${e.keyIdPrefix}`}
            empty={<Empty>No BitLocker recovery key is stored for this computer.</Empty>}
            columns={[
              {
                header: 'Key ID',
                cell: (e) => (
                  <>
                    <strong>{e.keyIdPrefix}</strong>
                    <span className="muted">{e.keyId.slice(8)}</span>
                  </>
                ),
              },
              { header: 'Volume', cell: (e) => <span className="muted">{e.volumeGuid ?? '—'}</span> },
              { header: 'Backed up', cell: (e) => when(e.date) },
              {
                header: 'Action',
                label: '',
                cell: (e) => (
                  <button type="button" onClick={() => setOpen(e)} aria-label={`Reveal recovery key ${e.keyIdPrefix}`}>
                    Reveal
                  </button>
                ),
              },
            ]}
          />
        )}
      </Loaded>
      {open && <RecoveryKeyDialog computer={computer} entry={open} onClose={() => setOpen(undefined)} />}
    </section>
  );
}

function RecoveryKeyDialog({ computer, entry, onClose }: { computer: Computer; entry: RecoveryEntry; onClose: () => void }) {
  const r = useTicketedReveal<RecoveryPassword>(onClose);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const shown = await r.send(`/api/computers/${encodeURIComponent(computer.id)}/bitlocker/${encodeURIComponent(entry.keyId)}`);
    if (shown) r.show(shown);
  };
  return (
    <Modal title={`Recovery key ${entry.keyIdPrefix} of ${computer.name}`} onClose={r.close}>
      {r.shown ? (
        <>
          <SecretView grouped label={`Key ID ${r.shown.keyId}, backed up ${when(r.shown.date)}`} value={r.shown.recoveryPassword} onExpired={r.expire} />
          {r.closeButton}
        </>
      ) : r.hidden ? (
        <>
          <p role="status">The recovery key was hidden after 30 seconds. Reveal it again if you still need it (each reveal is audited and counted).</p>
          {r.closeButton}
        </>
      ) : (
        r.form({ confirmText: 'I need this recovery key for the ticket above; the reveal is audited.', submitText: 'Reveal', onSubmit: submit })
      )}
    </Modal>
  );
}
