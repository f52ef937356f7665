import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { log, ROOT, RUN_DIR } from './processes';
import { startStack, stopStack } from './stack';

// npm test: unit tests, then the local stack in its test profile (own ports and table, the same
// directory) and the integration tests against it; the stack is stopped whatever happens.
function jest(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/jest/bin/jest.js'), ...args], { stdio: 'inherit', env, cwd: ROOT });
  return r.status ?? 1;
}

/** oathtool is the unit tests' independent TOTP implementation (Debian package). */
function ensureOathtool() {
  if (spawnSync('sh', ['-c', 'command -v oathtool'], { stdio: 'ignore' }).status === 0) return;
  log('installing oathtool (Debian) for the authenticator tests');
  spawnSync('bash', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends oathtool'], { stdio: 'inherit' });
}

/** The e2e tests drive Debian's Chromium (playwright-core cannot download a browser here). */
function ensureChromium() {
  if (fs.existsSync(process.env.HDC_CHROMIUM ?? '/usr/bin/chromium')) return;
  log('installing chromium (Debian) for the web app tests');
  spawnSync('bash', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium'], { stdio: 'inherit' });
}

async function main() {
  ensureOathtool();
  ensureChromium();
  const extra = process.argv.slice(2);
  // `npm test -- tests/integration/x.test.ts` runs only the named files: a phase none of them
  // belongs to passes with no tests
  const named = extra.some((a) => !a.startsWith('-')) ? ['--passWithNoTests'] : [];
  const unit = jest(['--selectProjects', 'unit', ...named, ...extra]);
  if (unit !== 0) process.exit(unit);
  let code = 1;
  let started = false;
  try {
    await startStack({
      profile: 'test',
      onProcessesStarting: () => {
        started = true;
        // sessions and authenticator steps remembered by the tests belong to one run
        for (const f of ['sessions.test.json', 'totp-steps.test.json']) fs.rmSync(path.join(RUN_DIR, f), { force: true });
      },
    });
    // --forceExit: a socket left open by a test must not hold CI until the directory's idle timeout
    const env = {
      ...process.env,
      HDC_STACK_PROFILE: 'test',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN', // the audit stream of the tests' own appends
    };
    code = jest(['--selectProjects', 'integration', '--runInBand', '--forceExit', ...named, ...extra], env);
    // then the web app in a real browser, against the same stack
    if (code === 0) code = jest(['--selectProjects', 'e2e', '--runInBand', '--forceExit', ...named, ...extra], env);
    // then the images as a self-hosted instance on the same directory (podman; docs/containers.md)
    if (code === 0) code = jest(['--selectProjects', 'containers', '--runInBand', '--forceExit', ...named, ...extra], env);
  } catch (e) {
    console.error(`[hdc] integration stack failed: ${(e as Error).stack}`);
  } finally {
    // a stack whose ports were busy is someone else's: only stop what this run started
    if (started) {
      log('stopping the test stack');
      // HDC_KEEP_DIRECTORY=1 leaves the DCs running (faster repeated runs while developing)
      await stopStack('test', { directory: process.env.HDC_KEEP_DIRECTORY !== '1' });
    }
  }
  process.exit(code);
}
void main();
