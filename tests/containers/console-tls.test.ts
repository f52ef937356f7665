import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { pebbleAvailable, startAcmeLab, type AcmeLab } from '../../local/fleet/acme-lab';
import { startDnsMainStandin, type Standin } from '../../local/fleet/dns-main-standin';
import { ensureDirectory } from '../../local/stack';
import { describeWithPodman, ensureImages, mode, podman, removeContainers, running, SCRIPTS, sh, shAsync, TAG_A } from './support';

// The console's own certificate by DNS-01 (issue 31, item 4): install.sh --tls acme-dns runs the
// fleet plane's install-tls in a one-off container of the console image, against Debian's pebble and
// the dns_main stand-in; the console serves it on --port; renew-tls.sh renews it; the DNS
// credentials (kept by install-tls in secrets/acme-dns.env, root's) and the certificate are in the
// backup archive and come back with a restore.

const NAME = 'hdctls';
const HOST = 'hdc.acme.test';
const PORT = 18643;
const KEYS = { ak: 'AK-ctc-1a2b3c', as: 'AS-ctc-SECRET-9d8e7f', ck: 'CK-ctc-SECRET-0ff1ce' };
// ports of their own: the fleet instance test's lab may still be closing its sockets
const LAB_PORTS = { acme: 14410, management: 15410, dns: 8463, challtestManagement: 8465 };

