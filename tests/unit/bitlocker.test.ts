import type { Delegation, Role } from '../../lib/authz/rights';
import { keyIdPrefixOf, normalizeKeyId, parseRecoveryCn, recoveryEntry, recoveryFilterByKeyId } from '../../lib/bitlocker/entries';
import { assertBitlockerRight, bitlockerRightsModel, renderDelegationScript, type ModelRight } from '../../lib/delegation';
import type { InstanceSettings } from '../../lib/setup/settings';

// BitLocker recovery entries (issue 33) without a directory: their names as Windows writes them, the
// key id a user reads off the screen, and the BitLocker account's rights model of the delegation export.

describe('recovery entries', () => {
  it('reads the key id and the date from the entry name Windows writes', () => {
    expect(parseRecoveryCn('2025-04-11T09:30:00-08:00{a23dc95a-4453-4e71-ab2f-ac464cafc06c}')).toEqual({ keyId: 'A23DC95A-4453-4E71-AB2F-AC464CAFC06C', date: '2025-04-11T17:30:00.000Z' });
    expect(parseRecoveryCn('garbage{not-a-guid}')).toBeUndefined();
    expect(parseRecoveryCn('no date{A23DC95A-4453-4E71-AB2F-AC464CAFC06C}')).toEqual({ keyId: 'A23DC95A-4453-4E71-AB2F-AC464CAFC06C', date: null });
  });

  it('lists key id, its 8-character prefix, the volume GUID and the date (whenCreated when the name has none)', () => {
    const volume = Buffer.from('b12ecdf5e1985b48ab7d0084b66cea44', 'hex');
    expect(recoveryEntry('x{A23DC95A-4453-4E71-AB2F-AC464CAFC06C}', '20250310093000.0Z', volume)).toEqual({
      keyId: 'A23DC95A-4453-4E71-AB2F-AC464CAFC06C',
      keyIdPrefix: 'A23DC95A',
      volumeGuid: 'F5CD2EB1-98E1-485B-AB7D-0084B66CEA44',
      date: '2025-03-10T09:30:00.000Z',
    });
    expect(recoveryEntry('not an entry', undefined, undefined)).toBeUndefined();
  });

  it('takes a prefix of exactly 8 hexadecimal characters as typed off the screen, nothing else', () => {
    expect(keyIdPrefixOf('a23dc95a')).toBe('A23DC95A');
    expect(keyIdPrefixOf('{A23DC95A')).toBe('A23DC95A');
    for (const q of ['A23DC95', 'A23DC95A4', 'WS-STD-01', 'A23DC95G', '*', '']) expect([q, keyIdPrefixOf(q)]).toEqual([q, undefined]);
    expect(normalizeKeyId('{a23dc95a-4453-4e71-ab2f-ac464cafc06c}')).toBe('A23DC95A-4453-4E71-AB2F-AC464CAFC06C');
    expect(normalizeKeyId('A23DC95A')).toBeUndefined();
    expect(recoveryFilterByKeyId('A23DC95A-4453-4E71-AB2F-AC464CAFC06C')).toBe('(&(objectClass=msFVE-RecoveryInformation)(cn=*{A23DC95A-4453-4E71-AB2F-AC464CAFC06C}))');
  });
});

describe('the BitLocker account rights model (delegation export)', () => {
  const MANAGED = { dn: 'OU=Managed,DC=corp,DC=example,DC=test', guid: '11111111-1111-1111-1111-111111111111' };
  const BRANCH = { dn: 'OU=Branch,DC=corp,DC=example,DC=test', guid: '22222222-2222-2222-2222-222222222222' };
  const settings = { baseDn: 'DC=corp,DC=example,DC=test', managedOus: [MANAGED, BRANCH], tierOus: [], superAdministrators: [], readAccount: { user: 'svc-hdc-read@corp.example.test' }, writeAccount: { user: 'svc-hdc-write@corp.example.test' } } as unknown as InstanceSettings;
  const roles: Role[] = [
    { id: 'bl', name: 'BitLocker', permissions: ['computers.read', 'computers.bitlocker.read'] },
    { id: 'laps', name: 'LAPS', permissions: ['computers.read', 'computers.laps.read'] },
  ];
  const d = (id: string, roleId: string, scope = [MANAGED]): Delegation => ({ id, roleId, scope, assignees: [] });
  const identity = 'svc-bitlocker@corp.example.test';
  const others = ['svc-hdc-read@corp.example.test', 'svc-hdc-write@corp.example.test', 'svc-laps@corp.example.test'];

  it('grants read of the recovery objects and RPCR on msFVE-RecoveryPassword where the permission is delegated, nowhere else', () => {
    const m = bitlockerRightsModel(settings, roles, [d('d1', 'bl'), d('d2', 'laps', [BRANCH])], { identity, otherAccounts: others });
    expect(m.kind).toBe('bitlocker');
    expect(m.ous.map((o) => o.ou.dn)).toEqual([MANAGED.dn]);
    expect(m.ous[0].permissions).toEqual(['computers.bitlocker.read']);
    expect(m.ous[0].rights).toEqual([
      { right: 'RPLCLORC', inheritedObjectType: 'msFVE-RecoveryInformation', inheritance: 'CIIO' },
      { right: 'RPCR', objectType: 'msFVE-RecoveryPassword', inheritedObjectType: 'msFVE-RecoveryInformation', inheritance: 'CIIO' },
    ]);
    const script = renderDelegationScript(m, { generatedAt: '2026-01-01T00:00:00Z', refusedIdentities: others });
    expect(script).toContain('BitLocker account');
    expect(script).toContain("if ($r.objectType -eq 'msFVE-KeyPackage') { throw");
  });

  it('refuses another account, another class, msFVE-KeyPackage and any other right', () => {
    const ok: ModelRight = { right: 'RPCR', objectType: 'msFVE-RecoveryPassword', inheritedObjectType: 'msFVE-RecoveryInformation', inheritance: 'CIIO' };
    expect(() => assertBitlockerRight(ok, identity, others)).not.toThrow();
    const refused = (r: ModelRight, who = identity) => {
      try {
        assertBitlockerRight(r, who, others);
        return undefined;
      } catch (e) {
        return (e as { code: string; details?: { reason?: string } }).details?.reason ?? (e as { code: string }).code;
      }
    };
    expect(refused(ok, 'svc-laps@corp.example.test')).toBe('technical_account_reused');
    expect(refused({ ...ok, inheritedObjectType: 'computer' })).toBe('recovery_objects_only');
    expect(refused({ ...ok, objectType: 'msFVE-KeyPackage' })).toBe('key_package_never_granted');
    expect(refused({ ...ok, right: 'WP' })).toBe('attribute_not_allowed');
    expect(refused({ right: 'RPLCLORC', objectType: 'msFVE-RecoveryPassword', inheritedObjectType: 'msFVE-RecoveryInformation', inheritance: 'CIIO' })).toBe('attribute_not_allowed');
  });
});

