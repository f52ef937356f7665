import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as OTPAuth from 'otpauth';
import { podmanEnv } from '../../containers/build';
import type { Store } from '../../lib/store';
import { readSqliteCopy } from '../../lib/store/sqlite';
import { RUN_DIR } from '../../local/processes';

// What the container tests share: podman with this machine's settings, the images built once per
// run (every file of the containers project runs in one jest process: --runInBand), containers and
// networks of a test's own prefix, a TCP forwarder, authenticator codes.

export const ROOT = path.resolve(__dirname, '../..');
export const SCRIPTS = path.join(ROOT, 'containers/scripts');
export const env = podmanEnv();
export const podmanWorks = spawnSync('podman', ['info'], { env, stdio: 'ignore' }).status === 0;
if (!podmanWorks) console.warn('[containers] podman cannot run on this machine: the container tests are skipped (apt-get install podman runc)');
export const describeWithPodman = podmanWorks ? describe : describe.skip;
/** the tag of this run's images (a second tag of the same build stands for "the newer version") */
export const TAG_A = 'ct-a';
export const TAG_B = 'ct-b';

export const sh = (cmd: string, args: string[], opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}) => {
  const r = spawnSync(cmd, args, { env: { ...env, ...opts.env }, encoding: 'utf8', cwd: opts.cwd, input: opts.input, timeout: opts.timeout ?? 300_000 });
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stdout: r.stdout ?? '' };
};
export const podman = (...args: string[]) => sh('podman', args);
/** `sh` without blocking this process: servers of the test itself (a DNS API stand-in) keep answering meanwhile. */
export const shAsync = (cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}) =>
  new Promise<{ code: number | null; out: string; stdout: string }>((resolve) => {
    const child = spawn(cmd, args, { env: { ...env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let out = '';
    child.stdout.on('data', (d) => ((stdout += d), (out += d)));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out, stdout }));
  });

/** Every item of a store (a scan, page by page). */
export async function allItems(store: Store): Promise<Array<Record<string, any>>> {
  const items: Array<Record<string, any>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.scan({ ExclusiveStartKey: start });
    items.push(...page.Items);
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The items of a SQLite copy, read from a private copy of it (a reader of a WAL-mode file writes its index beside it). */
export function itemsOfCopy(file: string) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-copy-'));
  try {
    fs.copyFileSync(file, path.join(scratch, 'copy.sqlite'));
    return readSqliteCopy(path.join(scratch, 'copy.sqlite'));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The images of this run (console, password service, fleet) at TAG_A and TAG_B, built once per jest process. */
export function ensureImages(): void {
  const marker = path.join(RUN_DIR, `container-images.${process.pid}`);
  // HDC_IMAGES_BUILT=1: reuse the images of a previous run (developing the scripts)
  if (process.env.HDC_IMAGES_BUILT === '1' || fs.existsSync(marker)) return;
  const built = sh(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'containers/build.ts'), TAG_A], { cwd: ROOT, timeout: 600_000 });
  console.log(built.out.split('\n').filter((l) => l.startsWith('[images]') || /MB|GB/.test(l)).join('\n'));
  if (built.code !== 0) throw new Error(`the images were not built:\n${built.out.slice(-2000)}`);
  for (const i of ['hdc-console', 'hdc-password-service', 'hdc-fleet']) {
    const t = podman('tag', `localhost/${i}:${TAG_A}`, `localhost/${i}:${TAG_B}`);
    if (t.code !== 0) throw new Error(t.out);
  }
  fs.mkdirSync(RUN_DIR, { recursive: true });
  fs.writeFileSync(marker, new Date().toISOString());
}

/** Containers named `<prefix>-<role>`: each removed on its own (podman 4.3 given one missing name among several removes none). */
export const removeContainers = (prefix: string, ...roles: string[]) => roles.forEach((r) => podman('rm', '-f', '-t', '2', `${prefix}-${r}`));
export const running = (prefix: string) =>
  podman('ps', '--filter', `name=^${prefix}-`, '--format', '{{.Names}} {{.ID}} {{.Image}}')
    .out.trim()
    .split('\n')
    .filter(Boolean)
    .sort();
export const names = (prefix: string) => running(prefix).map((l) => l.split(' ')[0]);
/** Networks of the test's own prefix only (never another's). */
export function removeNetworks(prefix: string) {
  for (const n of podman('network', 'ls', '--format', '{{.Name}}').out.split('\n').filter((x) => x.startsWith(`${prefix}-`))) podman('network', 'rm', '-f', n);
}

export const mode = (file: string) => {
  const s = fs.statSync(file);
  return [(s.mode & 0o777).toString(8), s.uid];
};

// an authenticator code is accepted once: each code of a run from its own, later time step
const lastStep: Record<string, number> = {};
export async function nextCode(username: string, secret: string): Promise<string> {
  const now = Math.floor(Date.now() / 30000);
  const step = Math.max(now, (lastStep[username] ?? -1) + 1);
  if (step > now + 1) await new Promise((r) => setTimeout(r, (step - 1) * 30000 - Date.now() + 200));
  lastStep[username] = step;
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: step * 30000 });
}

/** A TCP forwarder on `listen` to `target` (the DCs answer on this host's loopback only). */
export async function forwarder(listen: { host: string; port: number }, target: { host: string; port: number }): Promise<{ close(): Promise<void>; connections: number }> {
  const sockets = new Set<net.Socket>();
  const state = { connections: 0 };
  const server = net.createServer((client) => {
    state.connections++;
    const upstream = net.connect(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  return {
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * What a probe of the password service's port asks (Lambda's invoke API, for a function that does
 * not exist) and how its answer is read: 'answered' only when the password service's own gateway
 * answered (`Function not found`); 'other-http' when something else answered over HTTP (a
 * sandbox's egress proxy answers any address routed out, e.g. 404 from `server: keryx`); 'no-http'
 * for a connection without an HTTP answer; otherwise the error ('ECONNREFUSED', 'ENETUNREACH',
 * 'ETIMEDOUT'). Neither a TCP connection nor any HTTP answer proves the service was reached.
 */
export const SERVICE_PROBE_REQUEST = 'GET /2015-03-31/functions/isolation-probe/invocations HTTP/1.0\r\n\r\n';
export const probeVerdict = (answer: string) => (!/^HTTP\/1\.[01] \d{3}/.test(answer) ? 'no-http' : answer.includes('Function not found') ? 'answered' : 'other-http');

/** From a one-off container of `image` on `network`, probe `host:port` (SERVICE_PROBE_REQUEST, probeVerdict). */
export function httpProbe(image: string, network: string, host: string, port: number): string {
  const script = `const s=require('net').connect({host:${JSON.stringify(host)},port:${port},timeout:3000},()=>s.write(${JSON.stringify(SERVICE_PROBE_REQUEST)}));let b='';const v=${probeVerdict.toString()};s.on('data',d=>b+=d);s.on('end',()=>{console.log(v(b));process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)});s.on('timeout',()=>{console.log(b?v(b):'ETIMEDOUT');process.exit(0)})`;
  const r = podman('run', '--rm', '--network', network, '--entrypoint', '/usr/local/bin/node', image, '-e', script);
  return r.stdout.trim().split('\n').pop() ?? r.out;
}
