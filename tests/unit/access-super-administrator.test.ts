import { superAdministratorMayUsePlatform } from '../../lib/auth/access-signin';
import { loadConfig } from '../../lib/config';

// Issue 25, finding 8: a platform identity whose claims name a Super administrator's account signs
// in as that Super administrator (the spec's default, kept); Authentication:Access:
// SuperAdministratorsRequireRoleMapping lets an administrator require a mapped platform role.

const SUPER = '3f2c1a9e-0b7d-4c4e-9a51-6d2f8e7b1c00';
const group = { dn: 'CN=GG-Admins,DC=corp', guid: 'g', sid: 'S-1-5-21-1-2-3-1100' };
const settings = { superAdministrators: [SUPER.toUpperCase()], accessMappings: [{ role: 'hdc-super', group }, { trait: 'team', value: 'ops', group }] };
const claims = (roles: string[], traits: Record<string, string[]> = { windows_logins: ['op-super'] }) => ({ username: 'ap-nobody', roles, traits });
const on = { SuperAdministratorsRequireRoleMapping: true };
const off = { SuperAdministratorsRequireRoleMapping: false };

it('is off by default: the configuration key parses, default false', () => {
  expect(loadConfig({}).config.Authentication.Access.SuperAdministratorsRequireRoleMapping).toBe(false);
  expect(loadConfig({ Authentication__Access__SuperAdministratorsRequireRoleMapping: 'true' }).config.Authentication.Access.SuperAdministratorsRequireRoleMapping).toBe(true);
});

it('off: the claims alone sign a Super administrator in', () => {
  expect(superAdministratorMayUsePlatform(settings, off, SUPER, claims([]))).toBe(true);
});

it('on: a Super administrator needs a platform role an access mapping names (a trait mapping or an unmapped role is not enough)', () => {
  expect(superAdministratorMayUsePlatform(settings, on, SUPER, claims([]))).toBe(false);
  expect(superAdministratorMayUsePlatform(settings, on, SUPER, claims(['hdc-other']))).toBe(false);
  expect(superAdministratorMayUsePlatform(settings, on, SUPER, claims([], { windows_logins: ['op-super'], team: ['ops'] }))).toBe(false);
  expect(superAdministratorMayUsePlatform(settings, on, SUPER, claims(['hdc-super']))).toBe(true);
  expect(superAdministratorMayUsePlatform({ superAdministrators: [SUPER] }, on, SUPER, claims(['hdc-super']))).toBe(false);
});

it('on: other operators are not concerned', () => {
  expect(superAdministratorMayUsePlatform(settings, on, '00000000-0000-4000-8000-000000000001', claims([]))).toBe(true);
});
