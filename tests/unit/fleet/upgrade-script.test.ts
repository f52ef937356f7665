import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packZip, UPGRADE_SCRIPT, wrapperScript, type UpgradePack } from '../../../lib/fleet/upgrades/pack';

// The generated scripts, shell-checked (shellcheck from Debian when installed, else `bash -n`)
// and run against a stand-in console folder: a fake `podman` on PATH records every command line
// and answers `compose ps -q` / `inspect` as a test says. The fleet plane itself never runs them.

const hasShellcheck = spawnSync('shellcheck', ['--version']).status === 0;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-upgrade-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const FAKE_PODMAN = `#!/usr/bin/env bash
# stand-in container CLI: records argv (one line, tab-separated) and the image pinned in .env at each call
printf '%s\\t' "$@" >>"$FAKE_LOG"; printf '| .env: %s\\n' "$(grep '^HDC_IMAGE=' .env 2>/dev/null || true)" >>"$FAKE_LOG"
case "$1" in
  pull) [ "\${FAKE_PULL:-ok}" = ok ] || { echo "Error: initializing source docker://$2: reading manifest: manifest unknown" >&2; exit 125; } ;;
  compose)
    shift 3 # compose -f <file>
    case "$1" in
      up) [ "\${FAKE_UP:-ok}" = ok ] || exit 1 ;;
      ps) printf 'c0ffee01\\nc0ffee02\\n' ;;
    esac ;;
  inspect)
    n=$(cat "$FAKE_STATE" 2>/dev/null || echo 0); echo $((n + 1)) >"$FAKE_STATE"
    case "\${FAKE_HEALTH:-healthy}" in
      healthy) echo 'healthy|running' ;;
      unhealthy) echo 'unhealthy|running' ;;
      slow) if [ "$n" -lt 4 ]; then echo 'starting|running'; else echo 'healthy|running'; fi ;;
      nocheck) echo '|running' ;;
      exited) echo '|exited' ;;
    esac ;;
esac
`;

const bin = path.join(tmp, 'bin');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'podman'), FAKE_PODMAN, { mode: 0o755 });

let n = 0;
function consoleFolder(image = 'registry.example.com/hdc/console:1.3.0') {
  const dir = path.join(tmp, `console-${++n}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, '.env'), `# console instance\nHDC_TITLE=Acme helpdesk\nHDC_IMAGE=${image}\nHDC_PORT=8443\n`, { mode: 0o600 });
  fs.writeFileSync(path.join(dir, 'compose.yaml'), 'services:\n  hdc:\n    image: ${HDC_IMAGE}\n');
  fs.mkdirSync(path.join(dir, 'secrets'));
  fs.writeFileSync(path.join(dir, 'secrets', 'master.key'), 'k');
  fs.copyFileSync(path.join(tmp, 'upgrade.sh'), path.join(dir, 'upgrade.sh'));
  fs.chmodSync(path.join(dir, 'upgrade.sh'), 0o755);
  return dir;
}
fs.writeFileSync(path.join(tmp, 'upgrade.sh'), UPGRADE_SCRIPT, { mode: 0o755 });

function run(cwd: string, cmd: string, args: string[], env: Record<string, string> = {}) {
  const log = path.join(tmp, `log-${n}-${Math.random().toString(36).slice(2)}`);
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: tmp, FAKE_LOG: log, FAKE_STATE: `${log}.state`, HDC_UPGRADE_POLL_SECONDS: '0', HDC_UPGRADE_WAIT_SECONDS: '5', ...env },
  });
  const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, calls };
}
const envImage = (dir: string) => /^HDC_IMAGE=(.*)$/m.exec(fs.readFileSync(path.join(dir, '.env'), 'utf8'))?.[1];

