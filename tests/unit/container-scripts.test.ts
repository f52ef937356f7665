import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The instance scripts' refusals, with a stand-in `podman` on PATH that records every call: a
// refusal exits 2 before any container is touched (tests/containers runs the real thing).

const SCRIPTS = path.resolve(__dirname, '../../containers/scripts');
let dir: string;
let bin: string;
let calls: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-scripts-'));
  bin = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-fake-bin-'));
  calls = path.join(bin, 'calls.log');
  // exits 1 on `run` when PODMAN_RUN_FAILS=1 (an image that does not start), 2 on `check-copy`
  // when PODMAN_CHECK_FAILS=1 (a database file that is not a copy of its store)
  fs.writeFileSync(
    path.join(bin, 'podman'),
    `#!/bin/sh\necho "$*" >> ${calls}\ncase "$*" in *check-copy*) [ "$PODMAN_CHECK_FAILS" = 1 ] && exit 2 ;; esac\n[ "$1" = run ] && [ "$PODMAN_RUN_FAILS" = 1 ] && exit 1\nexit 0\n`,
    { mode: 0o755 },
  );
  for (const s of fs.readdirSync(SCRIPTS)) fs.copyFileSync(path.join(SCRIPTS, s), path.join(dir, s));
  fs.writeFileSync(path.join(dir, 'hdc.env'), 'HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=localhost\nHDC_IMAGE_TAG=1.0.0\nHDC_STORE=sqlite\nHDC_PORT=8443\nHDC_NETWORK=bridge\n', { mode: 0o600 });
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(bin, { recursive: true, force: true });
});

const run = (script: string, args: string[], cwd = dir, extra: NodeJS.ProcessEnv = {}) => {
  const r = spawnSync('bash', [path.join(cwd, script), ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CONTAINERS_CONF: '/dev/null', ...extra } });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};
const podmanCalls = () => (fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean) : []);

function archiveWith(files: Record<string, string>): string {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-archive-src-'));
  for (const [f, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, f)), { recursive: true });
    fs.writeFileSync(path.join(src, f), content);
  }
  const archive = path.join(dir, 'archives', 'a.tar.gz');
  fs.mkdirSync(path.dirname(archive), { recursive: true });
  execFileSync('tar', ['-C', src, '-czf', archive, ...Object.keys(files)]);
  fs.rmSync(src, { recursive: true, force: true });
  return archive;
}

