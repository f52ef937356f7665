import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { podmanEnv } from '../containers/build';
import { previousRelease } from '../containers/previous-images';

// A self-hosted console instance (console + password service, and the store when it is a
// container of its own) at idle: the resident memory (RSS) of every process of its containers,
// in one run, for this release's images (each container with its SQLite file) and the previous
// release's (DynamoDB Local in its own container, on a Java runtime), both installed by their own
// scripts. Issue 26's target: at most 250 MB for the embedded form.
//   npx tsx bench/instance-memory.ts            (BENCH_TAG=<tag> to use images already built)
//   BENCH_IDLE_SECONDS (default 20): how long each instance idles before it is measured

const ROOT = path.resolve(__dirname, '..');
const env = podmanEnv();
const IDLE_MS = Number(process.env.BENCH_IDLE_SECONDS ?? 20) * 1000;
const TARGET_MB = 250;
const sh = (cmd: string, args: string[], cwd = ROOT) => {
  const r = spawnSync(cmd, args, { env, cwd, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
};
const podman = (...args: string[]) => sh('podman', args);

/** Resident memory of a process and all its descendants, in bytes (/proc, as the kernel counts it). */
function rssTree(pid: number): number {
  let kb = 0;
  const seen = new Set<number>();
  const walk = (p: number) => {
    if (seen.has(p)) return;
    seen.add(p);
    const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
    kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    for (const t of fs.readdirSync(`/proc/${p}/task`)) {
      const children = fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
      for (const c of children ? children.split(/\s+/) : []) walk(Number(c));
    }
  };
  walk(pid);
  return kb * 1024;
}

interface Measured {
  containers: Array<{ name: string; bytes: number }>;
  total: number;
}

async function measureInstance(label: string, scripts: string, tag: string, name: string, port: number): Promise<Measured> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hdc-bench-${name}-`));
  const roles = ['console', 'password-service', 'db'];
  const remove = () => roles.forEach((r) => spawnSync('podman', ['rm', '-f', '-t', '2', `${name}-${r}`], { env, stdio: 'ignore' }));
  remove();
  try {
    process.stdout.write(`[bench] installing ${label} (${tag})\n`);
    sh('bash', [path.join(scripts, 'install.sh'), '--instance', dir, '--version', tag, '--name', name, '--port', String(port), '--network', 'host', '--bind', '127.0.0.1']);
    // a few requests, as a probe and a browser would make, then idle
    for (const p of ['/health/ready', '/health/live', '/api/auth/me', '/api/auth/antiforgery', '/']) await fetch(`http://127.0.0.1:${port}${p}`).then((r) => r.arrayBuffer(), () => undefined);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const containers = roles
      .map((r) => `${name}-${r}`)
      .filter((c) => spawnSync('podman', ['container', 'exists', c], { env }).status === 0)
      .map((c) => ({ name: c.slice(name.length + 1), bytes: rssTree(Number(podman('inspect', '-f', '{{.State.Pid}}', c).trim())) }));
    return { containers, total: containers.reduce((s, c) => s + c.bytes, 0) };
  } finally {
    remove();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const line = (m: Measured) => `${m.containers.map((c) => `${c.name} ${mb(c.bytes)}`).join(' + ')} = ${mb(m.total)}`;

async function main() {
  let tag = process.env.BENCH_TAG;
  if (!tag) {
    tag = 'bench';
    process.stdout.write('[bench] building this release\'s images\n');
    sh(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'containers/build.ts'), tag, 'hdc-console', 'hdc-password-service']);
  }
  const prev = previousRelease(undefined, (l) => process.stdout.write(`[bench] previous images: ${l}\n`));
  const now = await measureInstance('this release: SQLite in each container', path.join(ROOT, 'containers/scripts'), tag, 'hdcbench', 18843);
  const before = await measureInstance('previous release: DynamoDB Local container', prev.scripts, prev.tag, 'hdcbenchprev', 18943);
  process.stdout.write(
    [
      '',
      `self-hosted console instance at idle (${IDLE_MS / 1000} s after start), resident memory of its containers' processes:`,
      `  embedded store (this release)     ${line(now)}   target <= ${TARGET_MB} MB: ${now.total <= TARGET_MB * 1024 * 1024 ? 'met' : 'NOT MET'}`,
      `  DynamoDB Local (previous images)  ${line(before)}`,
      `  ratio embedded / previous: ${(now.total / before.total).toFixed(2)}`,
      '',
    ].join('\n'),
  );
}

main().catch((e) => {
  console.error(`[bench] failed: ${(e as Error).message}`);
  process.exit(1);
});
