import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packZip, UPGRADE_SCRIPT, wrapperScript, type UpgradePack } from '../../../lib/fleet/upgrades/pack';

// The scripts of an upgrade pack, shell-checked (shellcheck from Debian when installed, else
// `bash -n`) and run against a stand-in console instance directory (hdc.env and common.sh as
// install.sh leaves them): a fake `podman` and `curl` on PATH record every command line and answer
// as a test says. The fleet plane itself never runs them.

const ROOT = path.resolve(__dirname, '../../..');
const hasShellcheck = spawnSync('shellcheck', ['--version']).status === 0;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-upgrade-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const FAKE_PODMAN = `#!/usr/bin/env bash
# stand-in container CLI: one line per call (argv tab-separated, then the image pinned in hdc.env at that moment)
printf '%s\\t' "$@" >>"$FAKE_LOG"; printf '| %s\\n' "$(grep '^HDC_IMAGE_TAG=' hdc.env 2>/dev/null || true)" >>"$FAKE_LOG"
case "$1 $2" in
  "image exists") [ "\${FAKE_IMAGES:-present}" = present ] ;;
  "container exists"|"network exists") exit 0 ;;
  "network inspect") echo 10.89.7.0/24 ;;
  pull*) echo "Error: initializing source docker://$3: manifest unknown" >&2; exit 125 ;;
  exec*) [ "\${FAKE_EXEC:-ok}" = ok ] || { echo "Error: OCI runtime error: runc: exec failed: cannot exec in a stopped container" >&2; exit 126; }
    echo "/backups/hdc-backup-20261125T100000Z.\${FAKE_COPY:-sqlite}" ;;
  rm*) exit 0 ;;
  run*) if [ "\${FAKE_RUN:-ok}" = fail ] && [[ "$*" == *hdc-console* ]]; then echo "Error: runc: exit status 1" >&2; exit 126; fi
    if [[ "$*" == *" admin backup" ]]; then echo "/backups/hdc-backup-20261125T110000Z.sqlite"; exit 0; fi
    if [[ "$*" == *split-copy* ]]; then
      # the console's image cuts the shared copy in two, beside it in the mounted backups/
      [ "\${FAKE_SPLIT:-ok}" = ok ] || { echo "error: not a copy of the table" >&2; exit 1; }
      for a in "$@"; do case "$a" in *:/backups:Z) backups="\${a%%:/backups:Z}" ;; esac; done
      base="\$(basename "\${@: -1}" .jsonl)"
      touch "$backups/$base.console.jsonl" "$backups/$base.password-service.jsonl"
    fi
    echo 0123abcd ;;
esac
`;
const FAKE_CURL = `#!/usr/bin/env bash
printf 'curl\\t%s\\n' "$*" >>"$FAKE_LOG"
[ "\${FAKE_HEALTH:-ready}" = ready ]
`;
const bin = path.join(tmp, 'bin');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'podman'), FAKE_PODMAN, { mode: 0o755 });
fs.writeFileSync(path.join(bin, 'curl'), FAKE_CURL, { mode: 0o755 });

let n = 0;
/** An instance directory as install.sh leaves it (its own copies of the scripts, optional). */
/** `dynamodb`: one installed before the embedded store (no HDC_STORE; DynamoDB Local's files in data/db). */
function instance(opts: { withUpgradeScript?: boolean; store?: 'sqlite' | 'dynamodb' } = {}) {
  const dir = path.join(tmp, `srv-${++n}`);
  fs.mkdirSync(dir);
  const store = opts.store === 'dynamodb' ? '' : 'HDC_STORE=sqlite\n';
  fs.writeFileSync(path.join(dir, 'hdc.env'), `HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=registry.msp.example/hdc\nHDC_IMAGE_TAG=1.3.0\n${store}HDC_PORT=8443\nHDC_NETWORK=bridge\nHDC_DOMAIN=ad.acme.example\n`, { mode: 0o600 });
  if (opts.store === 'dynamodb') {
    fs.mkdirSync(path.join(dir, 'data/db'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'data/db/shared-local-instance.db'), 'the old store');
  }
  fs.copyFileSync(path.join(ROOT, 'containers/scripts/common.sh'), path.join(dir, 'common.sh'));
  if (opts.withUpgradeScript !== false) fs.writeFileSync(path.join(dir, 'upgrade.sh'), UPGRADE_SCRIPT, { mode: 0o700 });
  return dir;
}
const envOf = (dir: string) => fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8');

