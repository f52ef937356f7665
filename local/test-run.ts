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

/**
 * Every Debian package the suites use, installed when missing (idempotent; a fresh machine needs
 * no other step than `npm ci && npm test`): what each is for, the command that shows it is there.
 */
const PACKAGES: Array<{ pkg: string[]; has: string; why: string }> = [
  { pkg: ['oathtool'], has: 'oathtool', why: "the authenticator tests' independent TOTP" },
  { pkg: ['openjdk-17-jre-headless'], has: 'java', why: "DynamoDB Local (the store contract suite's AWS adapter; tests only)" },
  { pkg: ['shellcheck'], has: 'shellcheck', why: 'the generated scripts and the instance scripts' },
  { pkg: ['pebble'], has: 'pebble-challtestsrv', why: "the fleet's DNS-01 certificate test (ACME test CA)" },
  { pkg: ['podman', 'runc'], has: 'podman', why: 'the container images and their instance test' },
  { pkg: ['chromium'], has: process.env.HDC_CHROMIUM ?? '/usr/bin/chromium', why: 'the web apps in a real browser (playwright-core cannot download one here)' },
];

function ensurePackages() {
  const missing = PACKAGES.filter((p) => spawnSync('sh', ['-c', `command -v ${p.has}`], { stdio: 'ignore' }).status !== 0 && !fs.existsSync(p.has));
  if (!missing.length) return;
  for (const p of missing) log(`installing ${p.pkg.join(' ')} (Debian) for ${p.why}`);
  const r = spawnSync('bash', ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing.flatMap((p) => p.pkg).join(' ')}`], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`installing ${missing.flatMap((p) => p.pkg).join(' ')} failed (apt-get exit ${r.status})`);
}

/**
 * The integration tests whose rules rest on the store's transactions, conditions and TTL run a
 * second time with the stack on DynamoDB Local (the AWS adapter), after everything else passed on
 * the embedded store: the same protocols, proven on both (issue 26).
 */
// the files whose rules stand on conditional writes, transactions or TTL: passkeys (a challenge
// answered once, the counter under the record's version) and temporary memberships (one remover)
const DYNAMODB_PARITY = ['tests/integration/rate-windows.test.ts', 'tests/integration/audit.test.ts', 'tests/integration/password-service.test.ts', 'tests/integration/laps.test.ts', 'tests/integration/passkeys.test.ts', 'tests/integration/jit-membership.test.ts'];

async function main() {
  ensurePackages();
  const extra = process.argv.slice(2);
  // `npm test -- tests/integration/x.test.ts` runs only the named files: a phase none of them
  // belongs to passes with no tests
  const named = extra.some((a) => !a.startsWith('-')) ? ['--passWithNoTests'] : [];
  const unit = jest(['--selectProjects', 'unit', ...named, ...extra]);
  if (unit !== 0) process.exit(unit);
  let code = 1;
  let started = false;
  const start = () =>
    startStack({
      profile: 'test',
      onProcessesStarting: () => {
        started = true;
        // sessions and authenticator steps remembered by the tests belong to one run
        for (const f of ['sessions.test.json', 'stepups.test.json', 'totp-steps.test.json']) fs.rmSync(path.join(RUN_DIR, f), { force: true });
      },
    });
  try {
    await start();
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
    // then the store's protocols again on DynamoDB Local (a whole run, or HDC_STORE_PARITY=1)
    if (code === 0 && process.env.HDC_STORE !== 'dynamodb' && (!named.length || process.env.HDC_STORE_PARITY === '1')) {
      log(`the same stack on DynamoDB Local for ${DYNAMODB_PARITY.length} integration files (the AWS adapter)`);
      await stopStack('test', { directory: false });
      process.env.HDC_STORE = 'dynamodb';
      await start();
      code = jest(['--selectProjects', 'integration', '--runInBand', '--forceExit', ...DYNAMODB_PARITY], { ...env, HDC_STORE: 'dynamodb' });
    }
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
