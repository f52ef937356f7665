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
  // exits 1 on `run` when PODMAN_RUN_FAILS=1 (an image that does not start)
  fs.writeFileSync(path.join(bin, 'podman'), `#!/bin/sh\necho "$*" >> ${calls}\n[ "$1" = run ] && [ "$PODMAN_RUN_FAILS" = 1 ] && exit 1\nexit 0\n`, { mode: 0o755 });
  for (const s of fs.readdirSync(SCRIPTS)) fs.copyFileSync(path.join(SCRIPTS, s), path.join(dir, s));
  fs.writeFileSync(path.join(dir, 'hdc.env'), 'HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=localhost\nHDC_IMAGE_TAG=1.0.0\nHDC_PORT=8443\nHDC_NETWORK=bridge\n', { mode: 0o600 });
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
  const db = 'backups/hdc-backup-2026-11-25T10-00-00-000Z.jsonl';
  const good = { 'hdc.env': 'HDC_NAME=acme\n', [db]: '{"pk":"A","sk":"B"}\n' };
  it.each([
    ['no companion file', undefined, good, 'companion file is missing'],
    ['an empty companion', '', good, 'exactly one database file (it names 0)'],
    ['two names', `${db}\nbackups/other.jsonl\n`, good, 'exactly one database file (it names 2)'],
    ['a name outside backups/', '../etc/shadow\n', good, 'not a database file under backups/'],
    ['a path with a dot-dot', 'backups/../hdc.env\n', good, 'not a database file under backups/'],
    ['a file the archive does not hold', 'backups/missing.jsonl\n', good, 'does not hold backups/missing.jsonl'],
    ['an archive with a second database file', `${db}\n`, { ...good, 'backups/second.jsonl': '{}\n' }, 'more than one database file'],
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
});
