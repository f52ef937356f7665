import { useState } from 'react';
import { post } from '../api';
import { FormDialog, useAction } from '../../../shared/ui';
import { kindWords, type Alert } from './alert-model';

// Acting on alerts (issue 29): acknowledge one (why is required), silence a rule, client or
// console until a chosen time.

export function AcknowledgeDialog({ alert, onClose, onDone }: { alert: Alert; onClose: () => void; onDone: () => void }) {
  const [comment, setComment] = useState('');
  const a = useAction();
  return (
    <FormDialog
      title={`Acknowledge: ${alert.subject}`}
      onClose={onClose}
      onSubmit={async () => {
        if (await a.run(() => post(`/api/alerts/${encodeURIComponent(alert.key)}/acknowledge`, { comment: comment.trim() }))) onDone();
      }}
      busy={a.busy}
      error={a.error}
      submit="Acknowledge"
    >
      <p>The alert stays active and on this page, marked as yours; its end is not notified. It is audited with your comment.</p>
      <label>
        Why (what is being done)
        <input name="ack-comment" required maxLength={500} value={comment} onChange={(e) => setComment(e.target.value)} />
      </label>
    </FormDialog>
  );
}

const DURATIONS: Array<[string, string, number]> = [
  ['1h', '1 hour', 1],
  ['4h', '4 hours', 4],
  ['12h', '12 hours', 12],
  ['24h', '24 hours', 24],
  ['72h', '3 days', 72],
  ['168h', '7 days', 168],
  ['until', 'Until a date and time', 0],
];
const localInput = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export interface SilenceTarget {
  kind?: string;
  clientCode?: string;
  consoleId?: string;
  /** what the dialog says it silences */
  label: string;
}

export function SilenceDialog({ target, onClose, onDone }: { target: SilenceTarget; onClose: () => void; onDone: () => void }) {
  const [duration, setDuration] = useState('4h');
  const [until, setUntil] = useState(localInput(new Date(Date.now() + 86_400_000)));
  const [comment, setComment] = useState('');
  const a = useAction();
  const endsAt = () => (duration === 'until' ? new Date(until).toISOString() : new Date(Date.now() + DURATIONS.find((d) => d[0] === duration)![2] * 3600_000).toISOString());
  return (
    <FormDialog
      title={`Silence: ${target.label}`}
      onClose={onClose}
      onSubmit={async () => {
        const body = { ...(target.kind ? { kind: target.kind } : {}), ...(target.clientCode ? { clientCode: target.clientCode } : {}), ...(target.consoleId ? { consoleId: target.consoleId } : {}), endsAt: endsAt(), comment: comment.trim() };
        if (await a.run(() => post('/api/alerts/silences', body))) onDone();
      }}
      busy={a.busy}
      error={a.error}
      submit="Silence"
    >
      <p>
        Alerts {target.kind ? `of the rule “${kindWords(target.kind)}”` : 'of every rule'}
        {target.clientCode ? ` for ${target.clientCode}` : ''}
        {target.consoleId ? ' on this console' : ''} stay on this page, marked silenced, and send no notification until the silence ends. One that fires meanwhile is sent when it ends, if it still holds.
      </p>
      <label>
        For
        <select name="silence-duration" value={duration} onChange={(e) => setDuration(e.target.value)}>
          {DURATIONS.map(([k, words]) => (
            <option key={k} value={k}>
              {words}
            </option>
          ))}
        </select>
      </label>
      {duration === 'until' && (
        <label>
          Ends at
          <input type="datetime-local" name="silence-until" required value={until} onChange={(e) => setUntil(e.target.value)} />
          <span className="hint">At most 30 days ahead.</span>
        </label>
      )}
      <label>
        Why
        <input name="silence-comment" required maxLength={500} value={comment} onChange={(e) => setComment(e.target.value)} />
      </label>
    </FormDialog>
  );
}
