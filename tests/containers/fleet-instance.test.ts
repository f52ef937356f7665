import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { build } from 'esbuild';
import { pebbleAvailable, startAcmeLab, type AcmeLab } from '../../local/fleet/acme-lab';
import { startDnsMainStandin, type Standin } from '../../local/fleet/dns-main-standin';
import { describeWithPodman, ensureImages, mode, names, podman, removeContainers, removeNetworks, ROOT, running, SCRIPTS, sh, shAsync, TAG_A, TAG_B } from './support';

// The fleet plane installed from its image by its scripts (docs/containers.md): the certificate by
// DNS-01 (install-tls in the image, against Debian's pebble and the dns_main stand-in), served over
// TLS on --https-port and renewed without a restart; --auth identity and --auth machine-id (the
// fake cluster CLI, bundled, as tctl); secrets its container user's, 0600; upgrade with a copy
// first and a rollback that works; backup and restore with the console's refusals.

const NAME = 'hdcfl';
const HOST = 'fleet.msp.test';
const HTTPS_PORT = 18543;
const KEYS = { ak: 'AK-ct-7f3a9c', as: 'AS-ct-SECRET-4b81e2d9', ck: 'CK-ct-SECRET-c0ffee1234' };
const ADMIN_PASSWORD = 'Fleet-ct-admin-Passw0rd!';
const LAB_PORTS = { acme: 14310, management: 15310, dns: 8363, challtestManagement: 8365 };

interface Answer {
  status: number;
  body: any;
  cert?: tls.PeerCertificate;
}

