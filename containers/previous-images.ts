import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { podmanEnv } from './build';

// The images of the last release before the embedded store: what an instance upgrades from
// (tests/containers/upgrade-from-dynamodb.test.ts) and the figure it is measured against
// (bench/instance-memory.ts). Built from that commit itself, not imitated: a git worktree of it
// (in the system's temporary folder), its node_modules shared with this checkout when its lock
// file is the same (otherwise `npm ci` there: the npm registry only), then its own
// `containers/build.ts`. Its images (console, password service, and DynamoDB Local as the
// instance's store) are tagged `prev-<commit>` and kept: a later run reuses them.

/**
 * The last commit of main whose images keep the store in DynamoDB Local: the parent of the commit
 * that brought the embedded store's images (issue 26, part 3). Its lock file is the one of that
 * commit, so its worktree shares this checkout's node_modules (no `npm ci`) until the lock changes.
 */
export const PREVIOUS_COMMIT = 'c76ce14035c14afe106104c9fdc66dbf69635699';
export const PREVIOUS_IMAGES = ['hdc-console', 'hdc-password-service', 'hdc-dynamodb'];

const ROOT = path.resolve(__dirname, '..');
const run = (cmd: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv) => execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

export interface PreviousRelease {
  commit: string;
  tag: string;
  /** its instance scripts (install.sh and the others of that release) */
  scripts: string;
}

/**
 * Is the previous release's commit in this clone? A shallow clone (a CI checkout with `--depth`)
 * lacks it: its history is fetched from `origin` when that answers; otherwise false, and the
 * caller says so (the upgrade test is skipped with the reason printed, never passed in silence).
 */
export function previousCommitAvailable(commit = PREVIOUS_COMMIT): boolean {
  const has = () => spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status === 0;
  if (has()) return true;
  for (const args of [['fetch', '--quiet', 'origin', commit], ['fetch', '--quiet', '--unshallow', 'origin']]) {
    spawnSync('git', args, { cwd: ROOT, timeout: 120_000 });
    if (has()) return true;
  }
  return false;
}

export function previousRelease(commit = PREVIOUS_COMMIT, log: (line: string) => void = () => undefined): PreviousRelease {
  const full = run('git', ['rev-parse', '--verify', `${commit}^{commit}`], ROOT).trim();
  const short = full.slice(0, 10);
  const tag = `prev-${short}`;
  const tree = path.join(os.tmpdir(), `hdc-prev-${short}`);
  const env = podmanEnv();
  if (!fs.existsSync(path.join(tree, '.git'))) {
    log(`worktree of ${short} in ${tree}`);
    run('git', ['worktree', 'add', '--force', '--detach', tree, full], ROOT);
  }
  const scripts = path.join(tree, 'containers/scripts');
  const have = (i: string) => spawnSync('podman', ['image', 'exists', `localhost/${i}:${tag}`], { env }).status === 0;
  if (PREVIOUS_IMAGES.every(have)) return { commit: full, tag, scripts };

  if (!fs.existsSync(path.join(tree, 'node_modules'))) {
    const sameLock = spawnSync('git', ['diff', '--quiet', full, '--', 'package-lock.json'], { cwd: ROOT }).status === 0;
    if (sameLock) fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
    else {
      log(`npm ci in ${tree} (its lock file differs from this checkout's)`);
      // its build needs the dev dependencies (tsx, esbuild): asked for by name, whatever the
      // caller's environment says (under `npm test` they were left out: 60 packages, no tsx)
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_ENV' && !/^npm_config_/i.test(k)));
      run('npm', ['ci', '--include=dev', '--no-audit', '--no-fund', '--prefer-offline'], tree, env);
    }
  }
  // the Node binary its build checks against the same pinned checksum: this checkout's download
  const cache = path.join(ROOT, 'local/.cache');
  for (const d of fs.existsSync(cache) ? fs.readdirSync(cache).filter((f) => f.startsWith('node-')) : []) {
    const into = path.join(tree, 'local/.cache', d);
    if (!fs.existsSync(into)) fs.cpSync(path.join(cache, d), into, { recursive: true });
  }
  log(`building ${PREVIOUS_IMAGES.join(', ')} of ${short} as :${tag}`);
  run(process.execPath, [path.join(tree, 'node_modules/tsx/dist/cli.mjs'), path.join(tree, 'containers/build.ts'), tag, ...PREVIOUS_IMAGES], tree, { ...process.env, ...env });
  return { commit: full, tag, scripts };
}