const pack: UpgradePack = {
  target: { tag: '1.4.0', repository: 'registry.example.com/hdc/console', image: 'registry.example.com/hdc/console:1.4.0' },
  generatedAt: '2026-11-25T10:00:00.000Z',
  leftOut: [],
  clients: [
    {
      code: 'acme',
      name: 'Acme Industries',
      consoles: [{ id: 'i1', url: 'https://hdc.acme.test:8443', host: 'hdc.acme.test-8443', from: '1.3.0', to: '1.4.0', drift: 'behind', plannedAt: '', newlyPlanned: true, commands: [], script: wrapperScript({ url: 'https://hdc.acme.test:8443', host: 'hdc.acme.test-8443', clientCode: 'acme', from: '1.3.0', to: '1.4.0', image: 'registry.example.com/hdc/console:1.4.0' }, '2026-11-25T10:00:00.000Z') }],
    },
  ],
};

describe('shell check', () => {
  it(`upgrade.sh and a wrapper pass ${hasShellcheck ? 'shellcheck' : 'bash -n (shellcheck not installed)'}`, () => {
    const wrapper = path.join(tmp, 'wrapper.sh');
    fs.writeFileSync(wrapper, pack.clients[0].consoles[0].script);
    for (const f of [path.join(tmp, 'upgrade.sh'), wrapper]) {
      const r = hasShellcheck ? spawnSync('shellcheck', ['-s', 'bash', f], { encoding: 'utf8' }) : spawnSync('bash', ['-n', f], { encoding: 'utf8' });
      expect([f, r.status, r.stdout + r.stderr]).toEqual([f, 0, '']);
    }
  });
});