describe("the password service's chain row of a BitLocker reveal", () => {
  it('names the operation, the computer, the key id and the operator the request claims; never a password', async () => {
    const { serviceAuditRow } = await import('../../lib/password-service/service-side/audit');
    const req = {
      op: 'bitlocker.read' as const,
      computerGuid: '3f2b1c4d-0000-4000-8000-000000000001',
      expectedDn: 'CN=WS-STD-01,OU=Workstations,OU=Managed,DC=corp,DC=example,DC=test',
      vipAllowed: false,
      keyId: 'A23DC95A-4453-4E71-AB2F-AC464CAFC06C',
      operator: { guid: '3f2b1c4d-0000-4000-8000-000000000002', name: 'op-helpdesk' },
      correlationId: 'c-1',
    };
    const row = serviceAuditRow(req, { ok: true, sealed: 'sealed-blob' });
    expect(row).toMatchObject({ event: 'bitlocker.read', outcome: 'success', target: { id: req.computerGuid, kind: 'computer' }, actor: { name: 'op-helpdesk', provider: 'link' }, details: { keyId: req.keyId, vipAllowed: false } });
    expect(JSON.stringify(row)).not.toContain('sealed-blob');
  });
});

describe('the password service reads one recovery entry (the directory is the last check)', () => {
  const CN = '2025-04-11T09:30:00-00:00{A23DC95A-4453-4E71-AB2F-AC464CAFC06C}';
  const KEY = 'A23DC95A-4453-4E71-AB2F-AC464CAFC06C';
  const PASSWORD = '291071-040095-320749-575410-081378-448558-474243-669955';
  const dirWith = (attributes: Record<string, string | undefined> | undefined) =>
    ({
      search: async () => ({ entries: attributes ? [{ dn: `CN=${CN},CN=WS-STD-01,DC=x`, guid: 'g', objectClasses: [], memberOf: [], attributes: { cn: CN, ...attributes } }] : [], incomplete: false }),
      readAttributes: async () => ({ 'msFVE-VolumeGuid': Buffer.from('b12ecdf5e1985b48ab7d0084b66cea44', 'hex') }),
    }) as never;

  it('answers the password with its key id, volume and date', async () => {
    const { readRecoveryPassword } = await import('../../lib/password-service/service-side/bitlocker');
    expect(await readRecoveryPassword(dirWith({ 'msFVE-RecoveryPassword': PASSWORD }), 'CN=WS-STD-01,DC=x', KEY.toLowerCase())).toEqual({
      keyId: KEY,
      volumeGuid: 'F5CD2EB1-98E1-485B-AB7D-0084B66CEA44',
      recoveryPassword: PASSWORD,
      date: '2025-04-11T09:30:00.000Z',
    });
  });

  it('an entry whose key the directory withholds: bitlocker_no_password; none visible: bitlocker_key_not_found; anything but 8 groups of 6 digits is not shown', async () => {
    const { readRecoveryPassword } = await import('../../lib/password-service/service-side/bitlocker');
    expect(await readRecoveryPassword(dirWith({}), 'CN=WS-STD-01,DC=x', KEY)).toBe('bitlocker_no_password');
    expect(await readRecoveryPassword(dirWith(undefined), 'CN=WS-STD-01,DC=x', KEY)).toBe('bitlocker_key_not_found');
    expect(await readRecoveryPassword(dirWith({ 'msFVE-RecoveryPassword': 'not-a-recovery-password' }), 'CN=WS-STD-01,DC=x', KEY)).toBe('bitlocker_no_password');
    // an entry of another key id below the computer (a filter the directory would not match) is not taken
    expect(await readRecoveryPassword(dirWith({ 'msFVE-RecoveryPassword': PASSWORD }), 'CN=WS-STD-01,DC=x', '00000000-0000-4000-A000-000000000000')).toBe('bitlocker_key_not_found');
  });
});
