import { z } from 'zod';
import { moveBodySchema, renameBodySchema } from '../../lib/actions/user-management';
import { mappingInput } from '../../lib/auth/access-settings';
import { createRequestSchema } from '../../lib/approvals/requests';
import { channelInputSchema as fleetChannelInput } from '../../lib/channels';
import { clientCreateSchema, clientUpdateSchema } from '../../lib/fleet/clients';
import { consoleCreateSchema } from '../../lib/fleet/consoles';
import { lockBodySchema } from '../../lib/fleet/locks';
import { assignmentSchema } from '../../lib/fleet/technicians';
import { validationError } from '../../lib/http/middlewares/validate';
import { lapsRequestSchema } from '../../lib/laps/reveal';
import { channelInputSchema as consoleChannelInput } from '../../lib/notifications';
import { hasControlCharacters, multilineText, plainText } from '../../lib/plain-text';
import { brandingTitleSchema } from '../../lib/setup/branding';

// Field rules (issue 25, item 3): names, labels, tokens, tickets and header-bound values refuse
// control characters with 400 validation_failed naming the field, in the console and the fleet.

const HOSTILE = ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'a\tb', 'a\u0000b', 'a\u001bb', 'a\u007fb', 'a\u0085b', 'a\u009fb', 'a\u2028b', 'a\u2029b'];

describe('plainText and multilineText', () => {
  it('refuses C0 (CR, LF, TAB included), DEL, C1 and the Unicode line separators; keeps ordinary text', () => {
    for (const v of HOSTILE) {
      expect(hasControlCharacters(v)).toBe(true);
      expect(plainText().safeParse(v).success).toBe(false);
    }
    for (const v of ['Zürich ops', 'CORP\\op-super', 'tk_0123456789', 'München – Büro 2', '日本']) expect(plainText().safeParse(v).success).toBe(true);
  });

  it('checks the raw value, before a trim could hide a trailing CR/LF', () => {
    expect(plainText().trim().safeParse('name\r\n').success).toBe(false);
    expect(plainText().trim().parse('  name  ')).toBe('name');
  });

  it('multi-line text keeps line breaks and tabs and refuses every other control character', () => {
    expect(multilineText().safeParse('line 1\r\nline 2\n\tindented').success).toBe(true);
    for (const v of ['a\u0000b', 'a\u001bb', 'a\u007fb', 'a\u0085b', 'a\u2028b', 'a\u000bb']) expect(multilineText().safeParse(v).success).toBe(false);
  });
});

// [schema name, schema, a valid body, the field path, a body with the hostile value]
const CASES: Array<[string, z.ZodType, Record<string, unknown>, string]> = [
  ['fleet channel name', fleetChannelInput, { name: 'ops', type: 'chat', url: 'https://c.example.test/h' }, 'name'],
  ['fleet channel ntfy token', fleetChannelInput, { name: 'push', type: 'ntfy', url: 'https://n.example.test', topic: 'ops', token: 'tk_0123' }, 'token'],
  ['fleet channel secret', fleetChannelInput, { name: 'hook', type: 'webhook', url: 'https://h.example.test', secret: 'secret-0123' }, 'secret'],
  ['console channel name', consoleChannelInput, { name: 'ops', url: 'https://c.example.test/h', events: ['approval_requested'] }, 'name'],
  ['console channel token', consoleChannelInput, { name: 'push', type: 'ntfy', url: 'https://n.example.test', topic: 'ops', token: 'tk_0123', events: ['approval_requested'] }, 'token'],
  ['client name', clientCreateSchema, { code: 'acme', name: 'Acme' }, 'name'],
  ['client contact name', clientUpdateSchema, { contacts: [{ name: 'Ann' }] }, 'contacts.0.name'],
  ['client contact phone', clientUpdateSchema, { contacts: [{ name: 'Ann', phone: '+41 44' }] }, 'contacts.0.phone'],
  ['console access token', consoleCreateSchema, { clientCode: 'acme', url: 'https://c.example.test', token: 'tok-0123456789abcdef' }, 'token'],
  ['technician user name', assignmentSchema, { username: 'alice', clients: [] }, 'username'],
  ['lock message', lockBodySchema, { message: 'maintenance' }, 'message'],
  ['LAPS ticket', lapsRequestSchema, { ticket: 'INC-1' }, 'ticket'],
  ['approval request ticket', createRequestSchema, { kind: 'action', action: 'users.unlock', target: 'x', reason: 'why', ticket: 'INC-1' }, 'ticket'],
  ['move ticket', moveBodySchema, { destination: 'OU=x,DC=y', ticket: 'INC-1' }, 'ticket'],
  ['display name', renameBodySchema, { displayName: 'Ann Smith' }, 'displayName'],
  ['access mapping role', mappingInput, { role: 'helpdesk', group: 'CN=g,DC=y' }, 'role'],
  ['access mapping group', mappingInput, { role: 'helpdesk', group: 'CN=g,DC=y' }, 'group'],
];

const withValue = (body: Record<string, unknown>, path: string, v: string): Record<string, unknown> => {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let at: any = copy;
  for (const k of keys.slice(0, -1)) at = at[k];
  at[keys.at(-1)!] = v;
  return copy;
};

describe.each(CASES)('%s', (_name, schema, valid, field) => {
  it('accepts the valid body and refuses each control character with 400 validation_failed naming the field', () => {
    expect(schema.safeParse(valid).success).toBe(true);
    for (const v of HOSTILE) {
      const r = schema.safeParse(withValue(valid, field, v));
      expect(r.success).toBe(false);
      const e = validationError((r as { error: z.ZodError }).error, 'body');
      expect(e.status).toBe(400);
      expect(e.code).toBe('validation_failed');
      expect((e.details.errors as Array<{ field: string }>).map((i) => i.field)).toContain(`body.${field}`);
      // the refused value is not echoed
      expect(JSON.stringify(e.body())).not.toContain(v);
    }
  });
});

it('client notes and an approval reason are multi-line: line breaks kept, other control characters refused', () => {
  expect(clientUpdateSchema.safeParse({ notes: 'line 1\nline 2' }).success).toBe(true);
  expect(clientUpdateSchema.safeParse({ notes: 'a\u0000b' }).success).toBe(false);
  const req = { kind: 'action', action: 'users.unlock', target: 'x' };
  expect(createRequestSchema.safeParse({ ...req, reason: 'first\nsecond' }).success).toBe(true);
  expect(createRequestSchema.safeParse({ ...req, reason: 'a\u001bb' }).success).toBe(false);
});

it('the branding title keeps its stricter rule on the shared base', () => {
  expect(brandingTitleSchema.safeParse('Contoso\r\n').success).toBe(false);
  expect(brandingTitleSchema.safeParse('Contoso\u202e').success).toBe(false);
});
