import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// Faults of the local test directory's DCs, for the failover tests and bench/load (issue 28):
// a DC frozen (SIGSTOP on every samba process of it: TCP still accepted, nothing answered) and a
// DC killed (SIGKILL). The DCs are shared by every stack on this machine: take /tmp/hdc-stack.lock
// around anything that freezes or kills one (docs/local-directory.md). Each freeze is undone by
// `thaw()`, and by a detached watchdog that wakes the DC even if the caller dies.

const DC_SH = path.resolve(__dirname, 'dc.sh');
export const dcSh = (...args: string[]) => execFileSync('bash', [DC_SH, ...args], { stdio: 'pipe' });

/** PIDs of a DC's samba processes: its root process (dc.sh status), its process group and its process tree. */
export function dcProcesses(name: string): number[] {
  const root = (JSON.parse(dcSh('status').toString()) as { dcs: Array<{ name: string; pid: number | null }> }).dcs.find((d) => d.name === name)?.pid;
  if (!root) throw new Error(`${name} is not running`);
  const stat = (pid: number) => {
    try {
      const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      return { ppid: Number(f[1]), pgid: Number(f[2]) };
    } catch {
      return undefined;
    }
  };
  const pgid = stat(root)!.pgid;
  const all = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  const out = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      const st = stat(p);
      if (st && !out.has(p) && (st.pgid === pgid || out.has(st.ppid))) {
        out.add(p);
        grew = true;
      }
    }
  }
  return [...out];
}

/** Send `signal` to every process of the DC; twice, since samba forks short-lived workers (one may exit between the listing and the signal, one may be forked meanwhile). */
function signalDc(name: string, signal: NodeJS.Signals): number[] {
  const pids: number[] = [];
  for (let round = 0; round < 2; round++) {
    let procs: number[];
    try {
      procs = dcProcesses(name);
    } catch (e) {
      // after a first round of SIGKILL the DC may be gone altogether: nothing left to signal, not
      // an error (bench/load logged "dc1 killed failed: dc1 is not running" for a kill that happened)
      if (round === 0) throw e;
      procs = [];
    }
    for (const p of procs) {
      if (pids.includes(p)) continue;
      try {
        process.kill(p, signal);
        pids.push(p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
      }
    }
  }
  return pids;
}

export interface FrozenDc {
  pids: number[];
  thaw(): void;
}

/** Freeze a DC (SIGSTOP); a watchdog sends SIGCONT after `watchdogSeconds` whatever happens to the caller. */
export function freezeDc(name: string, watchdogSeconds = 180): FrozenDc {
  const pids = signalDc(name, 'SIGSTOP');
  const watchdog = spawn('sh', ['-c', `sleep ${watchdogSeconds}; kill -CONT ${pids.join(' ')} 2>/dev/null`], { detached: true, stdio: 'ignore' });
  watchdog.unref();
  let thawed = false;
  return {
    pids,
    thaw() {
      if (thawed) return;
      thawed = true;
      for (const p of pids) {
        try {
          process.kill(p, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
      try {
        process.kill(-watchdog.pid!, 'SIGTERM');
      } catch {
        /* done already */
      }
    },
  };
}

/** Kill a DC outright (SIGKILL to every process of it); `dcSh('start', name)` brings it back. */
export function killDc(name: string): void {
  signalDc(name, 'SIGKILL');
}
