import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keptCopyPath, parseCredentialsText, readCredentialsFile, resolveCredentials, writeKeptCopy } from '../../../lib/fleet/acme/credentials';
import { signature } from '../../../lib/fleet/acme/dns-main';
import { needsRenewal } from '../../../lib/fleet/acme/install';
import { DNSMAIN_END_POINTS, parseTlsInstallOptions } from '../../../lib/fleet/acme/options';

// The installer options of the DNS-01 certificate (spec: DNS challenge install variables).
const base = ['--name', 'fleet.msp.example', '--tls', 'acme-dns', '--dns-provider', 'dns_main', '--acme-email', 'ops@msp.example'];

describe('installer options', () => {
  it('takes the spec options, with their defaults', () => {
    const o = parseTlsInstallOptions([...base, '--https-port', '8443', '--public-url', 'https://fleet.msp.example:8443', '--dns-credentials-file', '/root/dns.env', '--teleport-local', 'auto']);
    expect(o).toMatchObject({ name: 'fleet.msp.example', httpsPort: 8443, publicUrl: 'https://fleet.msp.example:8443', credentialsFile: '/root/dns.env', renewBeforeDays: 30, acmeDirectory: 'https://acme-v02.api.letsencrypt.org/directory', teleportLocal: 'auto' });
    expect(o.endPoint).toBeUndefined(); // main-eu is applied with the credentials (decision 9)
    expect(parseTlsInstallOptions(base)).toMatchObject({ httpsPort: 443, publicUrl: 'https://fleet.msp.example' });
  });
  it.each(DNSMAIN_END_POINTS)('accepts DNSMAIN_END_POINT=%s', (v) => expect(parseTlsInstallOptions([...base, '--dns-setting', `DNSMAIN_END_POINT=${v}`]).endPoint).toBe(v));
  it.each([
    [['--dns-setting', 'DNSMAIN_END_POINT=main-asia'], /must be one of/],
    [['--dns-setting', 'DNSMAIN_AK=abc'], /DNSMAIN_AK is a secret/],
    [['--dns-setting', 'DNSMAIN_AS=abc'], /DNSMAIN_AS is a secret/],
    [['--dns-setting=DNSMAIN_CK=abc'], /DNSMAIN_CK is a secret/],
    [['--dns-setting', 'OTHER=1'], /unknown DNS setting OTHER/],
    [['--https-port', '8443', '--public-url', 'https://fleet.msp.example'], /public-url's port \(443\) differs/],
    [['--public-url', 'https://other.example'], /--public-url must be https:\/\/fleet.msp.example/],
    [['--acme-directory', 'http://ca.example/dir'], /https URL/],
    [['--dns-api-url', 'http://10.0.0.1/1.0'], /http only on loopback/],
    [['--secret', 'x'], /unknown option --secret/],
  ])('refuses %j', (extra, message) => expect(() => parseTlsInstallOptions([...base, ...extra])).toThrow(message));
  it('reads the outbound allow-list from FLEET_OUTBOUND_ALLOWED_TARGETS, and refuses a bad one', () => {
    expect(parseTlsInstallOptions(base, {}).allowedTargets).toEqual([]);
    expect(parseTlsInstallOptions(base, { FLEET_OUTBOUND_ALLOWED_TARGETS: '127.0.0.1/32, [::1]:14000' }).allowedTargets).toEqual(['127.0.0.1/32', '[::1]:14000']);
    expect(() => parseTlsInstallOptions(base, { FLEET_OUTBOUND_ALLOWED_TARGETS: 'localhost' })).toThrow(/FLEET_OUTBOUND_ALLOWED_TARGETS must list addresses/);
  });
  it('refuses another provider or TLS mode', () => {
    expect(() => parseTlsInstallOptions(base.map((a) => (a === 'dns_main' ? 'dns_cf' : a)))).toThrow(/dns_main/);
    expect(() => parseTlsInstallOptions(base.map((a) => (a === 'acme-dns' ? 'self-signed' : a)))).toThrow(/acme-dns/);
  });
});

describe('credentials', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acme-cred-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses VARIABLE=value lines without echoing values in errors', () => {
    expect(parseCredentialsText('# c\nDNSMAIN_AK=a1\nexport DNSMAIN_AS="s2"\nDNSMAIN_CK=c3\n\nDNSMAIN_END_POINT=value-ca\n', 'f')).toEqual({ DNSMAIN_AK: 'a1', DNSMAIN_AS: 's2', DNSMAIN_CK: 'c3', DNSMAIN_END_POINT: 'value-ca' });
    expect(() => parseCredentialsText('DNSMAIN_AS=has space secret', 'f')).toThrow(/^f:1: DNSMAIN_AS has characters/);
    try {
      parseCredentialsText('DNSMAIN_AS=has space secret', 'f');
    } catch (e) {
      expect((e as Error).message).not.toContain('secret');
    }
    expect(() => parseCredentialsText('PATH=/bin', 'f')).toThrow(/unknown variable PATH/);
  });
  it('refuses a file readable by group or others', () => {
    const f = path.join(dir, 'c.env');
    fs.writeFileSync(f, 'DNSMAIN_AK=a\n', { mode: 0o640 });
    fs.chmodSync(f, 0o640);
    expect(() => readCredentialsFile(f)).toThrow(/mode 640/);
    fs.chmodSync(f, 0o600);
    expect(readCredentialsFile(f)).toEqual({ DNSMAIN_AK: 'a' });
  });
  it('file, then kept copy (0600, main-eu by default), then typed', async () => {
    const f = path.join(dir, 'c.env');
    fs.writeFileSync(f, 'DNSMAIN_AK=a\nDNSMAIN_AS=s\nDNSMAIN_CK=c\n', { mode: 0o600 });
    const inst = path.join(dir, 'inst');
    const fromFile = await resolveCredentials({ instanceDir: inst, credentialsFile: f });
    expect(fromFile).toEqual({ source: 'file', credentials: { DNSMAIN_AK: 'a', DNSMAIN_AS: 's', DNSMAIN_CK: 'c', DNSMAIN_END_POINT: 'main-eu' } });
    writeKeptCopy(inst, fromFile.credentials);
    expect(fs.statSync(keptCopyPath(inst)).mode & 0o777).toBe(0o600);
    expect(await resolveCredentials({ instanceDir: inst, endPoint: 'main-ca' })).toEqual({ source: 'kept', credentials: { ...fromFile.credentials, DNSMAIN_END_POINT: 'main-ca' } });
    fs.rmSync(keptCopyPath(inst));
    const asked: string[] = [];
    const typed = await resolveCredentials({ instanceDir: inst }, async (q) => (asked.push(q), 'k'));
    expect([typed.source, asked]).toEqual(['typed', ['DNSMAIN_AK: ', 'DNSMAIN_AS: ', 'DNSMAIN_CK: ']]);
    await expect(resolveCredentials({ instanceDir: inst })).rejects.toThrow(/--dns-credentials-file/);
  });
});

describe('provider signature and renewal window', () => {
  it('signs METHOD, URL, body and timestamp with the secret and consumer key', () => {
    const s = signature({ DNSMAIN_AS: 'as', DNSMAIN_CK: 'ck' }, 'POST', 'https://x/1.0/domain/zone/z/record', '{"a":1}', 1700000000);
    expect(s).toMatch(/^\$1\$[0-9a-f]{40}$/);
    expect(s).not.toBe(signature({ DNSMAIN_AS: 'as', DNSMAIN_CK: 'ck' }, 'POST', 'https://x/1.0/domain/zone/z/record', '{"a":2}', 1700000000));
  });
  it('renews when absent or within the window', () => {
    const cert = (daysLeft: number) => ({ validTo: new Date(Date.now() + daysLeft * 86400e3).toUTCString() }) as any;
    expect(needsRenewal(undefined, 30)).toBe(true);
    expect(needsRenewal(cert(29), 30)).toBe(true);
    expect(needsRenewal(cert(31), 30)).toBe(false);
  });
});
