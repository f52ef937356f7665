import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'ldapts';
import { loadConfig } from '../lib/config';
import { lapsWindow } from '../lib/password-service/service-side/service';
import { windowKey } from '../lib/store/window';
import { storeOfEnvironment } from '../lib/store';
import * as OTPAuth from 'otpauth';
import { ConsoleClient } from '../local/console-client';
import { RUN_DIR } from '../local/processes';
import { startGateways } from './gateway';
import { stackFile, type StackInfo } from '../local/stack';

// npm run bench:laps (with `npm start` running): the LAPS reveal round trip (browser → console →
// password service over the signed link → directory → back) beside a raw ldapts read of the same
// attribute (LDAPS connect, bind as the LAPS account, read, unbind), measured in one run, with a
// per-hop breakdown from the `laps_timing` lines both sides log under the request's correlation id.
// Two paths in the same run: serverless-offline (what `npm start` runs) and the container gateway
// (the self-hosted images' processes, started here on the host from the same bundles).
const stack: StackInfo = JSON.parse(fs.readFileSync(stackFile('dev'), 'utf8'));
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
const code = (secret: string, step: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: step * 30000 });
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 12);
/** at most this many rounds of store requests of the reveal's shapes before anything is timed (DynamoDB Local's JIT) */
const STORE_WARMUP = Number(process.env.BENCH_STORE_WARMUP ?? 5000);
const STORE_WARMUP_MIN = 1500;
const STORE_WARMUP_BATCH = 250;
/** which paths to measure: `offline`, `gateway` (default both) */
const PATHS = (process.env.BENCH_PATHS ?? 'offline,gateway').split(',');

interface Timing {
  correlationId: string;
  hops: Record<string, number>;
  total: number;
}
/** The `laps_timing` lines of a process log, by correlation id. */
function timings(logFile: string): Map<string, Timing> {
  const out = new Map<string, Timing>();
  if (!fs.existsSync(logFile)) return out;
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    const i = line.indexOf('{');
    if (i < 0 || !line.includes('laps_timing')) continue;
    try {
      const j = JSON.parse(line.slice(i));
      if (j.message === 'laps_timing' && j.correlationId) out.set(j.correlationId, j);
    } catch {
      /* not a JSON line */
    }
  }
  return out;
}

/**
 * CPU time (ms) used so far by the processes on this machine, grouped by what they are: the two
 * cores are shared, so a hop waits on whoever burns them (Linux /proc only, like the rest here).
 */
const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux
function cpuByGroup(gatewayPids: { console?: number; service?: number }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(f[11]) + Number(f[12])) * CLOCK_TICK_MS; // utime + stime
      const pid = Number(entry);
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const group =
        pid === process.pid ? 'bench client (raw reads, TLS, HTTP)'
        : pid === gatewayPids.console ? 'console process'
        : pid === gatewayPids.service ? 'password-service process'
        : cmd.includes('DynamoDBLocal') ? 'DynamoDB Local (JVM)'
        : /samba/.test(cmd) ? 'Samba AD DCs'
        : 'everything else';
      out[group] = (out[group] ?? 0) + ms;
    } catch {
      /* the process ended between the listing and the read */
    }
  }
  return out;
}

interface PathResult {
  reveal: number[];
  raw: number[];
  signedIn: number[];
  storeWrite: number[];
  ids: Array<{ id: string; ms: number }>;
}

