import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bundleProcess } from '../containers/build';
import { ConsoleClient } from '../local/console-client';
import { environOfRecorded, RUN_DIR } from '../local/processes';
import type { StackInfo } from '../local/stack';

// The self-hosted path of the benches (bench/laps, bench/load): the container images' two
// processes (the gateway in front of the same handlers, bundled as in the images) started on the
// host against the running `npm start` stack's store and directory, with the environment
// serverless-offline gives the console and the password service.

export const GATEWAY_DIR = path.join(RUN_DIR, 'bench-gateway');
export const GATEWAY_PORTS = { console: 3500, service: 3504 };

/** The environment of a running stack process (the gateway processes get the same as serverless-offline's). */
export const environOf = (name: string) => environOfRecorded(`dev-${name}`);

export interface Gateways {
  url: string;
  logs: { console: string; service: string };
  pids: { console?: number; service?: number };
  stop: () => void;
}

export async function startGateways(stack: StackInfo, opts: { env?: Record<string, string> } = {}): Promise<Gateways> {
  const bundle = (name: string, role: string) => bundleProcess(name, path.join(GATEWAY_DIR, role), path.join(GATEWAY_DIR, `${role}.js`), path.resolve(__dirname, '..'));
  await bundle('hdc-console', 'console');
  await bundle('hdc-password-service', 'password-service');
  const common = { HDC_LISTEN: '127.0.0.1', HDC_SCHEDULER: 'off', HDC_CREATE_TABLE: 'false', ...opts.env };
  const logs = { console: path.join(GATEWAY_DIR, 'console.log'), service: path.join(GATEWAY_DIR, 'password-service.log') };
  // BENCH_CPU_PROFILE=1: each process writes a V8 CPU profile into GATEWAY_DIR when it stops
  const profile = process.env.BENCH_CPU_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${GATEWAY_DIR}`] : [];
  const start = (role: string, env: Record<string, string>, log: string) => {
    const out = fs.openSync(log, 'w'); // one descriptor for both streams: neither overwrites the other's lines
    return spawn(process.execPath, [...profile, path.join(GATEWAY_DIR, `${role}.js`)], { env, stdio: ['ignore', out, out] });
  };
  const service = start('password-service', { ...environOf('password-service'), ...common, HDC_PORT: String(GATEWAY_PORTS.service) }, logs.service);
  const consoleProc = start(
    'console',
    { ...environOf('offline'), ...common, HDC_PORT: String(GATEWAY_PORTS.console), HDC_LAMBDA_ENDPOINT: `http://127.0.0.1:${GATEWAY_PORTS.service}`, HDC_PASSWORD_SERVICE_FUNCTION: stack.passwordServiceFunction },
    logs.console,
  );
  const stop = () => {
    service.kill();
    consoleProc.kill();
  };
  const url = `http://127.0.0.1:${GATEWAY_PORTS.console}`;
  for (let i = 0; ; i++) {
    const up = await new ConsoleClient(url).get('/health/live').then((r) => r.status === 200, () => false);
    if (up) break;
    if (i > 100) {
      stop();
      throw new Error(`the gateway processes did not start (see ${GATEWAY_DIR}/*.log)`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, logs, pids: { console: consoleProc.pid, service: service.pid }, stop };
}
