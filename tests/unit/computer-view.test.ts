import { computerView, parentDn } from '../../lib/computers';

// The computer read view names the OU a computer sits in (the web app's search shows it).
test('parentDn: the container of a DN, escaped commas kept inside their RDN', () => {
  expect(parentDn('CN=WS-STD-01,OU=Workstations,OU=Managed,DC=corp,DC=example,DC=test')).toBe('OU=Workstations,OU=Managed,DC=corp,DC=example,DC=test');
  expect(parentDn('CN=Smith\\, John,OU=Users,DC=x')).toBe('OU=Users,DC=x');
  expect(parentDn('DC=x')).toBe('');
});

test('the read view carries its ou and never a password attribute', () => {
  const v = computerView(
    { dn: 'CN=PC1,OU=Branch,DC=x', guid: 'g', attributes: { cn: 'PC1', 'msLAPS-Password': '{"p":"secret"}' } } as any,
    false,
  );
  expect(v.ou).toBe('OU=Branch,DC=x');
  expect(JSON.stringify(v)).not.toContain('secret');
});

test('the read view says which LAPS manages the computer (issue 29: the list shows it)', () => {
  const at = (attributes: Record<string, string>) => computerView({ dn: 'CN=PC1,OU=Branch,DC=x', guid: 'g', attributes: { cn: 'PC1', ...attributes } } as any, false);
  expect(at({ 'msLAPS-PasswordExpirationTime': '134000000000000000' }).lapsKind).toBe('windows');
  expect(at({ 'ms-Mcs-AdmPwdExpirationTime': '134000000000000000' }).lapsKind).toBe('legacy');
  expect(at({ 'msLAPS-PasswordExpirationTime': '134000000000000000', 'ms-Mcs-AdmPwdExpirationTime': '1' }).lapsKind).toBe('windows');
  expect(at({}).lapsKind).toBeNull();
});
