import fs from 'node:fs';
import path from 'node:path';
import * as OTPAuth from 'otpauth';
import { AuditChain, type AuditRow } from '../../lib/audit';
import { storeOfEnvironment, type Store } from '../../lib/store';
import { ConsoleClient } from '../../local/console-client';
import { RUN_DIR } from '../../local/processes';
import { stackFile, type StackInfo } from '../../local/stack';

// What the integration tests know about the running stack (started by npm test).
export const profile = (process.env.HDC_STACK_PROFILE as 'dev' | 'test') ?? 'test';
export const stack: StackInfo = JSON.parse(fs.readFileSync(stackFile(profile), 'utf8'));
/** the console's store (the stack's: its SQLite file, or DynamoDB Local's table) */
export const store = storeOfEnvironment(stack.stores.console);
/** the password service's own store (its own SQLite file; on DynamoDB the table it shares with the console, as in AWS) */
export const serviceStore = stack.storeKind === 'sqlite' ? storeOfEnvironment(stack.stores.passwordService) : store;

/** The environment naming a store of a test's own, beside the stack's (a fresh SQLite file, or a fresh table on DynamoDB Local). */
export function scratchStoreEnv(name: string): Record<string, string> {
  const unique = `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  if (stack.storeKind === 'dynamodb') return { DYNAMODB_ENDPOINT: stack.dynamodbEndpoint!, HDC_TABLE: unique };
  const dir = path.join(RUN_DIR, 'scratch');
  fs.mkdirSync(dir, { recursive: true });
  return { HDC_SQLITE_FILE: path.join(dir, `${unique}.sqlite`) };
}
/** A store of a test's own (see scratchStoreEnv). */
export const scratchStore = (name: string): Store => storeOfEnvironment(scratchStoreEnv(name));
export const audit = new AuditChain(store, 'console');

export const account = (username: string) => {
  const a = stack.accounts.find((x) => x.username === username);
  if (!a) throw new Error(`no seeded account ${username}`);
  return a;
};
export const seedUser = (username: string) => {
  const u = stack.directory.users.find((x) => x.username === username);
  if (!u) throw new Error(`no seeded user ${username}`);
  return u;
};

// An authenticator code is accepted once (replay protection), so the tests keep, per operator,
// the last time step they used in a file shared by all test files of the run.
const stepsFile = path.join(RUN_DIR, `totp-steps.${profile}.json`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function nextCode(username: string, secret = account(username).totpSecret!): Promise<string> {
  const used: Record<string, number> = fs.existsSync(stepsFile) ? JSON.parse(fs.readFileSync(stepsFile, 'utf8')) : {};
  const now = Math.floor(Date.now() / 30000);
  const step = Math.max(now, (used[username] ?? -1) + 1);
  if (step > now + 1) await sleep((step - 1) * 30000 - Date.now() + 200); // the verifier accepts one step ahead
  used[username] = step;
  fs.writeFileSync(stepsFile, JSON.stringify(used));
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: step * 30000 });
}

export const newClient = () => new ConsoleClient(stack.consoleUrl);

const sessionsFile = path.join(RUN_DIR, `sessions.${profile}.json`);
/** the code step-ups steppedUp made: per operator, the session (its cookie) and the step-up's time */
const stepUpsFile = path.join(RUN_DIR, `stepups.${profile}.json`);

/**
 * A signed-in client for a seeded operator (password + authenticator code when it has one).
 * Sessions are reused across test files (an authenticator code is single-use, so each new
 * sign-in of the same operator may wait for the next 30 s step); `fresh` forces a new one.
 */
export async function signedIn(username: string, opts: { fresh?: boolean } = {}): Promise<ConsoleClient> {
  const saved: Record<string, { cookie: string; csrf: string }> = fs.existsSync(sessionsFile) ? JSON.parse(fs.readFileSync(sessionsFile, 'utf8')) : {};
  if (!opts.fresh && saved[username]) {
    const c = newClient();
    c.setCookie('__Host-hdc', saved[username].cookie);
    c.csrf = saved[username].csrf;
    if ((await c.get('/api/auth/me')).status === 200) return c;
  }
  const c = await signInNow(username);
  saved[username] = { cookie: c.cookie('__Host-hdc')!, csrf: c.csrf! };
  fs.writeFileSync(sessionsFile, JSON.stringify(saved), { mode: 0o600 });
  return c;
}

async function signInNow(username: string): Promise<ConsoleClient> {
  const a = account(username);
  const c = newClient();
  const r = await c.login(username, a.password, a.totpSecret ? await nextCode(username) : undefined);
  if (r.status !== 200) throw new Error(`sign-in of ${username} failed: ${r.status} ${r.text}`);
  return c;
}

/** The sequence number of the newest audit row (rows after it belong to the test). */
export async function auditMark(): Promise<number> {
  for await (const row of audit.rows({ reverse: true })) return row.seq;
  return 0;
}
export async function auditSince(mark: number): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  for await (const row of audit.rows({ afterSeq: mark })) rows.push(row);
  return rows;
}

/** Every LAPS password of the seeded directory (they all carry the marker LAPS-CANARY-). */
export const lapsCanaries = (): string[] =>
  stack.directory.computers.flatMap((c) => [(c as { lapsPassword?: string }).lapsPassword, (c as { lapsLegacyPassword?: string }).lapsLegacyPassword]).filter((p): p is string => !!p);

/** The seeded BitLocker recovery passwords (issue 33; seed.json computers[].bitlocker): canaries like the LAPS ones. */
export const bitlockerCanaries = (): string[] =>
  stack.directory.computers.flatMap((c) => ((c as { bitlocker?: Array<{ password: string }> }).bitlocker ?? []).map((k) => k.password));

/** A signed-in client with a recent step-up (reused while it is younger than 200 s). */
export async function steppedUp(username: string): Promise<ConsoleClient> {
  const c = await signedIn(username);
  // reused only when this helper stepped this very session up by code: a session another test
  // stepped up (a passkey's window serves no LAPS reveal) or signed in afresh gets a code now
  const codeStepUps: Record<string, { cookie: string; at: number }> = fs.existsSync(stepUpsFile) ? JSON.parse(fs.readFileSync(stepUpsFile, 'utf8')) : {};
  const mine = codeStepUps[username];
  const me = await c.get('/api/auth/me');
  if (mine !== undefined && mine.cookie === c.cookie('__Host-hdc') && me.body?.stepUpAt && Date.parse(me.body.stepUpAt) === mine.at && Date.now() - mine.at < 200_000) return c;
  const r = await c.post('/api/auth/reauth', { code: await nextCode(username) });
  if (r.status !== 200) throw new Error(`step-up of ${username}: ${r.status} ${r.text}`);
  const after = (await c.get('/api/auth/me')).body?.stepUpAt;
  if (after) {
    codeStepUps[username] = { cookie: c.cookie('__Host-hdc')!, at: Date.parse(after) };
    fs.writeFileSync(stepUpsFile, JSON.stringify(codeStepUps), { mode: 0o600 });
  }
  return c;
}

/**
 * A code step-up of this client (a test's own session), at most once per 200 s per session: a
 * test that files and approves in turn keeps its clients' windows open. Kept per client, since a
 * step-up belongs to a session: a fresh session of the same operator is not stepped up.
 */
const codeStepUpAt = new WeakMap<ConsoleClient, number>();
export async function stepUpByCode(c: ConsoleClient, username: string): Promise<void> {
  if (Date.now() - (codeStepUpAt.get(c) ?? 0) < 200_000) return;
  const r = await c.post('/api/auth/reauth', { code: await nextCode(username) });
  if (r.status !== 200) throw new Error(`step-up of ${username}: ${r.status} ${r.text}`);
  codeStepUpAt.set(c, Date.now());
}
