import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { pebbleAvailable, startAcmeLab, type AcmeLab } from '../../../local/fleet/acme-lab';
import { startDnsMainStandin, type Standin } from '../../../local/fleet/dns-main-standin';

// The fleet plane's own certificate by DNS-01, end to end on loopback: the installer step
// (functions/fleet/install-tls.ts, acme-client) against Debian's pebble, whose validation reads
// the TXT record pebble-challtestsrv serves, written there through the dns_main stand-in API with
// the spec's least-privilege rules. Then a TLS client trusts the certificate through pebble's CA.

const ROOT = path.resolve(__dirname, '../../..');
const KEYS = { ak: 'AK-lab-7f3a9c', as: 'AS-lab-SECRET-4b81e2d9', ck: 'CK-lab-SECRET-c0ffee1234' };
const NAME = 'fleet.msp.test';
jest.setTimeout(120_000);

let lab: AcmeLab;
let standin: Standin;
let dir: string;
let instance: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
// the lab (pebble and the provider stand-in) listens on loopback: the outbound allow-list admits it
const LAB_ALLOWED = { FLEET_OUTBOUND_ALLOWED_TARGETS: '127.0.0.1/32' };
function installer(args: string[], extraEnv: Record<string, string> = LAB_ALLOWED): Promise<Run> {
  return new Promise((resolve) => {
    execFile(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'functions/fleet/install-tls.ts'), ...args], { cwd: ROOT, env: { ...process.env, FLEET_OUTBOUND_ALLOWED_TARGETS: '', NODE_EXTRA_CA_CERTS: lab.listenerCaFile, ...extraEnv }, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as any).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const base = () => ['--name', NAME, '--public-url', `https://${NAME}:8443`, '--https-port', '8443', '--tls', 'acme-dns', '--dns-provider', 'dns_main', '--acme-email', 'ops@msp.test', '--acme-directory', lab.directoryUrl, '--instance-dir', instance, '--dns-propagation-seconds', '0', '--dns-api-url', standin.url];
function credentialsFile(text: string, mode = 0o600): string {
  const f = path.join(dir, `cred-${Math.random().toString(36).slice(2)}.env`);
  fs.writeFileSync(f, text, { mode });
  fs.chmodSync(f, mode);
  return f;
}
const goodCredentials = () => credentialsFile(`# dns_main keys for ${NAME}\nDNSMAIN_AK=${KEYS.ak}\nDNSMAIN_AS=${KEYS.as}\nDNSMAIN_CK=${KEYS.ck}\n`);
const mode = (f: string) => fs.statSync(f).mode & 0o777;

beforeAll(async () => {
  if (!pebbleAvailable()) throw new Error('Debian package pebble is missing (pebble, pebble-challtestsrv): apt-get install pebble (.ci/run does)');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acme-dns-'));
  instance = path.join(dir, 'instance');
  lab = await startAcmeLab(path.join(dir, 'lab'));
  standin = await startDnsMainStandin({ port: 8357, zones: ['msp.test'], keys: KEYS, challtestsrv: lab.challtestsrv });
});
afterAll(async () => {
  await standin?.close();
  await lab?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('refusals before anything is done', () => {
  it.each([
    [['--dns-setting', `DNSMAIN_AK=${KEYS.ak}`], /DNSMAIN_AK is a secret/],
    [['--dns-setting', 'DNSMAIN_END_POINT=main-mars'], /DNSMAIN_END_POINT must be one of main-eu, main-us, main-ca, budget-eu, budget-ca, value-eu, value-ca/],
    [['--dns-provider', 'dns_other'], /--dns-provider must be dns_main/],
  ])('%j', async (extra, message) => {
    const args = extra[0] === '--dns-provider' ? base().map((a) => (a === 'dns_main' ? extra[1] : a)) : [...base(), ...extra];
    const r = await installer([...args, '--dns-credentials-file', goodCredentials()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain(KEYS.as);
    expect(fs.existsSync(instance)).toBe(false);
    expect(standin.requests).toEqual([]);
  });
  it('refuses a CA or DNS API on loopback unless the outbound allow-list admits it (issue 25, finding 2)', async () => {
    const r = await installer([...base(), '--dns-credentials-file', goodCredentials()], {});
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/--acme-directory: the outbound policy refuses that address \(loopback\)/)]);
    expect(fs.existsSync(instance)).toBe(false);
    expect(standin.requests).toEqual([]);
    // an allow-list that names the CA's port only: the stand-in's port stays refused
    const acmePort = new URL(lab.directoryUrl).port;
    const r2 = await installer([...base(), '--dns-credentials-file', goodCredentials()], { FLEET_OUTBOUND_ALLOWED_TARGETS: `127.0.0.1:${acmePort}` });
    expect([r2.code, r2.stderr]).toEqual([2, expect.stringMatching(/--dns-api-url: the outbound policy refuses that address/)]);
    expect(standin.requests).toEqual([]);
  });
  it('refuses a credentials file readable by others', async () => {
    const r = await installer([...base(), '--dns-credentials-file', credentialsFile(`DNSMAIN_AK=${KEYS.ak}\nDNSMAIN_AS=${KEYS.as}\nDNSMAIN_CK=${KEYS.ck}\n`, 0o644)]);
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/readable by others \(mode 644\)/)]);
    expect(fs.existsSync(instance)).toBe(false);
  });
  it('fails without credentials and without a terminal, naming the credentials file option', async () => {
    const r = await installer(base());
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/--dns-credentials-file/)]);
  });
  it('wrong keys: the provider refuses, no certificate, a hint to replace the kept copy', async () => {
    const r = await installer([...base(), '--dns-credentials-file', credentialsFile(`DNSMAIN_AK=${KEYS.ak}\nDNSMAIN_AS=wrong-secret\nDNSMAIN_CK=${KEYS.ck}\n`)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 400|HTTP 401/);
    expect(fs.existsSync(path.join(instance, 'tls', 'fullchain.pem'))).toBe(false);
    fs.rmSync(instance, { recursive: true, force: true }); // its kept copy holds the wrong keys
    standin.requests.length = 0;
  });
});