describe('upgrade.sh against a stand-in console folder', () => {
  it('through the zip wrapper: backs up, pulls, pins, recreates, waits until healthy', () => {
    const unpacked = path.join(tmp, 'unpacked');
    fs.mkdirSync(unpacked);
    fs.writeFileSync(path.join(tmp, 'pack.zip'), packZip(pack));
    execFileSync('unzip', ['-q', path.join(tmp, 'pack.zip'), '-d', unpacked]);
    const wrapper = path.join(unpacked, 'acme', 'upgrade-hdc.acme.test-8443.sh');
    expect(fs.statSync(wrapper).mode & 0o111).toBe(0o111); // executable as unzipped
    expect(fs.statSync(path.join(unpacked, 'acme', 'upgrade.sh')).mode & 0o111).toBe(0o111);
    const dir = consoleFolder();
    fs.rmSync(path.join(dir, 'upgrade.sh')); // the wrapper uses the pack's copy
    const r = run(unpacked, wrapper, [dir], { FAKE_HEALTH: 'slow' });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('now runs registry.example.com/hdc/console:1.4.0 (was registry.example.com/hdc/console:1.3.0)');
    // the order of the steps, and what .env pinned at each
    const verbs = r.calls.map((c) => c.split('\t').slice(0, 4).filter((x) => !x.startsWith('|')).join(' '));
    expect(verbs[0]).toBe('pull registry.example.com/hdc/console:1.4.0');
    expect(r.calls[0]).toContain('.env: HDC_IMAGE=registry.example.com/hdc/console:1.3.0'); // pulled before pinning
    expect(verbs[1]).toBe('compose -f compose.yaml up');
    expect(r.calls[1]).toContain('up\t-d\t--force-recreate\t');
    expect(r.calls[1]).toContain('.env: HDC_IMAGE=registry.example.com/hdc/console:1.4.0'); // pinned before recreating
    expect(r.calls.filter((c) => c.startsWith('inspect')).length).toBeGreaterThanOrEqual(5); // waited through "starting"
    // the environment file: only the image line changed, mode kept
    expect(fs.readFileSync(path.join(dir, '.env'), 'utf8')).toBe('# console instance\nHDC_TITLE=Acme helpdesk\nHDC_IMAGE=registry.example.com/hdc/console:1.4.0\nHDC_PORT=8443\n');
    expect(fs.statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o600);
    // the backup, taken first, owner-only
    const backups = fs.readdirSync(path.join(dir, 'backups')).sort();
    expect(backups).toEqual([expect.stringMatching(/^before-upgrade-\d{8}T\d{6}Z\.tar\.gz$/), expect.stringMatching(/^env-before-upgrade-\d{8}T\d{6}Z$/)]);
    for (const b of backups) expect(fs.statSync(path.join(dir, 'backups', b)).mode & 0o777).toBe(0o600);
    const listing = execFileSync('tar', ['-tzf', path.join(dir, 'backups', backups[0])], { encoding: 'utf8' });
    expect(listing).toContain('./.env');
    expect(listing).toContain('./secrets/master.key');
    expect(listing).not.toContain('./backups/');
    expect(fs.readFileSync(path.join(dir, 'backups', backups[1]), 'utf8')).toContain('HDC_IMAGE=registry.example.com/hdc/console:1.3.0');
  });

  it('a tag alone keeps the repository of the environment file', () => {
    const dir = consoleFolder('ghcr.io/msp/hdc:1.3.0');
    const r = run(dir, './upgrade.sh', ['1.4.0'], { FAKE_HEALTH: 'nocheck' });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(envImage(dir)).toBe('ghcr.io/msp/hdc:1.4.0');
    expect(r.calls[0].split('\t').slice(0, 2)).toEqual(['pull', 'ghcr.io/msp/hdc:1.4.0']);
  });

  it('a failed pull changes nothing (exit 3)', () => {
    const dir = consoleFolder();
    const r = run(dir, './upgrade.sh', ['registry.example.com/hdc/console:1.4.0'], { FAKE_PULL: 'fail' });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('could not pull registry.example.com/hdc/console:1.4.0; nothing was changed');
    expect(envImage(dir)).toBe('registry.example.com/hdc/console:1.3.0');
    expect(r.calls.some((c) => c.startsWith('compose'))).toBe(false);
  });

  it.each(['unhealthy', 'exited'])('a container %s: exit 4 with rollback instructions that work', (health) => {
    const dir = consoleFolder();
    const r = run(dir, './upgrade.sh', ['registry.example.com/hdc/console:1.4.0'], { FAKE_HEALTH: health });
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('To roll back to registry.example.com/hdc/console:1.3.0');
    expect(envImage(dir)).toBe('registry.example.com/hdc/console:1.4.0'); // no automatic rollback
    const cp = /^ {2}(cp .*)$/m.exec(r.stderr)![1];
    const up = /^ {2}(podman compose .*)$/m.exec(r.stderr)![1];
    const rb = run(dir, 'bash', ['-c', `${cp} && ${up}`]);
    expect(rb.status).toBe(0);
    expect(envImage(dir)).toBe('registry.example.com/hdc/console:1.3.0');
    expect(rb.calls[0]).toContain('up\t-d\t--force-recreate');
  });

  it('never healthy within the wait: exit 4', () => {
    const dir = consoleFolder();
    const r = run(dir, './upgrade.sh', ['registry.example.com/hdc/console:1.4.0'], { FAKE_HEALTH: 'slow', HDC_UPGRADE_WAIT_SECONDS: '0' });
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('not healthy after 0s');
  });

  it('refuses what is not a console folder or not an image (exit 2, nothing run)', () => {
    const empty = path.join(tmp, 'not-a-console');
    fs.mkdirSync(empty);
    expect(run(empty, 'bash', [path.join(tmp, 'upgrade.sh'), '1.4.0'])).toMatchObject({ status: 2, calls: [] });
    const dir = consoleFolder();
    for (const bad of ['latest', 'x;id', '$(id)', 'ghcr.io/msp/hdc:', 'Bad Repo:1.4.0']) {
      const r = run(dir, './upgrade.sh', [bad]);
      expect([bad, r.status, r.calls]).toEqual([bad, 2, []]);
    }
    expect(run(dir, './upgrade.sh', [])).toMatchObject({ status: 2, calls: [] });
    expect(envImage(dir)).toBe('registry.example.com/hdc/console:1.3.0');
  });

  it('the same image again: nothing to do', () => {
    const dir = consoleFolder();
    const r = run(dir, './upgrade.sh', ['registry.example.com/hdc/console:1.3.0']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('nothing to do');
    expect(r.calls).toEqual([]);
  });
});
