import { useState } from 'react';
import { levelOf, post, put, type Me } from '../api';
import { FormDialog, useAction } from '../../../shared/ui';
import type { Client, Console } from './consoles';

// Register or edit a client; add or edit a console (URL and CA: administrators; the token is
// write-only: empty keeps it).

export function ClientDialog({ client, onClose, onSaved }: { client?: Client; onClose: () => void; onSaved: () => void }) {
  const [code, setCode] = useState(client?.code ?? '');
  const [name, setName] = useState(client?.name ?? '');
  const [notes, setNotes] = useState(client?.notes ?? '');
  const [contacts, setContacts] = useState(client ? client.contacts.map((c) => [c.name, c.role, c.email, c.phone].map((x) => x ?? '').join('; ')).join('\n') : '');
  const a = useAction();
  const submit = async () => {
    const list = contacts
      .split('\n')
      .map((l) => l.split(';').map((x) => x.trim()))
      .filter((p) => p[0])
      .map(([n, role, email, phone]) => ({ name: n, ...(role ? { role } : {}), ...(email ? { email } : {}), ...(phone ? { phone } : {}) }));
    const body = { name: name.trim(), notes, contacts: list };
    const r = await a.run(() => (client ? put(`/api/clients/${client.code}`, body) : post('/api/clients', { code: code.trim(), ...body })));
    if (r !== undefined) onSaved();
  };
  return (
    <FormDialog title={client ? `Edit ${client.name}` : 'Register a client'} onClose={onClose} onSubmit={submit} busy={a.busy} error={a.error} submit="Save client">
      {!client && (
        <label>
          Code
          <input name="code" required pattern="[a-z0-9][a-z0-9\-]{0,62}" value={code} onChange={(e) => setCode(e.target.value)} />
          <span className="hint">Lowercase letters, digits and hyphens; the label client_code of its desktops.</span>
        </label>
      )}
      <label>
        Name
        <input name="name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Notes
        <textarea name="notes" maxLength={4000} value={notes} onChange={(e) => setNotes(e.target.value)} />
      </label>
      <label>
        Contacts
        <textarea name="contacts" value={contacts} onChange={(e) => setContacts(e.target.value)} />
        <span className="hint">One a line: name; role; e-mail; phone.</span>
      </label>
    </FormDialog>
  );
}

export function ConsoleDialog({ me, clients, console: current, onClose, onSaved }: { me: Me; clients: Client[]; console?: Console; onClose: () => void; onSaved: () => void }) {
  const operable = clients.filter((c) => levelOf(me, c.code) === 'operator');
  const [clientCode, setClientCode] = useState(current?.clientCode ?? operable[0]?.code ?? '');
  const [url, setUrl] = useState(current?.url ?? '');
  const [ca, setCa] = useState('');
  const [token, setToken] = useState('');
  const a = useAction();
  const submit = async () => {
    const r = await a.run(() => {
      if (!current) return post('/api/consoles', { clientCode, url: url.trim(), token, ...(ca.trim() ? { ca } : {}) });
      const body: Record<string, unknown> = {};
      if (clientCode !== current.clientCode) body.clientCode = clientCode;
      if (token) body.token = token;
      if (me.admin && url.trim() !== current.url) body.url = url.trim();
      if (me.admin && ca.trim()) body.ca = ca;
      return put(`/api/consoles/${current.id}`, body);
    });
    if (r !== undefined) onSaved();
  };
  return (
    <FormDialog title={current ? 'Edit console' : 'Add a console'} onClose={onClose} onSubmit={submit} busy={a.busy} error={a.error} submit="Save console">
      <label>
        Client
        <select name="clientCode" value={clientCode} onChange={(e) => setClientCode(e.target.value)}>
          {operable.map((c) => (
            <option key={c.code} value={c.code}>
              {c.name} ({c.code})
            </option>
          ))}
        </select>
      </label>
      {me.admin && (
        <>
          <label>
            URL
            <input name="url" type="url" required pattern="https://.*" value={url} onChange={(e) => setUrl(e.target.value)} />
          </label>
          <label>
            Extra CA (PEM, optional)
            <textarea name="ca" value={ca} onChange={(e) => setCa(e.target.value)} placeholder={current?.ca ? 'A CA is set: paste a new one to replace it' : ''} />
          </label>
        </>
      )}
      <label>
        Access token {current ? '(empty keeps the saved one)' : ''}
        <input name="token" type="password" autoComplete="off" required={!current} value={token} onChange={(e) => setToken(e.target.value)} />
      </label>
    </FormDialog>
  );
}
