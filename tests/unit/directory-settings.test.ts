import fs from 'node:fs';
import path from 'node:path';
import { InvalidCredentialsError } from 'ldapts';
import { CHECKS, check } from '../../lib/diagnostics/catalog';
import { dcLocatorName, discoveryDnsServers } from '../../lib/directory/discovery';
import { dcProblemOf } from '../../lib/directory/probe';
import { caCertificates, caFingerprints, caPemSchema, dcUrlSchema, upnSuffixSchema } from '../../lib/setup/connection';
import { makeTestCa } from '../support/test-ca';

const withCode = (code: string) => Object.assign(new Error(code), { code });

describe('the DC check tells what failed', () => {
  it.each([
    [withCode('ENOTFOUND'), 'name_not_resolved'],
    [withCode('ECONNREFUSED'), 'unreachable'],
    [withCode('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls_name_mismatch'],
    [withCode('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'tls_untrusted'],
    [withCode('SELF_SIGNED_CERT_IN_CHAIN'), 'tls_untrusted'],
    [withCode('CERT_HAS_EXPIRED'), 'tls_untrusted'],
    [withCode('ERR_SSL_WRONG_VERSION_NUMBER'), 'tls_failed'],
    [new Error('Connection timeout'), 'no_answer'],
    [new InvalidCredentialsError('bad'), 'bind_refused'],
  ])('%s → %s', (e, problem) => {
    expect(dcProblemOf(e)).toBe(problem);
  });
});

describe('connection settings syntax', () => {
  it.each(['ldaps://dc1.example.com:389', 'ldaps://dc1.example.com:3268', 'ldaps://dc1.example.com:3269', 'ldaps://dc1.example.com:1636'])('refuses %s (LDAPS 636 only)', (url) => {
    const r = dcUrlSchema.safeParse(url);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error!.issues)).toContain('ldaps_port_refused');
  });
  it('accepts ldaps on 636 or the default port', () => {
    expect(dcUrlSchema.safeParse('ldaps://dc1.example.com:636').success).toBe(true);
    expect(dcUrlSchema.safeParse('ldaps://dc1.example.com').success).toBe(true);
  });
  it('UPN suffixes: DNS names, lower-cased', () => {
    expect(upnSuffixSchema.parse(' Example.COM ')).toBe('example.com');
    for (const bad of ['example', 'ex ample.com', '-x.com', 'a..b', '@example.com']) expect(upnSuffixSchema.safeParse(bad).success).toBe(false);
  });
});

describe('CA PEM', () => {
  const a = makeTestCa('unit-a');
  const b = makeTestCa('unit-b');

  it('reads every certificate of a two-CA PEM (a migration) with its fingerprint and dates', () => {
    const certs = caCertificates(`${a.caPem}\n${b.caPem}`);
    expect(certs.map((c) => c.isCa)).toEqual([true, true]);
    expect(certs[0].subject).toContain('unit-a test CA');
    expect(certs[1].fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(caFingerprints(`${a.caPem}\n${b.caPem}`)).toEqual(certs.map((c) => c.fingerprint256));
  });
  it('tells a server certificate from a CA', () => {
    expect(caCertificates(a.issue('leaf').cert)[0].isCa).toBe(false);
  });
  it('refuses a PEM holding a private key', () => {
    const key = fs.readFileSync(path.join(a.dir, 'ca.key'), 'utf8');
    const r = caPemSchema.safeParse(`${a.caPem}\n${key}`);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error!.issues)).toContain('ca_contains_private_key');
  });
});

describe('DC discovery', () => {
  it('asks the DC locator name of the domain', () => {
    expect(dcLocatorName('Corp.Example.Test')).toBe('_ldap._tcp.dc._msdcs.corp.example.test');
  });
  it("asks Directory:DiscoveryDnsServer when set, otherwise the configured DCs' addresses", async () => {
    expect(await discoveryDnsServers('10.0.0.53, 10.0.0.54', ['ldaps://127.0.0.1:636'])).toEqual(['10.0.0.53', '10.0.0.54']);
    expect(await discoveryDnsServers(undefined, ['ldaps://127.0.0.1:636', 'ldaps://127.0.0.2', 'ldaps://127.0.0.1:636'])).toEqual(['127.0.0.1', '127.0.0.2']);
    expect(await discoveryDnsServers('', ['ldaps://localhost:636'])).toEqual(expect.arrayContaining(['127.0.0.1']));
  });
});

describe('diagnostics catalogue', () => {
  it('every check has a section, a severity and a remedy', () => {
    for (const [code, spec] of Object.entries(CHECKS)) {
      expect([code, spec.remedy.length > 20]).toEqual([code, true]);
      expect(check(code)).toMatchObject({ code, section: spec.section, severity: spec.severity });
    }
  });
  it("holds the spec's LAPS checks and the ones it names elsewhere", () => {
    for (const code of [
      'laps_schema_windows', 'laps_schema_legacy_only', 'laps_schema_missing', 'laps_identity_upn_missing', 'laps_identity_not_configured', 'laps_bind_failed',
      'laps_identity_ok', 'laps_service_unreachable', 'laps_read_rights_effective', 'laps_read_rights_missing', 'laps_encrypted_only',
      'laps_expire_rights_present', 'laps_expire_rights_missing', 'no_sample_computer', 'laps_needs_password_service',
      'signin_password_only', 'signin_enrolment_pending', 'trust_not_pinned',
    ]) expect(Object.keys(CHECKS)).toContain(code);
  });
  it('every code the LAPS diagnostics and the password service emit is catalogued', () => {
    const root = path.resolve(__dirname, '../..');
    const sources = ['lib/laps/diagnostics.ts', 'lib/password-service/service-side/diagnose.ts', 'lib/password-service/service-side/service.ts'].map((f) => fs.readFileSync(path.join(root, f), 'utf8')).join('\n');
    const emitted = new Set([...sources.matchAll(/'((?:laps|no_sample)_[a-z_]+)'/g)].map((m) => m[1]));
    const notChecks = new Set(['laps_operation', 'laps_timing', 'laps_no_password', 'laps_encrypted_unsupported', 'laps_not_managed', 'laps_not_configured', 'laps_unavailable']);
    for (const code of emitted) if (!notChecks.has(code)) expect([code, code in CHECKS]).toEqual([code, true]);
  });
});
