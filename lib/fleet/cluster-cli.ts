import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { ApiError } from '../errors';
import { logger } from '../log';
import type { FleetConfig } from './config';
import { processEnvironment } from '../config/environment';

// The cluster CLI (tctl) is the fleet plane's only way into the access platform: every read and
// lock goes through it with JSON output. Arguments are passed as an argv array (no shell).

export type CliErrorCode = 'access_credentials_expired' | 'access_access_denied' | 'access_unavailable';

/** A failed tctl run, mapped to the spec's codes (502); `missing` marks "doesn't exist"/"not found". */
export class ClusterCliError extends ApiError {
  constructor(
    code: CliErrorCode,
    readonly missing = false,
    /** `tctl create` without --force of a resource that exists (`<kind> "<name>" already exists`) */
    readonly exists = false,
  ) {
    super(502, code);
  }
}

const ANSI = /\x1b\[[0-9;]*m/g;

/** Map tctl's stderr (COMMANDS.md §7) to a stable code. Unknown failures are `access_unavailable`. */
export function classifyCliFailure(stderr: string): { code: CliErrorCode; missing: boolean } {
  const text = stderr.replace(ANSI, '');
  if (/your credentials have expired|certificate has expired|tls: expired certificate/i.test(text)) return { code: 'access_credentials_expired', missing: false };
  if (/access denied/i.test(text)) return { code: 'access_access_denied', missing: false };
  if (/doesn't exist|not found/i.test(text)) return { code: 'access_unavailable', missing: true };
  return { code: 'access_unavailable', missing: false };
}

export interface CliRun {
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** written to tctl's standard input (e.g. the resource of `tctl create`: never on the command line) */
  input?: string;
  /** secrets in the arguments (a join token): never written to a log line, even inside tctl's error text */
  redact?: string[];
}

export interface ClusterCli {
  run(args: string[], opts?: CliRunOptions): Promise<CliRun>;
}

const redacted = (text: string, secrets: string[] = []) => secrets.filter(Boolean).reduce((t, s) => t.split(s).join('[redacted]'), text);

export class Tctl implements ClusterCli {
  constructor(private readonly cfg: Pick<FleetConfig, 'TCTL_PATH' | 'TCTL_TIMEOUT_MS' | 'ACCESS_AUTH_SERVER' | 'ACCESS_IDENTITY_FILE' | 'ACCESS_MACHINE_ID_IDENTITY'>) {}

  private globalArgs(): string[] {
    const identity = this.cfg.ACCESS_IDENTITY_FILE ?? this.cfg.ACCESS_MACHINE_ID_IDENTITY;
    return [...(this.cfg.ACCESS_AUTH_SERVER ? [`--auth-server=${this.cfg.ACCESS_AUTH_SERVER}`] : []), ...(identity ? ['-i', identity] : [])];
  }

  run(args: string[], opts: CliRunOptions = {}): Promise<CliRun> {
    // Machine ID: a missing identity means the bot stopped renewing it
    if (this.cfg.ACCESS_MACHINE_ID_IDENTITY && !fs.existsSync(this.cfg.ACCESS_MACHINE_ID_IDENTITY)) {
      return Promise.reject(new ClusterCliError('access_credentials_expired'));
    }
    const argv = [...this.globalArgs(), ...args];
    return new Promise((resolve, reject) => {
      const child = execFile(this.cfg.TCTL_PATH, argv, { timeout: this.cfg.TCTL_TIMEOUT_MS, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8', env: processEnvironment() }, (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr }); // stderr with exit 0 carries cluster alerts, not a failure
        const { code, missing } = classifyCliFailure(String(stderr ?? ''));
        logger.warn('cluster CLI failed', { command: args.slice(0, 2).join(' '), code, exit: (err as NodeJS.ErrnoException).code, stderr: redacted(String(stderr ?? '').replace(ANSI, ''), opts.redact).slice(0, 500) });
        reject(new ClusterCliError(code, missing, /already exists/i.test(String(stderr ?? ''))));
      });
      if (opts.input !== undefined) {
        child.stdin?.on('error', () => undefined); // tctl may exit before reading (its error is the answer)
        child.stdin?.end(opts.input);
      }
    });
  }
}

/** Parse tctl's JSON list output; anything but an array means the CLI cannot read the cluster. */
export function parseJsonArray(stdout: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    throw new ClusterCliError('access_unavailable');
  }
  if (!Array.isArray(v)) throw new ClusterCliError('access_unavailable');
  return v;
}

/**
 * Run several CLI reads in parallel and wait for every one to end before failing with the first
 * error: no tctl process outlives the request that started it (Promise.all would return early).
 */
export async function allCliReads<T extends readonly unknown[]>(reads: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(reads as readonly Promise<unknown>[]);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

export async function getResources(cli: ClusterCli, kind: string): Promise<unknown[]> {
  return parseJsonArray((await cli.run(['get', kind, '--format=json'])).stdout);
}

export async function getInventory(cli: ClusterCli): Promise<unknown[]> {
  return parseJsonArray((await cli.run(['inventory', 'ls', '--format=json'])).stdout);
}
