import { execFileSync } from 'node:child_process';
import { newTotpSecret, verifyTotp } from '../../lib/auth/totp';

// The authenticator library is checked against an independent implementation: Debian's oathtool.
const oathtool = (secret: string, offset = 0) =>
  execFileSync('oathtool', ['--totp', '-b', ...(offset ? [`--now=@${Math.floor(Date.now() / 1000) + offset}`] : []), secret]).toString().trim();

describe('TOTP', () => {
  it('accepts the code oathtool computes for the same secret', () => {
    const secret = newTotpSecret();
    expect(verifyTotp(secret, oathtool(secret))).toBe(true);
  });
  it('accepts one step of clock skew, refuses more', () => {
    const secret = newTotpSecret();
    expect(verifyTotp(secret, oathtool(secret, -30))).toBe(true);
    expect(verifyTotp(secret, oathtool(secret, -120))).toBe(false);
  });
  it('refuses another secret’s code and malformed codes', () => {
    const a = newTotpSecret();
    const b = newTotpSecret();
    const code = oathtool(b);
    // a 1-in-a-million chance the codes collide; compare against oathtool for a itself
    if (code !== oathtool(a)) expect(verifyTotp(a, code)).toBe(false);
    expect(verifyTotp(a, '12345')).toBe(false);
    expect(verifyTotp(a, 'abcdef')).toBe(false);
  });
});