describeWithPodman("the console's own certificate by DNS-01", () => {
  const seed = ensureDirectory();
  const t = seed.technicalAccounts;
  let lab: AcmeLab;
  let standin: Standin;
  let dir: string;
  let inputs: string;
  let root: string;
  // the DNS API stand-in answers in this process: the scripts run beside it, never blocking it
  const install = (...extra: string[]) =>
    shAsync('bash', [
      path.join(SCRIPTS, 'install.sh'), '--instance', dir, '--name', NAME, '--version', TAG_A, '--port', String(PORT), '--network', 'host', '--bind', '127.0.0.1',
      '--domain', seed.domain, '--read-upn', t.read.upn, '--write-upn', t.write.upn,
      '--laps-upn', t.laps.upn, '--laps-password-file', path.join(inputs, 'laps'), '--reset-upn', t.reset.upn, '--reset-password-file', path.join(inputs, 'reset'),
      '--public-url', `https://${HOST}:${PORT}`, '--acme-email', 'ops@acme.test', '--acme-directory', lab.directoryUrl,
      '--dns-api-url', standin.url, '--dns-propagation-seconds', '0', '--extra-ca-file', lab.listenerCaFile, '--outbound-allowed-targets', '127.0.0.1/32',
      ...extra,
    ]);
  /** The certificate the console serves for HOST, trusted through pebble's root only. */
  const served = () =>
    new Promise<{ status: number; cert: tls.PeerCertificate }>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: PORT, servername: HOST, path: '/health/live', ca: root, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, cert: (res.socket as tls.TLSSocket).getPeerCertificate() }));
      });
      req.on('error', reject);
      req.end();
    });

  beforeAll(async () => {
    if (!pebbleAvailable()) throw new Error('Debian package pebble is missing (pebble, pebble-challtestsrv): npm test installs it');
    ensureImages();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-console-tls-'));
    inputs = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-console-tls-inputs-'));
    lab = await startAcmeLab(path.join(inputs, 'lab'), LAB_PORTS);
    standin = await startDnsMainStandin({ port: 8467, zones: ['acme.test'], keys: KEYS, challtestsrv: lab.challtestsrv });
    root = await lab.issuingRoot();
    fs.writeFileSync(path.join(inputs, 'dns.env'), `DNSMAIN_AK=${KEYS.ak}\nDNSMAIN_AS=${KEYS.as}\nDNSMAIN_CK=${KEYS.ck}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(inputs, 'laps'), t.laps.password, { mode: 0o600 });
    fs.writeFileSync(path.join(inputs, 'reset'), t.reset.password, { mode: 0o600 });
    removeContainers(NAME, 'console', 'password-service');
  }, 600_000);
  afterAll(async () => {
    console.log(`--- podman logs ${NAME}-console\n${podman('logs', '--tail', '15', `${NAME}-console`).out}`);
    await standin?.close();
    await lab?.stop();
    if (process.env.HDC_KEEP_INSTANCE === '1') return;
    removeContainers(NAME, 'console', 'password-service');
    for (const d of [dir, inputs]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses a DNS credentials file without --tls acme-dns, before anything is written', async () => {
    const r = await shAsync('bash', [path.join(SCRIPTS, 'install.sh'), '--instance', dir, '--version', TAG_A, '--dns-credentials-file', path.join(inputs, 'dns.env')]);
    expect([r.code, r.out]).toEqual([2, expect.stringContaining('is for --tls acme-dns')]);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(standin.requests).toEqual([]);
  });

  it('installs with --tls acme-dns: the certificate for the public URL\'s host served on --port, its key the console user\'s, the DNS credentials kept root\'s', async () => {
    const r = await install('--tls', 'acme-dns', '--dns-credentials-file', path.join(inputs, 'dns.env'));
    expect(r.out).toContain('console healthy on https://127.0.0.1');
    expect(r.code).toBe(0);
    const live = await served();
    expect(live.status).toBe(200);
    expect(tls.checkServerIdentity(HOST, live.cert)).toBeUndefined();
    expect(mode(path.join(dir, 'tls/privkey.pem'))).toEqual(['600', 10001]);
    expect(mode(path.join(dir, 'secrets/acme-dns.env'))).toEqual(['600', 0]);
    expect(fs.readFileSync(path.join(dir, 'secrets/acme-dns.env'), 'utf8')).toContain(KEYS.as);
    // the DNS credentials reach no container: neither mounts them, neither's definition holds them
    const inspect = podman('inspect', `${NAME}-console`, `${NAME}-password-service`).out;
    for (const k of [KEYS.as, KEYS.ck]) expect(inspect).not.toContain(k);
    expect(running(NAME)).toHaveLength(2);
  });

  it('renews (renew-tls.sh): a new certificate, its key the console user\'s again', async () => {
    const before = new X509Certificate(fs.readFileSync(path.join(dir, 'tls/fullchain.pem'))).serialNumber;
    const r = await shAsync('bash', [path.join(dir, 'renew-tls.sh'), '--renew-before-days', '3650']);
    expect(r.code).toBe(0);
    const after = new X509Certificate(fs.readFileSync(path.join(dir, 'tls/fullchain.pem')));
    expect(after.serialNumber).not.toBe(before);
    expect(after.checkHost(HOST)).toBe(HOST);
    expect(mode(path.join(dir, 'tls/privkey.pem'))).toEqual(['600', 10001]);
  });

  it('backs up the certificate and the DNS credentials with the rest; a restore brings them back', async () => {
    const b = sh('bash', [path.join(dir, 'backup.sh')]);
    expect(b.code).toBe(0);
    const archive = b.out.trim().split('\n').pop()!;
    const listing = sh('tar', ['-tzf', archive]).stdout.split('\n');
    for (const f of ['secrets/acme-dns.env', 'tls/fullchain.pem', 'tls/privkey.pem', 'hdc.env']) expect([f, listing.includes(f)]).toEqual([f, true]);
    const kept = fs.readFileSync(path.join(dir, 'tls/fullchain.pem'), 'utf8');
    fs.rmSync(path.join(dir, 'tls/fullchain.pem'));
    fs.rmSync(path.join(dir, 'secrets/acme-dns.env'));
    const r = sh('bash', [path.join(dir, 'restore.sh'), archive]);
    expect(r.out).toContain('restored from');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'tls/fullchain.pem'), 'utf8')).toBe(kept);
    expect(mode(path.join(dir, 'secrets/acme-dns.env'))).toEqual(['600', 0]);
    expect(tls.checkServerIdentity(HOST, (await served()).cert)).toBeUndefined();
  }, 300_000);
});
