import { serviceAuditRow } from '../../lib/password-service/service-side/audit';

// The password service's own chain: one row per operation with operation, outcome, target, the
// operator the request claims and the correlation id; never the (sealed) password, never
// anything of a request whose link did not verify.
describe('the password service audit row', () => {
  const read = {
    op: 'laps.read' as const,
    computerGuid: '0f2c3b4a-1111-4222-8333-444455556666',
    expectedDn: 'CN=WS-STD-01,OU=Computers,OU=Managed,DC=corp,DC=example,DC=test',
    vipAllowed: false,
    operator: { guid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', name: 'op-helpdesk' },
    correlationId: 'c-1',
  };

  it('records a successful read: operation, computer, claimed operator, correlation id, source; not the sealed answer', () => {
    const row = serviceAuditRow(read, { ok: true, source: 'windows', sealed: 'SEALED-PASSWORD-BLOB' });
    expect(row).toEqual({
      event: 'laps.read',
      outcome: 'success',
      reason: 'source:windows',
      actor: { id: read.operator.guid, name: 'op-helpdesk', provider: 'link' },
      target: { id: read.computerGuid, kind: 'computer', dn: read.expectedDn },
      correlationId: 'c-1',
      details: { vipAllowed: false },
    });
    expect(JSON.stringify(row)).not.toContain('SEALED-PASSWORD-BLOB');
  });

  it('records a refusal with its code, an internal error as error, a reset with its target user', () => {
    expect(serviceAuditRow(read, { ok: false, code: 'moved' })).toMatchObject({ outcome: 'failure', reason: 'moved' });
    expect(serviceAuditRow(read, { ok: false, code: 'laps_unavailable' }, true)).toMatchObject({ outcome: 'error', reason: 'laps_unavailable' });
    const reset = { op: 'users.password.reset' as const, userGuid: 'u-guid', expectedDn: 'CN=u', vipAllowed: true, mustChange: true, unlock: false, operator: { guid: 'g', name: 'n' }, correlationId: 'c-2' };
    expect(serviceAuditRow(reset, { ok: true, sealed: 'x' })).toMatchObject({ event: 'users.password.reset', target: { id: 'u-guid', kind: 'user' }, details: { vipAllowed: true, mustChange: true, unlock: false } });
  });

  it('records a link refusal without trusting anything of the request', () => {
    expect(serviceAuditRow(undefined, { ok: false, code: 'link_signature_invalid' })).toEqual({
      event: 'link.refused',
      outcome: 'failure',
      reason: 'link_signature_invalid',
      actor: { name: 'helpdesk-link', provider: 'link' },
    });
  });

  it('bounds what a signed request claims (long names, odd types)', () => {
    const row = serviceAuditRow({ ...read, operator: { guid: 42 as any, name: 'x'.repeat(5000) }, correlationId: 'c'.repeat(5000) }, { ok: false, code: 'not_found' });
    expect(row.actor).toEqual({ id: undefined, name: 'x'.repeat(256), provider: 'link' });
    expect(row.correlationId).toHaveLength(128);
  });
});
