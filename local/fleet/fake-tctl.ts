import fs from 'node:fs';
import path from 'node:path';

// Helpers around the fake cluster CLI (local/fleet/tctl) for the local stack and the tests.

export const FAKE_TCTL_PATH = path.join(__dirname, 'tctl');
export const FIXTURES_DIR = path.join(__dirname, 'fixtures');
export const FIXTURE_NOW = '2026-11-21T12:00:00Z';

export interface FakeTctlControl {
  fail?: Array<{ match: string; error: 'expired' | 'denied' | 'unavailable' | 'missing' | 'garbage' | 'timeout' }>;
  lockPending?: number;
  stderrNotice?: string;
  /** the identity's roles for this test (role objects), instead of the shipped identity role */
  roles?: unknown[];
}

/**
 * The optional role that lets the fleet plane read the managed-update singletons for
 * GET /api/access/autoupdate: beyond the spec's identity role (docs/fleet.md), for tests of that view.
 */
export const AUTOUPDATE_READER = {
  kind: 'role',
  version: 'v7',
  metadata: { name: 'fleet-plane-autoupdate-reader' },
  spec: { allow: { rules: [{ resources: ['autoupdate_config', 'autoupdate_version', 'autoupdate_agent_rollout'], verbs: ['list', 'read'] }] }, deny: {} },
};

/** A fresh writable copy of the fixtures (optionally from another fixtures directory). */
export function resetFakeTctl(dir: string, fixturesDir = FIXTURES_DIR): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.json')) fs.rmSync(path.join(dir, f));
  for (const f of fs.readdirSync(fixturesDir)) if (f.endsWith('.json')) fs.copyFileSync(path.join(fixturesDir, f), path.join(dir, f));
}

export function setFakeTctlControl(dir: string, control: FakeTctlControl): void {
  fs.writeFileSync(path.join(dir, 'control.json'), JSON.stringify(control));
}

export interface LoggedCommand {
  at: string;
  argv: string[];
}

export function readCommandLog(logFile: string): LoggedCommand[] {
  if (!fs.existsSync(logFile)) return [];
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LoggedCommand);
}

/** argv without the global connection flags, e.g. ['lock', '--server-id=...', ...]. */
export function commandOf(c: LoggedCommand): string[] {
  const out: string[] = [];
  for (let i = 0; i < c.argv.length; i++) {
    const a = c.argv[i];
    if (a === '-i' || a === '--identity' || a === '--auth-server') i++;
    else if (!a.startsWith('--auth-server=')) out.push(a);
  }
  return out;
}

export function fakeTctlEnv(dir: string, logFile: string): Record<string, string> {
  return { TCTL_PATH: FAKE_TCTL_PATH, FAKE_TCTL_DIR: dir, FAKE_TCTL_LOG: logFile, FAKE_TCTL_FIXTURE_NOW: FIXTURE_NOW };
}