describeWithPodman('the fleet plane as an instance from its image', () => {
  let lab: AcmeLab;
  let standin: Standin;
  let dir: string;
  let inputs: string;
  let root: string;
  let token = '';
  // the DNS API stand-in answers in this process: the scripts run beside it, never blocking it
  const install = (...args: string[]) => shAsync('bash', [path.join(SCRIPTS, 'fleet-install.sh'), '--instance', dir, ...args]);
  const base = () => [
    '--instance-name', NAME, '--version', TAG_A, '--name', HOST, '--public-url', `https://${HOST}:${HTTPS_PORT}`, '--https-port', String(HTTPS_PORT),
    '--bind', '127.0.0.1', '--auth-server', 'teleport.msp.test:443', '--tctl', path.join(inputs, 'tctl'),
    '--tls', 'acme-dns', '--dns-provider', 'dns_main', '--acme-email', 'ops@msp.test', '--acme-directory', lab.directoryUrl,
    '--dns-api-url', standin.url, '--dns-propagation-seconds', '0', '--extra-ca-file', lab.listenerCaFile, '--config-file', path.join(inputs, 'fleet.env'),
  ];

  /** One request to the fleet plane over TLS, trusting pebble's root for the name HOST only. */
  function call(method: string, p: string, body?: unknown): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port: HTTPS_PORT, servername: HOST, method, path: p, ca: root, agent: false, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method !== 'GET' ? { 'content-type': 'application/json' } : {}) } },
        (res) => {
          let s = '';
          res.on('data', (d) => (s += d));
          res.on('end', () => {
            let parsed: unknown = s;
            try {
              parsed = JSON.parse(s);
            } catch {
              /* html */
            }
            resolve({ status: res.statusCode!, body: parsed, cert: (res.socket as tls.TLSSocket).getPeerCertificate() });
          });
        },
      );
      req.on('error', reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  }
  const signIn = async () => {
    token = '';
    const r = await call('POST', '/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(r.status).toBe(200);
    token = r.body.token;
  };
  const servedSerial = async () => (await call('GET', '/health/live')).cert?.serialNumber;
  const tctlCalls = () => fs.readFileSync(path.join(dir, 'data/fake-tctl/calls.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).argv as string[]);
  const until = async <T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn().catch(() => undefined);
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out: ${what}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  };

  beforeAll(async () => {
    if (!pebbleAvailable()) throw new Error('Debian package pebble is missing (pebble, pebble-challtestsrv): npm test installs it');
    ensureImages();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-fleet-instance-'));
    inputs = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-fleet-inputs-'));
    lab = await startAcmeLab(path.join(inputs, 'lab'), LAB_PORTS);
    standin = await startDnsMainStandin({ port: 8367, zones: ['msp.test'], keys: KEYS, challtestsrv: lab.challtestsrv });
    root = await lab.issuingRoot();
    // the cluster CLI: the local fake, bundled into one file for the image's Node
    const source = fs.readFileSync(path.join(ROOT, 'local/fleet/tctl'), 'utf8').replace(/^#!.*\n/, '');
    await build({ stdin: { contents: source, loader: 'js', resolveDir: path.join(ROOT, 'local/fleet'), sourcefile: 'tctl.js' }, bundle: true, platform: 'node', format: 'cjs', outfile: path.join(inputs, 'tctl'), banner: { js: '#!/usr/local/bin/node' }, logLevel: 'warning' });
    fs.chmodSync(path.join(inputs, 'tctl'), 0o755);
    // its fixtures in the fleet's data folder (written by the fake when it locks), its calls logged there
    const fake = path.join(dir, 'data/fake-tctl');
    fs.mkdirSync(fake, { recursive: true });
    fs.cpSync(path.join(ROOT, 'local/fleet/fixtures'), fake, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'lib/fleet/identity-role.yaml'), path.join(fake, 'identity-role.yaml'));
    sh('chown', ['-R', '10001:10001', fake]);
    fs.writeFileSync(
      path.join(inputs, 'fleet.env'),
      ['# the lab: pebble and the DNS stand-in on loopback, the fake cluster CLI', 'FLEET_OUTBOUND_ALLOWED_TARGETS=127.0.0.1/32', 'FAKE_TCTL_DIR=/data/fake-tctl', 'FAKE_TCTL_ROLE=/data/fake-tctl/identity-role.yaml', 'FAKE_TCTL_LOG=/data/fake-tctl/calls.log', 'HDC_TLS_RELOAD_MS=1000', ''].join('\n'),
    );
    fs.writeFileSync(path.join(inputs, 'dns.env'), `DNSMAIN_AK=${KEYS.ak}\nDNSMAIN_AS=${KEYS.as}\nDNSMAIN_CK=${KEYS.ck}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(inputs, 'admin'), `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(inputs, 'identity'), '# identity file of the fleet plane (tctl auth sign --format=file)\n', { mode: 0o600 });
    removeContainers(NAME, 'fleet');
  }, 600_000);
  afterAll(async () => {
    console.log(`--- podman logs ${NAME}-fleet\n${podman('logs', '--tail', '15', `${NAME}-fleet`).out}`);
    await standin?.close();
    await lab?.stop();
    if (process.env.HDC_KEEP_INSTANCE === '1') return;
    removeContainers(NAME, 'fleet');
    removeNetworks(NAME);
    podman('rmi', '-f', `localhost/hdc-fleet:ct-broken`);
    for (const d of [dir, inputs]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses before anything is written: a port differing from the public URL\'s, no cluster identity, an identity without its file', async () => {
    const cases: Array<[string[], string]> = [
      [[...base().map((a) => (a === `https://${HOST}:${HTTPS_PORT}` ? `https://${HOST}:9443` : a)), '--auth', 'machine-id', '--admin-password-file', path.join(inputs, 'admin')], "--public-url's port (9443) differs from --https-port"],
      [[...base(), '--admin-password-file', path.join(inputs, 'admin')], '--auth identity|machine-id'],
      [[...base(), '--auth', 'identity', '--admin-password-file', path.join(inputs, 'admin')], '--auth identity needs --identity-file'],
    ];
    for (const [args, message] of cases) {
      const r = await install(...args);
      expect([r.code, r.out]).toEqual([2, expect.stringContaining(message)]);
      expect(fs.existsSync(path.join(dir, 'hdc-fleet.env'))).toBe(false);
    }
    expect(running(NAME)).toEqual([]);
    expect(standin.requests).toEqual([]);
  });

  it('installs with an identity file: the DNS-01 certificate served on the HTTPS port, the API and the dashboard over TLS, secrets 0600', async () => {
    const r = await install(...base(), '--auth', 'identity', '--identity-file', path.join(inputs, 'identity'), '--dns-credentials-file', path.join(inputs, 'dns.env'), '--admin-password-file', path.join(inputs, 'admin'));
    expect(r.out).toContain('fleet plane healthy');
    expect(r.code).toBe(0);
    expect(names(NAME)).toEqual([`${NAME}-fleet`]);
    // the certificate pebble issued for the name, trusted through its root, on --https-port
    const live = await call('GET', '/health/live');
    expect(live.status).toBe(200);
    expect(tls.checkServerIdentity(HOST, live.cert as tls.PeerCertificate)).toBeUndefined();
    expect((await call('GET', '/proxies')).body).toContain('<!doctype html>');
    expect((await call('GET', '/api/nodes')).status).toBe(401);
    await signIn();
    const nodes = await call('GET', '/api/nodes');
    expect(nodes.status).toBe(200);
    expect(tctlCalls().at(-1)).toEqual(expect.arrayContaining(['--auth-server=teleport.msp.test:443', '-i', '/run/secrets/identity']));
    // secrets: the container user's (10001), 0600; the DNS credentials kept for renewals (root's, read by install-tls only)
    for (const f of ['secrets/fleet/master.key', 'secrets/fleet/channels.key', 'secrets/fleet/identity', 'tls/privkey.pem', 'data/fleet.sqlite']) expect([f, ...mode(path.join(dir, f))]).toEqual([f, '600', 10001]);
    expect(mode(path.join(dir, 'secrets/acme-dns.env'))).toEqual(['600', 0]);
    expect(mode(path.join(dir, 'hdc-fleet.env'))[0]).toBe('600');
    const inspect = podman('inspect', `${NAME}-fleet`).out;
    for (const secret of [KEYS.as, KEYS.ck, ADMIN_PASSWORD, fs.readFileSync(path.join(dir, 'secrets/fleet/channels.key'), 'utf8')]) expect(inspect).not.toContain(secret);
  }, 300_000);

  it('renews the certificate (fleet-renew-tls.sh) and serves the new one without a restart', async () => {
    const before = await servedSerial();
    const started = podman('inspect', '-f', '{{.Id}} {{.State.StartedAt}}', `${NAME}-fleet`).out;
    const r = await shAsync('bash', [path.join(dir, 'fleet-renew-tls.sh'), '--renew-before-days', '3650']);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('"action":"issued"')]);
    expect(mode(path.join(dir, 'tls/privkey.pem'))).toEqual(['600', 10001]);
    const after = await until('the renewed certificate', async () => {
      const s = await servedSerial();
      return s && s !== before ? s : undefined;
    });
    expect(after).not.toBe(before);
    expect(podman('inspect', '-f', '{{.Id}} {{.State.StartedAt}}', `${NAME}-fleet`).out).toBe(started);
    expect((await call('GET', '/api/nodes')).status).toBe(200);
  }, 120_000);

  it('switches to Machine ID: the identity tbot keeps renewed is read as it changes (missing: access_credentials_expired)', async () => {
    const r = await install('--auth', 'machine-id');
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('tbot')]);
    expect(fs.existsSync(path.join(dir, 'secrets/fleet/identity'))).toBe(false);
    const identity = path.join(dir, 'machine-id/identity');
    // what tbot writes, readable by the container user (tbot's --reader-user)
    const writeIdentity = () => {
      fs.writeFileSync(identity, `# renewed at ${new Date().toISOString()}\n`, { mode: 0o600 });
      fs.chownSync(identity, 10001, 10001);
    };
    writeIdentity();
    await signIn();
    expect((await call('GET', '/api/nodes')).status).toBe(200);
    expect(tctlCalls().at(-1)).toEqual(expect.arrayContaining(['-i', '/run/machine-id/identity']));
    fs.rmSync(identity);
    const gone = await call('GET', '/api/nodes');
    expect([gone.status, gone.body.code]).toEqual([502, 'access_credentials_expired']);
    writeIdentity();
    expect((await call('GET', '/api/nodes')).status).toBe(200);
  }, 120_000);

  it('upgrades with a copy first; a version that does not start prints the rollback, which brings the previous one back', async () => {
    expect((await call('POST', '/api/clients', { code: 'acme', name: 'Acme' })).status).toBe(201);
    const before = fs.readdirSync(path.join(dir, 'backups'));
    const r = sh('bash', [path.join(dir, 'fleet-upgrade.sh'), `localhost:${TAG_B}`]);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining(`upgraded to localhost:${TAG_B}`)]);
    expect(fs.readdirSync(path.join(dir, 'backups')).filter((f) => !before.includes(f)).some((f) => /^fleet-backup-.+\.sqlite$/.test(f))).toBe(true);
    expect(running(NAME).every((l) => l.endsWith(`:${TAG_B}`))).toBe(true);
    await signIn();
    expect((await call('GET', '/api/clients/acme')).status).toBe(200);

    // a version whose process exits at once
    const broken = path.join(inputs, 'broken');
    fs.mkdirSync(broken, { recursive: true });
    fs.writeFileSync(path.join(broken, 'Containerfile'), `FROM localhost/hdc-fleet:${TAG_B}\nENTRYPOINT ["/usr/local/bin/node", "-e", "process.exit(3)"]\n`);
    expect(podman('build', '-q', '-t', 'localhost/hdc-fleet:ct-broken', broken).code).toBe(0);
    const t0 = Date.now();
    const failed = sh('bash', [path.join(dir, 'fleet-upgrade.sh'), 'localhost:ct-broken']);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('UPGRADE FAILED');
    expect(Date.now() - t0).toBeLessThan(60_000);
    const rollback = /cd (\S+) && \.\/fleet-upgrade\.sh '([^']+)'/.exec(failed.out)!;
    expect(rollback[2]).toBe(`localhost:${TAG_B}`);
    const back = sh('bash', [path.join(rollback[1], 'fleet-upgrade.sh'), rollback[2]]);
    expect([back.code, back.out]).toEqual([0, expect.stringContaining(`upgraded to localhost:${TAG_B}`)]);
    await signIn();
    expect((await call('GET', '/api/clients/acme')).status).toBe(200);
  }, 300_000);

  it('backs up and restores; a bad archive is refused with exit 2 before anything is stopped', async () => {
    const b = sh('bash', [path.join(dir, 'fleet-backup.sh')]);
    expect(b.code).toBe(0);
    const archive = b.out.trim().split('\n').pop()!;
    expect((fs.statSync(archive).mode & 0o777).toString(8)).toBe('600');
    const named = fs.readFileSync(`${archive}.database`, 'utf8').trim();
    expect(named).toMatch(/^backups\/fleet-backup-.+\.sqlite$/);
    // something changes after the copy
    expect((await call('DELETE', '/api/clients/acme')).status).toBe(204);

    const up = running(NAME);
    const refused = (message: string) => {
      const r = sh('bash', [path.join(dir, 'fleet-restore.sh'), bad]);
      expect([r.code, r.out]).toEqual([2, expect.stringContaining(message)]);
      expect(running(NAME)).toEqual(up);
    };
    const bad = path.join(dir, 'archives', 'bad.tar.gz');
    fs.copyFileSync(archive, bad);
    fs.writeFileSync(`${bad}.database`, `${named}\nbackups/other.sqlite\n`);
    refused('exactly one database file');
    fs.writeFileSync(`${bad}.database`, '../secrets/fleet/master.key\n');
    refused('not a database file under backups/');
    fs.writeFileSync(`${bad}.database`, 'backups/missing.sqlite\n');
    refused('does not hold backups/missing.sqlite');
    // a database file that is not a SQLite copy of the fleet's store
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-bad-fleet-archive-'));
    sh('tar', ['-C', src, '-xzf', archive]);
    fs.writeFileSync(path.join(src, named), 'SQLite format 3\u0000 and then nothing a database holds');
    sh('tar', ['-C', src, '-czf', bad, 'hdc-fleet.env', 'config', 'secrets', 'tls', named]);
    fs.writeFileSync(`${bad}.database`, `${named}\n`);
    refused('is not a copy of the fleet');
    fs.rmSync(src, { recursive: true, force: true });

    const r = sh('bash', [path.join(dir, 'fleet-restore.sh'), archive]);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('restored from')]);
    expect(names(NAME)).toEqual([`${NAME}-fleet`]);
    expect(fs.readdirSync(path.join(dir, 'archives')).some((f) => /^before-restore-.*\.tar\.gz$/.test(f))).toBe(true);
    await signIn();
    expect((await call('GET', '/api/clients/acme')).status).toBe(200);
    expect(mode(path.join(dir, 'tls/privkey.pem'))).toEqual(['600', 10001]);
  }, 300_000);
});
