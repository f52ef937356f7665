import * as OTPAuth from 'otpauth';

// RFC 6238 TOTP (SHA-1, 6 digits, 30 s) through the maintained `otpauth` library.
export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

export function totpUri(secret: string, account: string, issuer = 'hdc'): string {
  return new OTPAuth.TOTP({ issuer, label: account, secret: OTPAuth.Secret.fromBase32(secret) }).toString();
}

/** True when `code` is valid for `secret` within one step either side. */
export function verifyTotp(secret: string, code: string): boolean {
  if (!/^\d{6}$/.test(code)) return false;
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
  return totp.validate({ token: code, window: 1 }) !== null;
}
