import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Runs a generated shell script where nothing real can happen, and records what it ran:
// - PATH is one directory of stand-ins (podman, curl, systemctl, install, ...): each appends its
//   argv to a log and does nothing (a few harmless ones, such as dirname, also do their job);
// - a command found nowhere is recorded too (command_not_found_handle, from BASH_ENV);
// - every simple command bash runs, builtins included, is recorded as its text before expansion
//   (a DEBUG trap, from BASH_ENV).
// The log format is argc, NUL, then each argument and a NUL: arguments cannot hold a NUL.

export const SHELLCHECK = '/usr/bin/shellcheck';

const RECORDED = ['podman', 'curl', 'sha256sum', 'systemctl', 'install', 'touch', 'rm', 'reboot', 'id', 'chmod', 'chown', 'mv', 'cp', 'wget', 'sh', 'bash', 'sudo', 'tee', 'ln', 'mkdir', 'tctl', 'teleport', 'echo-ext'];
const PASS_THROUGH = ['dirname', 'basename'];

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  /** argv of every stand-in or unknown command, in order (argv[0] the command's name) */
  commands: string[][];
  /** the text of every simple command bash ran (its DEBUG trap) */
  steps: string[];
  /** files the script created in its working directory */
  created: string[];
}

function parseLog(file: string): string[][] {
  if (!fs.existsSync(file)) return [];
  const parts = fs.readFileSync(file, 'latin1').split('\0');
  const out: string[][] = [];
  let i = 0;
  while (i < parts.length - 1) {
    const n = Number(parts[i++]);
    out.push(parts.slice(i, i + n).map((p) => Buffer.from(p, 'latin1').toString('utf8')));
    i += n;
  }
  return out;
}

export class ScriptSandbox {
  readonly root: string;
  readonly bin: string;
  readonly work: string;
  private readonly log: string;
  private readonly steps: string;
  private readonly env: string;

  constructor() {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-script-'));
    this.bin = path.join(this.root, 'bin');
    this.work = path.join(this.root, 'work');
    this.log = path.join(this.root, 'commands.log');
    this.steps = path.join(this.root, 'steps.log');
    this.env = path.join(this.root, 'bash-env.sh');
    fs.mkdirSync(this.bin);
    // -p: the stand-in itself reads no BASH_ENV
    const recorder = ['#!/bin/bash -p', `{ printf '%s\\0' "$(( $# + 1 ))" "\${0##*/}"; for a in "$@"; do printf '%s\\0' "$a"; done; } >> "$HDC_SANDBOX_LOG"`, 'exit 0', ''].join('\n');
    for (const name of RECORDED) fs.writeFileSync(path.join(this.bin, name), recorder, { mode: 0o755 });
    for (const name of PASS_THROUGH) {
      const real = execFileSync('/bin/bash', ['-c', `type -P ${name}`], { encoding: 'utf8' }).trim();
      fs.writeFileSync(path.join(this.bin, name), `${recorder.replace('exit 0', `exec ${real} "$@"`)}`, { mode: 0o755 });
    }
    fs.writeFileSync(
      this.env,
      [
        'command_not_found_handle() {',
        `  { printf '%s\\0' "$#"; for a in "$@"; do printf '%s\\0' "$a"; done; } >> "$HDC_SANDBOX_LOG"`,
        '  return 127',
        '}',
        `trap 'printf "%s\\0" "$BASH_COMMAND" >> "$HDC_SANDBOX_STEPS"' DEBUG`,
        '',
      ].join('\n'),
    );
  }

  /** A fresh working directory (the script's cwd) with these files (mode 0755 for `exec: true`). */
  reset(files: Record<string, { content: string; exec?: boolean }> = {}) {
    fs.rmSync(this.work, { recursive: true, force: true });
    fs.rmSync(this.log, { force: true });
    fs.rmSync(this.steps, { force: true });
    fs.mkdirSync(this.work);
    for (const [name, f] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(this.work, name)), { recursive: true });
      fs.writeFileSync(path.join(this.work, name), f.content, { mode: f.exec ? 0o755 : 0o644 });
    }
  }

  /** A stand-in script at `name` in the working directory that records its argv (e.g. an instance's upgrade.sh). */
  recorderFile(name: string) {
    fs.writeFileSync(path.join(this.work, name), fs.readFileSync(path.join(this.bin, 'podman')), { mode: 0o755 });
  }

  run(script: string, args: string[] = [], input = ''): Run {
    const file = path.join(this.root, 'script.sh');
    fs.writeFileSync(file, script, { mode: 0o755 });
    const before = new Set(fs.readdirSync(this.work));
    const r = spawnSync('/bin/bash', [file, ...args], {
      cwd: this.work,
      input,
      encoding: 'utf8',
      timeout: 20_000,
      env: { PATH: this.bin, HOME: this.work, BASH_ENV: this.env, HDC_SANDBOX_LOG: this.log, HDC_SANDBOX_STEPS: this.steps, LANG: 'C.UTF-8' },
    });
    const steps = fs.existsSync(this.steps) ? fs.readFileSync(this.steps, 'utf8').split('\0').slice(0, -1) : [];
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, commands: parseLog(this.log), steps, created: fs.readdirSync(this.work).filter((f) => !before.has(f)) };
  }

  dispose() {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** `bash -n`: the script parses. */
export function bashParses(script: string): { ok: boolean; stderr: string } {
  const r = spawnSync('/bin/bash', ['-n'], { input: script, encoding: 'utf8' });
  return { ok: r.status === 0, stderr: r.stderr };
}

/** shellcheck's findings (JSON), or a thrown error when shellcheck is not installed: a missing tool must fail the test, never skip it. */
export function shellcheck(script: string, opts: { exclude?: string[] } = {}): Array<{ code: number; message: string; line: number; level: string }> {
  if (!fs.existsSync(SHELLCHECK)) throw new Error(`${SHELLCHECK} is missing: install shellcheck (apt-get install -y shellcheck); these tests do not skip`);
  const exclude = opts.exclude?.length ? [`--exclude=${opts.exclude.join(',')}`] : [];
  const r = spawnSync(SHELLCHECK, ['--shell=bash', '--format=json', ...exclude, '-'], { input: script, encoding: 'utf8' });
  if (r.error) throw r.error;
  return JSON.parse(r.stdout || '[]');
}