function run(cwd: string, cmd: string, args: string[], env: Record<string, string> = {}) {
  const log = path.join(tmp, `log-${n}-${Math.random().toString(36).slice(2)}`);
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin`, HOME: tmp, FAKE_LOG: log, CONTAINERS_CONF: '/dev/null', ...env } });
  const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, calls };
}
const verb = (line: string) => line.split('\t').slice(0, 2).join(' ');

const IMAGE = 'registry.msp.example/hdc:1.4.0';
const pack: UpgradePack = {
  target: { tag: '1.4.0', repository: 'registry.msp.example/hdc', image: IMAGE },
  generatedAt: '2026-11-25T10:00:00.000Z',
  leftOut: [],
  clients: [
    {
      code: 'acme',
      name: 'Acme Industries',
      consoles: [{ id: 'i1', url: 'https://hdc.acme.test:8443', host: 'hdc.acme.test-8443', from: '1.3.0', to: '1.4.0', drift: 'behind', plannedAt: '', newlyPlanned: true, commands: [], script: wrapperScript({ url: 'https://hdc.acme.test:8443', host: 'hdc.acme.test-8443', clientCode: 'acme', from: '1.3.0', to: '1.4.0', image: IMAGE }, '2026-11-25T10:00:00.000Z') }],
    },
  ],
};
let unpacked = '';
beforeAll(() => {
  unpacked = path.join(tmp, 'unpacked');
  fs.mkdirSync(unpacked);
  fs.writeFileSync(path.join(tmp, 'pack.zip'), packZip(pack));
  execFileSync('unzip', ['-q', path.join(tmp, 'pack.zip'), '-d', unpacked]);
});
const wrapper = () => path.join(unpacked, 'acme', 'upgrade-hdc.acme.test-8443.sh');

describe('shell check', () => {
  it(`the pack's upgrade.sh and a wrapper pass ${hasShellcheck ? 'shellcheck' : 'bash -n (shellcheck not installed)'}`, () => {
    expect(UPGRADE_SCRIPT).toBe(fs.readFileSync(path.join(ROOT, 'containers/scripts/upgrade.sh'), 'utf8')); // the instance's own script
    for (const f of [...['upgrade.sh', 'common.sh', 'install.sh', 'backup.sh', 'restore.sh', 'renew-tls.sh'].map((x) => path.join(unpacked, 'acme', x)), wrapper()]) {
      const r = hasShellcheck ? spawnSync('shellcheck', ['-s', 'bash', '-x', '-P', path.join(ROOT, 'containers/scripts'), f], { encoding: 'utf8' }) : spawnSync('bash', ['-n', f], { encoding: 'utf8' });
      expect([f, r.status, r.stdout + r.stderr]).toEqual([f, 0, '']);
    }
  });
  it('the zip keeps the scripts executable', () => {
    for (const f of ['upgrade.sh', 'common.sh', 'upgrade-hdc.acme.test-8443.sh']) expect(fs.statSync(path.join(unpacked, 'acme', f)).mode & 0o111).toBe(0o111);
    expect(fs.statSync(path.join(unpacked, 'acme', 'README.md')).mode & 0o111).toBe(0);
  });
});