async function main() {
  const admin = stack.accounts.find((a) => a.username === 'op-super')!;
  const c = new ConsoleClient(stack.consoleUrl);
  const step = Math.floor(Date.now() / 30000);
  const login = await c.login(admin.username, admin.password, code(admin.totpSecret!, step));
  if (login.status !== 200) throw new Error(`sign-in: ${login.status} ${login.text} (wait 30 s if a code was just used)`);
  const up = await c.post('/api/auth/reauth', { code: code(admin.totpSecret!, step + 1) });
  if (up.status !== 200) throw new Error(`step-up: ${up.status} ${up.text}`);

  const targets = stack.directory.computers.filter((x) => ['WS-STD-01', 'WS-STD-05', 'WS-VIP-01', 'WS-BR-01'].includes(x.name));
  const laps = stack.directory.technicalAccounts.laps;
  const ca = fs.readFileSync(stack.directory.caFile);
  const store = storeOfEnvironment(stack.stores.console);
  const config = loadConfig({}).config;
  // the rate window allows 5 operations per computer per 10 minutes: the bench empties the
  // windows of its own targets (on this local stack only) so both paths measure as many rounds as asked
  // the LAPS windows are the password service's: in its own store (its SQLite file; the shared table on DynamoDB)
  const serviceStore = storeOfEnvironment(stack.stores.passwordService);
  const clearWindows = () => Promise.all(targets.map((t) => serviceStore.delete({ Key: windowKey(lapsWindow(config, t.guid)) })));

  /**
   * DynamoDB Local's JVM JIT-compiles for its first thousand or so requests of a kind: until then
   * one transaction costs it 3 to 5 times the CPU it costs later, and on two shared cores that CPU
   * is taken from the console, the service and the DCs. A store that has run for a while (a
   * self-hosted one; DynamoDB itself has no such phase) is past that. The requests here have the
   * reveal's shapes (a batch read; a transaction of a conditional put, an update and a condition
   * check) on two items of the bench's own, written over and over, then deleted. They run in
   * batches, at least 1 500 rounds, until one costs the JVM as much CPU as the cheapest before it;
   * at most BENCH_STORE_WARMUP rounds.
   */
  async function warmStore(): Promise<number> {
    const keys = [{ pk: 'BENCH#warm', sk: 'a' }, { pk: 'BENCH#warm', sk: 'b' }];
    const TableName = store.tableName;
    const clear = () => Promise.all(keys.map((Key) => store.delete({ TableName, Key })));
    await clear(); // an interrupted run's items would fail the conditions below
    const jvm = () => cpuByGroup({})['DynamoDB Local (JVM)'] ?? 0;
    let n = 0;
    let best = Infinity;
    const costs: string[] = [];
    // in batches, at least STORE_WARMUP_MIN rounds, until a batch costs the JVM no less CPU than the
    // cheapest before it (less than 10 % less: one batch is noisy, the fleet's poll also uses the store)
    while (n < STORE_WARMUP) {
      const before = jvm();
      for (let i = 0; i < STORE_WARMUP_BATCH; i++) {
        n++;
        await store.batchGet(keys);
        await store.transactWrite([
              { Put: { TableName, Item: { ...keys[0], n, body: { text: 'x'.repeat(400) } }, ConditionExpression: 'attribute_not_exists(pk) OR n < :n', ExpressionAttributeValues: { ':n': n } } },
              { Update: { TableName, Key: keys[1], UpdateExpression: 'SET #d = :d ADD #v :one', ConditionExpression: 'attribute_not_exists(pk) OR #v < :n', ExpressionAttributeNames: { '#d': 'data', '#v': 'version' }, ExpressionAttributeValues: { ':d': { entries: [[n, 'x']] }, ':one': 1, ':n': n } } },
              { ConditionCheck: { TableName, Key: { pk: 'BENCH#warm', sk: 'none' }, ConditionExpression: 'attribute_not_exists(pk)' } },
            ]);
      }
      const perRound = (jvm() - before) / STORE_WARMUP_BATCH;
      costs.push(perRound.toFixed(1));
      if (n >= STORE_WARMUP_MIN && perRound > best * 0.9) break;
      best = Math.min(best, perRound);
    }
    await clear();
    console.log(`store warm-up: ${n} rounds; DynamoDB Local's CPU per round, each ${STORE_WARMUP_BATCH}: ${costs.join(' ')} ms`);
    return n;
  }

  /** One reveal of each target on emptied windows, nothing beside them (not timed). */
  async function revealEach(client: ConsoleClient, label: string): Promise<void> {
    await clearWindows();
    for (const t of targets) {
      const r = await client.post(`/api/computers/${t.guid}/laps`, { confirm: true, ticket: 'BENCH' });
      if (r.status !== 200) throw new Error(`${label}: reveal ${t.name}: ${r.status} ${r.text}`);
    }
  }

  /** Reveals through one path, each beside a raw read, a signed-in request and a bare transaction (the floors). */
  async function measure(client: ConsoleClient, label: string): Promise<PathResult> {
    const out: PathResult = { reveal: [], raw: [], signedIn: [], storeWrite: [], ids: [] };
    // not counted: kept connections and caches, and the JIT of DynamoDB Local's JVM, which keeps
    // compiling for the first hundred or so reveals after `npm start` (a store that has run for a
    // while, as a self-hosted one does, is past that)
    for (let round = 0; round < WARMUP_ROUNDS; round++) await revealEach(client, label);
    for (let round = 0; round < ROUNDS; round++) {
      await clearWindows();
      for (const t of targets) {
        let t0 = performance.now();
        const r = await client.post(`/api/computers/${t.guid}/laps`, { confirm: true, ticket: 'BENCH' });
        const ms = performance.now() - t0;
        if (r.status !== 200) throw new Error(`${label}: reveal ${t.name}: ${r.status} ${r.text}`);
        out.reveal.push(ms);
        out.ids.push({ id: String(r.headers['x-correlation-id'] ?? ''), ms });

        t0 = performance.now();
        const l = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [ca] } });
        await l.bind(laps.upn, laps.password);
        const e = (await l.search(t.dn, { scope: 'base', attributes: ['msLAPS-Password'] })).searchEntries[0];
        await l.unbind();
        if (!e?.['msLAPS-Password']) throw new Error('raw read returned nothing');
        out.raw.push(performance.now() - t0);

        t0 = performance.now();
        const me = await client.get('/api/auth/me');
        if (me.status !== 200) throw new Error(`me: ${me.status}`);
        out.signedIn.push(performance.now() - t0);

        t0 = performance.now();
        const id = `${label}-${round}-${t.name}-${Date.now()}`;
        await store.transactWrite([
              { Put: { TableName: store.tableName, Item: { pk: 'BENCH#laps', sk: `row#${id}` }, ConditionExpression: 'attribute_not_exists(pk)' } },
              { Put: { TableName: store.tableName, Item: { pk: 'BENCH#laps', sk: `head#${id}` } } },
            ]);
        out.storeWrite.push(performance.now() - t0);
      }
    }
    await clearWindows();
    return out;
  }

  function report(label: string, r: PathResult, logs: { console: string; service: string }) {
    console.log('');
    console.log(`== ${label}`);
    console.log(`samples               ${r.reveal.length}   (after ${storeWarmup} store warm-up rounds and ${WARMUP_ROUNDS * targets.length} reveals not counted: the store's JIT, connections, caches)`);
    console.log(`reveal round trip     median ${median(r.reveal).toFixed(1)} ms   (console → password service → directory)`);
    console.log(`raw ldapts read       median ${median(r.raw).toFixed(1)} ms   (LDAPS connect + bind + read + unbind)`);
    console.log(`ratio reveal / raw    ${(median(r.reveal) / median(r.raw)).toFixed(2)}   (target ≤ ${stack.storeKind === 'sqlite' ? '1.5 on the embedded store' : '2 on DynamoDB Local'})`);
    console.log(`floors measured in the same rounds`);
    console.log(`  signed-in GET /api/auth/me        median ${median(r.signedIn).toFixed(1)} ms   (gateway + session + settings + rights, no directory)`);
    console.log(`  store transaction (2 puts)        median ${median(r.storeWrite).toFixed(1)} ms   (the reveal waits on 2 in a row: the service's admission, the console's audit)`);
    const consoleT = timings(logs.console);
    const serviceT = timings(logs.service);
    const rows: Record<string, number[]> = {};
    const add = (k: string, v: number | undefined) => v !== undefined && Number.isFinite(v) && (rows[k] ??= []).push(v);
    let matched = 0;
    for (const { id, ms } of r.ids) {
      const ct = consoleT.get(id);
      const st = serviceT.get(id);
      if (!ct || !st) continue;
      matched++;
      add('request pipeline (gateway, session, CSRF, rights) = round trip − console handler', ms - ct.total);
      for (const [k, v] of Object.entries(ct.hops)) add(k, v);
      for (const [k, v] of Object.entries(st.hops)) add(k, v);
      add('service total', st.total);
      add('invoke overhead = console.invoke − service total', (ct.hops['console.invoke'] ?? NaN) - st.total);
    }
    console.log(`per hop (median ms over ${matched} reveals; hops in one line of the console ran together)`);
    if (!matched) console.log('  no laps_timing lines matched');
    for (const [k, v] of Object.entries(rows)) console.log(`  ${k.padEnd(72)} ${median(v).toFixed(1).padStart(7)}`);
  }

  // DynamoDB Local's JIT needs its warm-up; the embedded store has no such phase
  const storeWarmup = stack.storeKind === 'dynamodb' ? await warmStore() : 0;
  const offline = PATHS.includes('offline') ? await measure(c, 'serverless-offline') : undefined;
  const gw = await startGateways(stack);
  let gateway: PathResult;
  let cpu: Record<string, number> = {};
  let cpuReveals = 0;
  try {
    // the same session (same store): the cookie and CSRF token carry over to the gateway's origin
    const g = new ConsoleClient(gw.url);
    g.adoptSession(c);
    gateway = await measure(g, 'gateway');
    // CPU per reveal: reveals only (no raw read, no floors), each on an emptied window as above
    const before = cpuByGroup(gw.pids);
    for (let round = 0; round < 3; round++) {
      await revealEach(g, 'gateway');
      cpuReveals += targets.length;
    }
    const after = cpuByGroup(gw.pids);
    cpu = Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] - (before[k] ?? 0)) / cpuReveals]));
    await clearWindows();
    await new Promise((r) => setTimeout(r, 500)); // let the processes flush their logs
  } finally {
    gw.stop();
  }
  if (offline) report('through serverless-offline (npm start: the local emulation of API Gateway and Lambda)', offline, { console: path.join(RUN_DIR, 'dev-offline.log'), service: path.join(RUN_DIR, 'dev-password-service.log') });
  report('through the container gateway (the self-hosted images\' processes, on the host)', gateway, gw.logs);
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  console.log(`CPU per reveal through the gateway (ms, all cores; ${cpuReveals} reveals alone, ${CLOCK_TICK_MS} ms ticks)`);
  for (const [k, v] of Object.entries(cpu).sort((a, b) => b[1] - a[1])) console.log(`  ${k.padEnd(40)} ${v.toFixed(1).padStart(7)}`);
  console.log(`  ${'total (÷ 2 cores = the wall-time floor)'.padEnd(40)} ${total.toFixed(1).padStart(7)}`);
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