describe('issue, trust, keep, renew', () => {
  let first: any;
  it('issues a certificate through DNS-01 and keeps the credentials (0600) for renewals', async () => {
    const cred = goodCredentials();
    const r = await installer([...base(), '--dns-setting', 'DNSMAIN_END_POINT=main-eu', '--dns-credentials-file', cred]);
    expect(r.stderr).not.toContain(KEYS.as);
    expect(r.code).toBe(0);
    first = JSON.parse(r.stdout);
    expect(first).toMatchObject({ action: 'issued', name: NAME, credentials: 'file' });
    expect(Date.parse(first.notAfter)).toBeGreaterThan(Date.now() + 30 * 86400e3);
    // the provider saw exactly the least-privilege calls, the TXT is gone afterwards
    expect(standin.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual([
      'GET /domain/zone/fleet.msp.test 404',
      'GET /domain/zone/msp.test 200',
      'POST /domain/zone/msp.test/record 200',
      'POST /domain/zone/msp.test/refresh 200',
      expect.stringMatching(/^DELETE \/domain\/zone\/msp\.test\/record\/\d+ 200$/),
      'POST /domain/zone/msp.test/refresh 200',
    ]);
    expect(JSON.parse(standin.requests[2].body)).toMatchObject({ fieldType: 'TXT', subDomain: '_acme-challenge.fleet' });
    expect(standin.txt.size).toBe(0);
    // the application secret and consumer key sign requests; the secret itself never travels
    expect(JSON.stringify(standin.requests)).not.toContain(KEYS.as);
    const kept = path.join(instance, 'secrets', 'acme-dns.env');
    expect(mode(kept)).toBe(0o600);
    expect(mode(path.join(instance, 'secrets'))).toBe(0o700);
    expect(fs.readFileSync(kept, 'utf8')).toContain(`DNSMAIN_AS=${KEYS.as}\nDNSMAIN_CK=${KEYS.ck}\nDNSMAIN_END_POINT=main-eu\n`);
    expect(mode(path.join(instance, 'tls', 'privkey.pem'))).toBe(0o600);
    expect(mode(path.join(instance, 'secrets', 'acme-account.key'))).toBe(0o600);
    fs.rmSync(cred); // the spec's advice: delete the credentials file after install
  });

  it('serves TLS that a client trusts through pebble\'s CA (and only through it)', async () => {
    const server = https.createServer({ cert: fs.readFileSync(path.join(instance, 'tls', 'fullchain.pem')), key: fs.readFileSync(path.join(instance, 'tls', 'privkey.pem')) }, (_req, res) => res.end('fleet'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const get = (ca?: string) =>
      new Promise<{ ok: boolean; body?: string; error?: string; authorized?: boolean }>((resolve) => {
        https
          .get({ host: '127.0.0.1', port, servername: NAME, path: '/', agent: false, ...(ca ? { ca } : {}) }, (res) => {
            const authorized = (res.socket as any)?.authorized;
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ ok: true, body, authorized }));
          })
          .on('error', (e: any) => resolve({ ok: false, error: e.code }));
      });
    try {
      expect(await get(await lab.issuingRoot())).toEqual({ ok: true, body: 'fleet', authorized: true });
      expect((await get()).ok).toBe(false); // not a public CA: the system store does not trust it
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('re-run far from expiry keeps the certificate, from the kept credentials', async () => {
    standin.requests.length = 0;
    const r = await installer(base());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ action: 'kept', serial: first.serial, credentials: 'kept' });
    expect(standin.requests).toEqual([]);
  });

  it('re-run within the renewal window issues again with the kept credentials', async () => {
    // a CA reuses a valid authorization of the same account for a while (pebble does too): a new
    // account makes this renewal go through DNS-01 again, as a renewal months later does
    fs.rmSync(path.join(instance, 'secrets', 'acme-account.key'));
    standin.requests.length = 0;
    const r = await installer([...base(), '--renew-before-days', '3650']);
    expect(r.code).toBe(0);
    const renewed = JSON.parse(r.stdout);
    expect(renewed).toMatchObject({ action: 'issued', credentials: 'kept' });
    expect(renewed.serial).not.toBe(first.serial);
    expect(standin.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/record'))).toHaveLength(1);
  });
});

describe('replacing the token (issue 31): the kept copy deleted, the installer run again with new credentials', () => {
  const OLD = { ...KEYS };
  const NEW = { ak: 'AK-lab-rotated-91d2', as: 'AS-lab-SECRET-rotated-77aa01', ck: 'CK-lab-SECRET-rotated-5e5e5e' };
  const kept = () => path.join(instance, 'secrets', 'acme-dns.env');
  afterAll(() => Object.assign(KEYS, OLD));

  it('the old token revoked at the provider: a renewal from the kept copy fails and keeps it as it was', async () => {
    Object.assign(KEYS, NEW); // the stand-in now accepts the new keys only (it reads these per request)
    fs.rmSync(path.join(instance, 'secrets', 'acme-account.key'), { force: true });
    standin.requests.length = 0;
    const r = await installer([...base(), '--renew-before-days', '3650']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 401/);
    expect(r.stderr).not.toContain(OLD.as);
    expect(fs.readFileSync(kept(), 'utf8')).toContain(`DNSMAIN_AK=${OLD.ak}\n`);
  });

  it('without the kept copy and without a file or a terminal, the installer asks for --dns-credentials-file', async () => {
    fs.rmSync(kept());
    const r = await installer(base());
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/--dns-credentials-file/)]);
    expect(fs.existsSync(kept())).toBe(false);
  });

  it('a new file with wrong keys, nothing to renew: the keys are checked now (one signed read refused), nothing kept', async () => {
    standin.requests.length = 0;
    const wrong = credentialsFile(`DNSMAIN_AK=${NEW.ak}\nDNSMAIN_AS=not-the-secret\nDNSMAIN_CK=${NEW.ck}\n`);
    const r = await installer([...base(), '--dns-credentials-file', wrong]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/zone lookup for fleet\.msp\.test: HTTP 40[01]/); // the stand-in answers a bad signature 400
    expect(r.stderr).not.toContain('not-the-secret');
    expect(fs.existsSync(kept())).toBe(false);
    expect(standin.requests.map((q) => `${q.method} ${q.status}`)).toEqual([expect.stringMatching(/^GET 40[01]$/)]); // one signed read, no record written
  });

  it('with the new credentials file: issued through DNS-01 with the new keys, kept (0600) in place of the old', async () => {
    fs.rmSync(path.join(instance, 'secrets', 'acme-account.key'), { force: true });
    standin.requests.length = 0;
    const cred = credentialsFile(`DNSMAIN_AK=${NEW.ak}\nDNSMAIN_AS=${NEW.as}\nDNSMAIN_CK=${NEW.ck}\n`);
    const r = await installer([...base(), '--renew-before-days', '3650', '--dns-credentials-file', cred]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ action: 'issued', credentials: 'file' });
    expect(standin.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/record')).map((q) => q.status)).toEqual([200]);
    const text = fs.readFileSync(kept(), 'utf8');
    expect(mode(kept())).toBe(0o600);
    expect(text).toContain(`DNSMAIN_AK=${NEW.ak}\nDNSMAIN_AS=${NEW.as}\nDNSMAIN_CK=${NEW.ck}\n`);
    expect(text).not.toContain(OLD.as);
    expect(r.stderr + r.stdout).not.toContain(NEW.as);
    fs.rmSync(cred); // deleted after install, as the spec advises
    // the next renewal reads the new kept copy
    fs.rmSync(path.join(instance, 'secrets', 'acme-account.key'));
    const again = await installer([...base(), '--renew-before-days', '3650']);
    expect([again.code, JSON.parse(again.stdout).credentials]).toEqual([0, 'kept']);
  });
});
