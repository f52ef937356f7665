import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// `npm run package [stage]`: every service packaged for a stage (default `sample`, whose
// parameters are deploy/stages/sample.yml), offline and without an AWS account, into
// dist/package/<stage>/<service>/ (CloudFormation templates and function zips). A stamp records a
// hash of everything that shapes the templates, so the policy test (tests/unit/deploy-policy.test.ts)
// reuses a fresh package instead of packaging again.

export const ROOT = path.resolve(__dirname, '..');
export const SAMPLE_STAGE = 'sample';

export const SERVICES = [
  { name: 'console', config: 'serverless.yml' },
  { name: 'password-service', config: 'serverless.password-service.yml' },
  { name: 'fleet', config: 'serverless.fleet.yml' },
  { name: 'network', config: 'serverless.network.yml' },
] as const;
export type ServiceName = (typeof SERVICES)[number]['name'];

export const packageDir = (stage: string) => path.join(ROOT, 'dist/package', stage);
export const templatePath = (stage: string, service: ServiceName) => path.join(packageDir(stage), service, 'cloudformation-template-update-stack.json');

/** Every file that shapes a template (not the function code: that is the zips'), and the environment variables the services read. */
function templateInputs(): string[] {
  const files = [
    ...SERVICES.map((s) => s.config),
    'esbuild.config.cjs',
    'package.json',
    'functions/scheduled/rates.cjs',
    'functions/scheduled/schedules.ts',
    'layers/tctl/layers.cjs',
    ...fs.readdirSync(path.join(ROOT, 'deploy'), { recursive: true, encoding: 'utf8' }).map((f) => path.join('deploy', f)),
  ];
  return files.filter((f) => fs.statSync(path.join(ROOT, f), { throwIfNoEntry: false })?.isFile()).sort();
}

export function inputsHash(env: NodeJS.ProcessEnv = process.env): string {
  const h = createHash('sha256');
  const vars = new Set<string>();
  for (const f of templateInputs()) {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    h.update(`${f}\0${text}\0`);
    for (const m of text.matchAll(/\$\{env:([A-Za-z0-9_]+)/g)) vars.add(m[1]);
  }
  for (const v of [...vars, 'FLEET_TCTL_LAYER_ARN', 'HDC_STAGE_PARAMS'].sort()) h.update(`${v}=${env[v] ?? ''}\0`);
  return h.digest('hex');
}

const stampPath = (stage: string) => path.join(packageDir(stage), 'inputs.sha256');

/** Is dist/package/<stage> the package of the files as they are now? */
export function isFresh(stage: string, env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    return fs.readFileSync(stampPath(stage), 'utf8').trim() === inputsHash(env) && SERVICES.every((s) => fs.existsSync(templatePath(stage, s.name)));
  } catch {
    return false;
  }
}

function packageOne(stage: string, service: (typeof SERVICES)[number], env: NodeJS.ProcessEnv): Promise<{ service: string; ms: number; output: string }> {
  const started = Date.now();
  const out = path.join(packageDir(stage), service.name);
  fs.rmSync(out, { recursive: true, force: true });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/serverless/bin/serverless.js'), 'package', '--config', service.config, '--stage', stage, '--package', out], {
      cwd: ROOT,
      env: { ...env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', AWS_EC2_METADATA_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ service: service.name, ms: Date.now() - started, output });
      else reject(new Error(`packaging ${service.config} for stage ${stage} failed (exit ${code}):\n${output.trim()}`));
    });
  });
}

/**
 * Package every service for the stage, one after the other (each `serverless package` starts by
 * deleting the repository's .serverless folder, which another one may be writing), then write the stamp.
 */
export async function packageAll(stage: string = SAMPLE_STAGE, env: NodeJS.ProcessEnv = process.env): Promise<Array<{ service: string; ms: number }>> {
  fs.rmSync(stampPath(stage), { force: true });
  const hash = inputsHash(env);
  const done: Array<{ service: string; ms: number }> = [];
  for (const s of SERVICES) done.push(await packageOne(stage, s, env));
  fs.writeFileSync(stampPath(stage), `${hash}\n`);
  return done;
}

/** The stage's package, made now unless a fresh one is there. */
export async function ensurePackaged(stage: string = SAMPLE_STAGE, env: NodeJS.ProcessEnv = process.env): Promise<'reused' | 'packaged'> {
  if (isFresh(stage, env)) return 'reused';
  await packageAll(stage, env);
  return 'packaged';
}

export function readTemplate(stage: string, service: ServiceName): { Resources: Record<string, any>; Outputs?: Record<string, any> } {
  return JSON.parse(fs.readFileSync(templatePath(stage, service), 'utf8'));
}

if (require.main === module) {
  const stage = process.argv[2] ?? SAMPLE_STAGE;
  const started = Date.now();
  packageAll(stage).then(
    (done) => {
      for (const d of done) console.log(`packaged ${d.service} (${(d.ms / 1000).toFixed(1)} s): ${path.relative(ROOT, path.dirname(templatePath(stage, d.service as ServiceName)))}`);
      console.log(`every service packaged for stage ${stage} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
    (e) => {
      console.error((e as Error).message);
      process.exit(1);
    },
  );
}