describe('the scripts are clean shell', () => {
  const shellcheck = spawnSync('sh', ['-c', 'command -v shellcheck']).status === 0;
  it.each(fs.readdirSync(SCRIPTS).filter((f) => f.endsWith('.sh')))('%s', (s) => {
    const r = shellcheck ? spawnSync('shellcheck', ['-x', s], { cwd: SCRIPTS, encoding: 'utf8' }) : spawnSync('bash', ['-n', s], { cwd: SCRIPTS, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('restore.sh refuses a bad archive with exit 2 before stopping anything', () => {
  const db = 'backups/console-backup-2026-11-25T10-00-00-000Z.sqlite';
  const sdb = 'service-backups/password-service-backup-2026-11-25T10-00-00-000Z.sqlite';
  const shared = 'backups/hdc-backup-2026-11-25T10-00-00-000Z.jsonl';
  const good = { 'hdc.env': 'HDC_NAME=acme\n', [db]: 'SQLite format 3', [sdb]: 'SQLite format 3' };
  it.each([
    ['no companion file', undefined, good, 'companion file is missing'],
    ['an empty companion', '', good, 'exactly one database file (it names 0)'],
    ['two names', `${db}\nbackups/other.sqlite\n`, good, 'exactly one database file (it names 2)'],
    ['a name outside backups/', '../etc/shadow\n', good, 'not a database file under backups/'],
    ['a path with a dot-dot', 'backups/../hdc.env\n', good, 'not a database file under backups/'],
    ['the password service\'s copy named', `${sdb}\n`, good, 'not a database file under backups/'],
    ['a file the archive does not hold', 'backups/missing.sqlite\n', good, 'does not hold backups/missing.sqlite'],
    ['an archive with a second database file', `${db}\n`, { ...good, 'backups/second.jsonl': '{}\n' }, 'more than one database file'],
    ['no copy of the password service\'s store', `${db}\n`, { 'hdc.env': '', [db]: '' }, 'exactly one password service copy under service-backups/ (it holds 0)'],
    ['two copies of the password service\'s store', `${db}\n`, { ...good, 'service-backups/second.sqlite': '' }, 'exactly one password service copy under service-backups/ (it holds 2)'],
    ['a shared-table copy beside a service copy', `${shared}\n`, { 'hdc.env': '', [shared]: '{}\n', [sdb]: '' }, 'beside a shared-table copy'],
  ])('%s', (_name, companion, files, message) => {
    const archive = archiveWith(files);
    if (companion !== undefined) fs.writeFileSync(`${archive}.database`, companion);
    const r = run('restore.sh', [archive]);
    expect(r.out).toContain(message);
    expect(r.code).toBe(2);
    expect(podmanCalls()).toEqual([]);
  });
  it('a file that is not an archive', () => {
    const archive = path.join(dir, 'not.tar.gz');
    fs.writeFileSync(archive, 'plain text');
    fs.writeFileSync(`${archive}.database`, `${db}\n`);
    expect(run('restore.sh', [archive]).code).toBe(2);
    expect(podmanCalls()).toEqual([]);
  });
  it('a database file its image does not read as a copy of its store: exit 2, only the check ran', () => {
    const archive = archiveWith(good);
    fs.writeFileSync(`${archive}.database`, `${db}\n`);
    const r = run('restore.sh', [archive], dir, { PODMAN_CHECK_FAILS: '1' });
    expect([r.code, r.out]).toEqual([2, expect.stringContaining("is not a copy of the console's store: nothing stopped")]);
    expect(podmanCalls()).toHaveLength(1);
    expect(podmanCalls()[0]).toMatch(/^run --rm --network none -v \S+:\/check:ro,Z localhost\/hdc-console:1\.0\.0 check-copy \/check\/console-backup-/);
  });
  it('an instance still on DynamoDB Local is sent to upgrade.sh first', () => {
    fs.writeFileSync(path.join(dir, 'hdc.env'), 'HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=localhost\nHDC_IMAGE_TAG=1.0.0\n');
    const archive = archiveWith(good);
    fs.writeFileSync(`${archive}.database`, `${db}\n`);
    for (const script of ['restore.sh', 'backup.sh']) {
      const r = run(script, script === 'restore.sh' ? [archive] : []);
      expect([script, r.out]).toEqual([script, expect.stringContaining('upgrade it first')]);
      expect(r.code).not.toBe(0);
    }
    expect(podmanCalls()).toEqual([]);
  });
});

describe('install.sh and upgrade.sh refusals', () => {
  const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-instance-'));
  it('a LAPS account equal to the read, write or reset account (any case): exit 2, nothing created', () => {
    for (const other of ['--read-upn', '--write-upn', '--reset-upn']) {
      const inst = fresh();
      const r = run('install.sh', ['--instance', inst, '--version', '1.0.0', '--laps-upn', 'svc-laps@ad.test', other, 'SVC-LAPS@AD.TEST']);
      expect(r.out).toContain('must not be the read, write or reset account');
      expect(r.code).toBe(2);
      expect(fs.readdirSync(inst)).toEqual([]);
      fs.rmSync(inst, { recursive: true });
    }
    expect(podmanCalls()).toEqual([]);
  });
  it.each([
    ['latest', 'never latest'],
    ['1.0;rm -rf /', 'not an image tag'],
    ['$(id)', 'not an image tag'],
  ])('install.sh --version %j is refused', (tag, message) => {
    const inst = fresh();
    const r = run('install.sh', ['--instance', inst, '--version', tag]);
    expect(r.out).toContain(message);
    expect(r.code).toBe(2);
    fs.rmSync(inst, { recursive: true });
  });
  it.each([
    [['--dns-credentials-file', '/etc/hostname'], 'is for --tls acme-dns'],
    [['--tls', 'letsencrypt'], '--tls: acme-dns'],
    [['--tls', 'acme-dns', '--public-url', 'http://hdc.acme.test:8443', '--acme-email', 'ops@acme.test'], 'needs --public-url https://HOST[:PORT]'],
    [['--tls', 'acme-dns', '--public-url', 'https://hdc.acme.test:9443', '--port', '8443', '--acme-email', 'ops@acme.test'], "--public-url's port (9443) differs from --port (8443)"],
    [['--tls', 'acme-dns', '--public-url', 'https://hdc.acme.test:8443', '--port', '8443'], 'needs --acme-email'],
  ])('install.sh %j (the console\'s own certificate): exit 2, nothing created', (opts, message) => {
    const inst = fresh();
    const r = run('install.sh', ['--instance', inst, '--version', '1.0.0', ...opts]);
    expect(r.out).toContain(message);
    expect(r.code).toBe(2);
    expect(fs.readdirSync(inst)).toEqual([]);
    fs.rmSync(inst, { recursive: true });
  });
  it.each(['--tunnel-credentials-file', '--reset-password-file', '--extra-ca-file'])('install.sh %s naming no file: exit 2, nothing created', (opt) => {
    const inst = fresh();
    const r = run('install.sh', ['--instance', inst, '--version', '1.0.0', opt, path.join(inst, 'missing')]);
    expect(r.out).toContain('no such file');
    expect(r.code).toBe(2);
    expect(fs.readdirSync(inst)).toEqual([]);
    fs.rmSync(inst, { recursive: true });
  });
  it('a value that a shell would read is refused before it reaches hdc.env', () => {
    const inst = fresh();
    const r = run('install.sh', ['--instance', inst, '--version', '1.0.0', '--public-url', 'https://x/$(id)']);
    expect(r.code).toBe(2);
    expect(fs.existsSync(path.join(inst, 'hdc.env'))).toBe(false);
    fs.rmSync(inst, { recursive: true });
  });
  it.each(['registry.example/hdc:latest', "x:1.0'", 'Bad Repo:1.0'])('upgrade.sh %j is refused, hdc.env unchanged, no container touched', (arg) => {
    const before = fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8');
    const r = run('upgrade.sh', [arg]);
    expect(r.code).toBe(2);
    expect(fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8')).toBe(before);
    expect(podmanCalls()).toEqual([]);
  });
  it('a recreate that fails prints the rollback at once (not after the health wait), the new image pinned', () => {
    const t0 = Date.now();
    const r = run('upgrade.sh', ['localhost:2.0.0'], dir, { PODMAN_RUN_FAILS: '1' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('UPGRADE FAILED');
    expect(r.out).toContain("./upgrade.sh 'localhost:1.0.0'");
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8')).toContain('HDC_IMAGE_TAG=2.0.0');
    expect(podmanCalls().some((c) => c.startsWith('exec acme-console') && c.includes('admin backup'))).toBe(true);
  });
  it('an instance on DynamoDB Local whose move fails prints how to put the previous version back (its files kept aside first)', () => {
    fs.writeFileSync(path.join(dir, 'hdc.env'), 'HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=localhost\nHDC_IMAGE_TAG=1.0.0\nHDC_PORT=8443\nHDC_NETWORK=host\n', { mode: 0o600 });
    const r = run('upgrade.sh', ['localhost:2.0.0'], dir, { PODMAN_RUN_FAILS: '1' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('UPGRADE FAILED');
    const aside = /tar -xzf '([^']+before-upgrade-[^']+\.tar\.gz)' && \.\/install\.sh --instance/.exec(r.out);
    expect(aside).not.toBeNull();
    // the previous version's environment file and scripts are in it
    expect(execFileSync('tar', ['-tzf', aside![1]], { encoding: 'utf8' }).split('\n')).toEqual(expect.arrayContaining(['hdc.env', 'upgrade.sh', 'install.sh']));
  });
  it('install.sh on an instance still on DynamoDB Local without a new version: exit 2, nothing started', () => {
    fs.writeFileSync(path.join(dir, 'hdc.env'), 'HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=localhost\nHDC_IMAGE_TAG=1.0.0\n', { mode: 0o600 });
    const r = run('install.sh', ['--instance', dir]);
    expect([r.code, r.out]).toEqual([2, expect.stringContaining('still keeps its data in DynamoDB Local')]);
    expect(podmanCalls()).toEqual([]);
  });
});

describe('fleet-install.sh refusals: exit 2, nothing written, no container touched', () => {
  it.each([
    [['--https-port', '8443', '--public-url', 'https://fleet.msp.test:9443'], "--public-url's port (9443) differs from --https-port (8443)"],
    [['--public-url', 'https://other.msp.test:8443', '--https-port', '8443'], 'the certificate is issued for --name'],
    [['--https-port', '8443', '--auth', 'token'], '--auth identity|machine-id'],
    [['--https-port', '8443', '--auth', 'identity'], '--auth identity needs --identity-file'],
    [['--https-port', '8443', '--auth', 'machine-id', '--tls', 'acme-http'], '--tls: acme-dns'],
    [['--https-port', '8443', '--auth', 'machine-id', '--dns-provider', 'other'], '--dns-provider must be dns_main'],
    [['--https-port', '8443', '--auth', 'machine-id', '--version', 'latest'], 'never latest'],
  ])('%j', (extra, message) => {
    const inst = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-fleet-instance-'));
    const tctl = path.join(bin, 'tctl');
    fs.writeFileSync(tctl, '#!/bin/sh\n', { mode: 0o755 });
    const args = ['--instance', inst, '--version', '1.0.0', '--name', 'fleet.msp.test', '--tls', 'acme-dns', '--acme-email', 'ops@msp.test', '--auth-server', 'tp.msp.test:443', '--tctl', tctl, '--admin-password-file', tctl];
    // a later option replaces an earlier one
    const r = run('fleet-install.sh', [...args, ...extra]);
    expect([r.code, r.out]).toEqual([2, expect.stringContaining(message)]);
    expect(fs.readdirSync(inst)).toEqual([]);
    expect(podmanCalls()).toEqual([]);
    fs.rmSync(inst, { recursive: true });
  });
});
