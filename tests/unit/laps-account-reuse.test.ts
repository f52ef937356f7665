import type { Directory } from '../../lib/directory';
import { resetUserPassword } from '../../lib/password-service/service-side/reset';
import { lapsAccountReusedAs } from '../../lib/setup';

// Console spec, Authentication 8: the LAPS account is never the read, write or reset account.
// (The setup route's refusal and its audit row: tests/integration/setup-laps-account.test.ts.)

const BASE = 'DC=corp,DC=example,DC=test';
const LAPS_DN = `CN=svc-laps,CN=Users,${BASE}`;
const READ_DN = `CN=svc-hdc-read,CN=Users,${BASE}`;
const GUIDS: Record<string, string> = { [LAPS_DN]: '11111111-1111-4111-8111-111111111111', [READ_DN]: '22222222-2222-4222-8222-222222222222' };
const dir = {
  async findUserDn(login: string) {
    const bare = login.toLowerCase().split('\\').pop()!;
    if (bare === 'svc-laps' || bare === 'svc-laps@corp.example.test') return LAPS_DN;
    if (bare === 'svc-hdc-read' || bare === 'svc-hdc-read@corp.example.test') return READ_DN;
    return undefined;
  },
  async principalFacts(dn: string) {
    return GUIDS[dn] ? { dn, guid: GUIDS[dn].toUpperCase() } : undefined;
  },
} as unknown as Directory;

describe('setup: the LAPS account as read or write account', () => {
  it.each([
    ['the same UPN', 'svc-laps@corp.example.test', 'read'],
    ['DOMAIN\\name for the LAPS UPN', 'CORP\\svc-laps', 'read'],
    ['its DN', LAPS_DN, 'read'],
    ['the same UPN in other case', 'SVC-LAPS@corp.example.test', 'read'],
  ])('refuses %s as the read account', async (_n, read, expected) => {
    expect(await lapsAccountReusedAs(dir, 'svc-laps@corp.example.test', { read, write: 'svc-hdc-write@corp.example.test' })).toBe(expected);
  });
  it('refuses it as the write account', async () => {
    expect(await lapsAccountReusedAs(dir, 'svc-laps@corp.example.test', { read: 'svc-hdc-read@corp.example.test', write: 'corp\\SVC-LAPS' })).toBe('write');
  });
  it('accepts distinct accounts, and no LAPS account at all', async () => {
    expect(await lapsAccountReusedAs(dir, 'svc-laps@corp.example.test', { read: 'svc-hdc-read@corp.example.test', write: 'svc-hdc-write@corp.example.test' })).toBeUndefined();
    expect(await lapsAccountReusedAs(dir, undefined, { read: 'svc-laps@corp.example.test', write: 'x' })).toBeUndefined();
  });
});

describe('password service: the LAPS account as reset account', () => {
  it('refuses the reset before touching the directory (answers reset_not_configured)', async () => {
    const ctx = {
      config: { PasswordService: { LapsIdentity: { Upn: 'svc-laps@corp.example.test' } } },
      settings: async () => ({ domain: 'corp.example.test' }),
      trusted: async () => true,
      credentials: async () => ({ user: 'SVC-LAPS@corp.example.test', password: 'irrelevant' }),
      directory: () => {
        throw new Error('the directory must not be reached');
      },
    };
    const r = await resetUserPassword(
      { op: 'users.password.reset', userGuid: '33333333-3333-4333-8333-333333333333', expectedDn: `CN=x,${BASE}`, vipAllowed: false, mustChange: true, unlock: false, operator: { guid: '44444444-4444-4444-8444-444444444444', name: 'op' }, correlationId: 'c' } as any,
      ctx as any,
    );
    expect(r).toEqual({ ok: false, code: 'reset_not_configured' });
  });
});
