import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { ConsoleClient } from '../local/console-client';
import { stackFile, type StackInfo } from '../local/stack';

// npm run bench:signin (with `npm start` running; HDC_STACK_PROFILE=test for the test stack):
// the time of a refused sign-in for an existing account (wrong password) beside one for a name
// that names no account, measured alternately in one run. Both must answer the same 401 in the
// same time (no user-name oracle). Every pair comes from its own loopback address and the
// existing accounts rotate, so no sign-in limit is reached (a slowed account would show ~2 s);
// run it on a freshly started stack.
const profile = (process.env.HDC_STACK_PROFILE as 'dev' | 'test') ?? 'dev';
const stack: StackInfo = JSON.parse(fs.readFileSync(stackFile(profile), 'utf8'));
const ACCOUNTS = ['alice', 'bob', 'vip-victor', 'admin-adam', 'da-dana', 'branch-bea'];
const ROUNDS = Number(process.env.ROUNDS ?? 48); // at most 8 failures per account: below SignIn:MaxFailuresPerAccount
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];

async function timedLogin(address: string, username: string): Promise<{ ms: number; status: number; code: string }> {
  const c = new ConsoleClient(stack.consoleUrl, address);
  await c.antiforgery();
  const t0 = performance.now();
  const r = await c.post('/api/auth/login', { username, password: `wrong-${randomBytes(4).toString('hex')}` });
  return { ms: performance.now() - t0, status: r.status, code: r.body?.code };
}

async function main() {
  // warm-up: cold Lambda workers, directory connections, the stand-in lookup
  for (let i = 0; i < 4; i++) {
    await timedLogin('127.0.5.1', `warmup-nobody-${i}`);
    await timedLogin('127.0.5.2', ACCOUNTS[i % ACCOUNTS.length]);
  }
  const known: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const address = `127.0.6.${i + 1}`;
    const pair = [
      () => timedLogin(address, ACCOUNTS[i % ACCOUNTS.length]).then((r) => ({ ...r, into: known })),
      () => timedLogin(address, `nobody-${randomBytes(4).toString('hex')}`).then((r) => ({ ...r, into: unknown })),
    ];
    if (i % 2) pair.reverse(); // alternate which goes first
    for (const run of pair) {
      const r = await run();
      if (r.status !== 401 || r.code !== 'invalid_credentials') throw new Error(`unexpected answer ${r.status} ${r.code}`);
      r.into.push(r.ms);
    }
  }
  const fmt = (xs: number[]) => `median ${quantile(xs, 0.5).toFixed(1)} ms   p10 ${quantile(xs, 0.1).toFixed(1)}   p90 ${quantile(xs, 0.9).toFixed(1)}`;
  console.log(`samples                 ${known.length} + ${unknown.length} (same answer: 401 invalid_credentials)`);
  console.log(`existing account        ${fmt(known)}`);
  console.log(`unknown name            ${fmt(unknown)}`);
  console.log(`ratio existing/unknown  ${(quantile(known, 0.5) / quantile(unknown, 0.5)).toFixed(2)} (median)`);
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