describe('the wrapper against a stand-in instance directory', () => {
  it('backs up first, pins the image in hdc.env, recreates, waits until healthy', () => {
    const dir = instance();
    const r = run(unpacked, wrapper(), [dir]);
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`upgraded to ${IMAGE}`);
    const steps = r.calls.map(verb);
    const at = (v: string) => steps.indexOf(v);
    expect(steps.filter((s) => s === 'image exists')).toHaveLength(2); // console and password service images of the new tag: no store image
    expect(r.calls.join('\n')).not.toContain('hdc-dynamodb');
    expect(r.calls.find((c) => c.startsWith('image\texists'))).toContain('registry.msp.example/hdc/hdc-console:1.4.0');
    expect(at('exec acme-console')).toBeGreaterThan(-1); // the database copy
    expect(r.calls[at('exec acme-console')]).toContain('admin\tbackup');
    expect(r.calls[at('exec acme-console')]).toContain('| HDC_IMAGE_TAG=1.3.0'); // before anything changed
    expect(at('rm -f')).toBeGreaterThan(at('exec acme-console'));
    expect(r.calls[at('rm -f')]).toContain('| HDC_IMAGE_TAG=1.4.0'); // pinned before recreating
    const runs = r.calls.filter((c) => c.startsWith('run\t-d'));
    expect(runs.some((c) => c.includes('registry.msp.example/hdc/hdc-console:1.4.0'))).toBe(true);
    expect(runs.some((c) => c.includes('registry.msp.example/hdc/hdc-password-service:1.4.0'))).toBe(true);
    expect(r.calls.at(-1)).toMatch(/^curl\t.*http:\/\/127\.0\.0\.1:8443\/health\/ready/);
    expect(envOf(dir)).toBe('HDC_NAME=acme\nHDC_IMAGE_REPOSITORY=registry.msp.example/hdc\nHDC_IMAGE_TAG=1.4.0\nHDC_STORE=sqlite\nHDC_PORT=8443\nHDC_NETWORK=bridge\nHDC_DOMAIN=ad.acme.example\n');
    expect(r.calls.join('\n')).not.toContain('split-copy'); // already on the embedded store: nothing moved
  });

  it("installs the pack's upgrade.sh into an instance that has none", () => {
    const dir = instance({ withUpgradeScript: false });
    const r = run(unpacked, wrapper(), [dir]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`[hdc] ${dir}: this pack's upgrade.sh runs`);
    expect(fs.statSync(path.join(dir, 'upgrade.sh')).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(path.join(dir, 'upgrade.sh'), 'utf8')).toBe(UPGRADE_SCRIPT);
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.4.0');
  });

  it('an image that cannot be pulled changes nothing', () => {
    const dir = instance();
    const r = run(unpacked, wrapper(), [dir], { FAKE_IMAGES: 'absent' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('nothing changed');
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.3.0');
    expect(r.calls.map(verb)).not.toContain('rm -f');
  });

  it('a console that does not become healthy: rollback instructions that name the previous image and the database copy', () => {
    const dir = instance();
    // the instance script waits 120 s for /health/ready: this copy waits 2 s, nothing else differs
    fs.writeFileSync(path.join(dir, 'upgrade.sh'), UPGRADE_SCRIPT.replace('wait_healthy 120 ||', 'wait_healthy 2 ||'), { mode: 0o700 });
    expect(fs.readFileSync(path.join(dir, 'upgrade.sh'), 'utf8')).toContain('wait_healthy 2 ||');
    const r = run(unpacked, wrapper(), [dir], { FAKE_HEALTH: 'down' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`UPGRADE FAILED: the console did not become healthy on ${IMAGE}`);
    expect(r.stderr).toContain(`cd ${dir} && ./upgrade.sh 'registry.msp.example/hdc:1.3.0'`);
    expect(r.stderr).toContain(`./restore.sh --database '/backups/hdc-backup-20261125T100000Z.sqlite'`);
    // following the first instruction pins the previous image again
    const back = run(dir, './upgrade.sh', ['registry.msp.example/hdc:1.3.0'], { FAKE_HEALTH: 'ready' });
    expect(back.status).toBe(0);
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.3.0');
  });

  it('a console that is not running (the rollback from a version that did not start): its file copied by a one-off container first', () => {
    const dir = instance();
    const r = run(dir, './upgrade.sh', ['registry.msp.example/hdc:1.3.1'], { FAKE_EXEC: 'fail' });
    expect([r.status, r.stderr]).toEqual([0, '']);
    const steps = r.calls.map((c) => c.split('\t').slice(0, -1).join(' '));
    const copy = steps.findIndex((c) => /^run --rm --network none .*registry\.msp\.example\/hdc\/hdc-console:1\.3\.1 admin backup$/.test(c));
    expect(copy).toBeGreaterThan(steps.findIndex((c) => c.startsWith('exec acme-console')));
    expect(copy).toBeLessThan(steps.findIndex((c) => c.startsWith('rm -f')));
    expect(r.stdout).toContain('database copy: /backups/hdc-backup-20261125T110000Z.sqlite');
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.3.1');
  });

  it('an instance on DynamoDB Local whose console is not running: nothing changed (its data cannot be copied)', () => {
    const dir = instance({ store: 'dynamodb' });
    const r = run(dir, './upgrade.sh', ['registry.msp.example/hdc:1.4.0'], { FAKE_EXEC: 'fail', FAKE_COPY: 'jsonl' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('backup failed: nothing changed');
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.3.0');
    expect(envOf(dir)).not.toContain('HDC_STORE');
    expect(r.calls.map(verb)).not.toContain('rm -f');
  });

  it('an instance on DynamoDB Local: its files kept aside first, its copy cut in two and loaded into each store, data/db only read', () => {
    const dir = instance({ store: 'dynamodb' });
    const r = run(unpacked, wrapper(), [dir], { FAKE_COPY: 'jsonl' });
    expect([r.status, r.stderr]).toEqual([0, '']);
    const steps = r.calls.map((c) => c.split('\t').slice(0, -1).join(' '));
    const at = (re: RegExp) => steps.findIndex((s) => re.test(s));
    expect(at(/^exec acme-console .*admin backup/)).toBeGreaterThan(-1);
    expect(at(/split-copy \/backups\/hdc-backup-20261125T100000Z\.jsonl$/)).toBeGreaterThan(at(/^exec acme-console/));
    expect(at(/admin restore-database \/backups\/hdc-backup-20261125T100000Z\.console\.jsonl --confirm$/)).toBeGreaterThan(at(/split-copy/));
    expect(at(/hdc-password-service:1\.4\.0 restore \/backups\/hdc-backup-20261125T100000Z\.password-service\.jsonl --confirm$/)).toBeGreaterThan(at(/split-copy/));
    expect(at(/^run -d --name acme-console/)).toBeGreaterThan(at(/admin restore-database/));
    expect(at(/^rm -f -t 10 acme-db$/)).toBeGreaterThan(at(/^curl/)); // DynamoDB Local stopped once the new console is healthy
    expect(fs.existsSync(path.join(dir, 'service-backups/hdc-backup-20261125T100000Z.password-service.jsonl'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'data/db/shared-local-instance.db'), 'utf8')).toBe('the old store');
    expect(envOf(dir)).toContain('HDC_STORE=sqlite');
    expect(r.stdout).toContain(`DynamoDB Local (acme-db) stopped; its data stays in ${dir}/data/db`);
  });

  it("an instance from before the embedded store, with that release's own scripts: the wrapper runs the pack's, which replace them and move the data", () => {
    const dir = instance({ store: 'dynamodb' });
    // stand-ins for the previous release's scripts: they know nothing of the embedded store
    const old = '#!/usr/bin/env bash\necho "the previous release\'s $(basename "$0") ran" >&2\nexit 3\n';
    for (const f of ['upgrade.sh', 'backup.sh', 'restore.sh', 'install.sh']) fs.writeFileSync(path.join(dir, f), old, { mode: 0o700 });
    const r = run(unpacked, wrapper(), [dir], { FAKE_COPY: 'jsonl' });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`[hdc] ${dir}: this pack's upgrade.sh runs`);
    expect(r.calls.some((c) => /split-copy/.test(c))).toBe(true); // the data moved
    expect(envOf(dir)).toContain('HDC_STORE=sqlite');
    for (const f of ['upgrade.sh', 'backup.sh', 'restore.sh', 'install.sh', 'common.sh']) {
      expect([f, fs.readFileSync(path.join(dir, f), 'utf8')]).toEqual([f, fs.readFileSync(path.join(ROOT, 'containers/scripts', f), 'utf8')]);
    }
  });

  it("an instance already on the embedded store keeps running its own upgrade.sh (not the pack's)", () => {
    const dir = instance();
    const own = UPGRADE_SCRIPT.replace('set -euo pipefail', 'set -euo pipefail\necho "[own script]"');
    fs.writeFileSync(path.join(dir, 'upgrade.sh'), own, { mode: 0o700 });
    const r = run(unpacked, wrapper(), [dir]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('[own script]');
    expect(r.stdout).not.toContain("this pack's upgrade.sh runs");
    expect(fs.readFileSync(path.join(dir, 'upgrade.sh'), 'utf8')).toBe(own);
  });

  it('an instance on DynamoDB Local whose move fails: the rollback is the files kept aside, DynamoDB Local left in place', () => {
    const dir = instance({ store: 'dynamodb' });
    const r = run(unpacked, wrapper(), [dir], { FAKE_COPY: 'jsonl', FAKE_SPLIT: 'fail' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`UPGRADE FAILED: the console did not become healthy on ${IMAGE}`);
    const aside = /tar -xzf '([^']+)' && \.\/install\.sh --instance /.exec(r.stderr)?.[1] ?? '';
    expect(aside).toMatch(new RegExp(`^${dir}/archives/before-upgrade-\\d{8}T\\d{6}Z\\.tar\\.gz$`));
    expect(r.calls.some((c) => c.startsWith('rm\t-f\t-t\t10\tacme-db'))).toBe(false); // DynamoDB Local left as it was
    // following the instruction brings back the previous version's environment (no HDC_STORE: DynamoDB Local)
    execFileSync('tar', ['-xzf', aside], { cwd: dir });
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.3.0');
    expect(envOf(dir)).not.toContain('HDC_STORE');
    expect(fs.readFileSync(path.join(dir, 'data/db/shared-local-instance.db'), 'utf8')).toBe('the old store');
  });

  it('refuses what is not an instance directory or not an image (exit 2, nothing run)', () => {
    const empty = path.join(tmp, 'not-an-instance');
    fs.mkdirSync(empty);
    expect(run(unpacked, wrapper(), [empty])).toMatchObject({ status: 2, calls: [] });
    expect(run(unpacked, wrapper(), [])).toMatchObject({ status: 2, calls: [] });
    const dir = instance();
    for (const bad of ['latest', 'x;id', '$(id)']) {
      const r = run(dir, './upgrade.sh', [bad]);
      expect([bad, r.status, r.calls]).toEqual([bad, 2, []]);
    }
    expect(envOf(dir)).toContain('HDC_IMAGE_TAG=1.3.0');
  });
});
