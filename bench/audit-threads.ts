import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import fs from 'node:fs';
import path from 'node:path';
import { AuditChain } from '../lib/audit';
import { createSqliteStore } from '../lib/store/sqlite';

// npx tsx bench/audit-threads.ts (under the stack lock: it overcommits the cores on purpose).
// Issue 28: the audit chain's head under writers of separate threads on one SQLite file, as
// serverless-offline runs one worker thread per concurrent request: T threads append R rows a
// second each for S seconds while B threads burn CPU (the cores overcommitted, as in bench/load's
// overload). Prints each append's latency (p50, p99, worst) and verifies the chain. Measured
// before the fix (a retry drafted on the head learned before its backoff sleep): 12 x 25/s with
// 4 burners, p50 3.6 s, worst 14.8 s; after (the head read afresh, backoff cap 250 ms): worst 0.5-2 s.
// Open loop since 2026-11-28 (latency from each append's time on the clock): p50 27-29 ms, p99
// 0.9-1.2 s, worst 1.5-1.8 s. Tried then and left out: waiting for the writer's lock in the store
// (tries every 1-3 ms, the thread free meanwhile) instead of SQLite's busy handler: no better (p99
// 1.0-1.3 s), and one run of four collapsed (p50 8.8 s).
const F = path.resolve(__dirname, '../local/.run/bench-audit-threads.sqlite');
const THREADS = Number(process.env.T ?? 12);
const RATE = Number(process.env.R ?? 25); // appends a second per thread
const SECONDS = Number(process.env.S ?? 10);
const BURNERS = Number(process.env.B ?? 4);
if (isMainThread) {
  for (const x of [F, F + '-wal', F + '-shm']) fs.rmSync(x, { force: true });
  createSqliteStore(F);
  for (let b = 0; b < BURNERS; b++) new Worker('for(;;){let x=0;for(let i=0;i<1e7;i++)x+=i}', { eval: true }).unref();
  const lat: number[] = [];
  let done = 0;
  for (let i = 0; i < THREADS; i++) {
    const w = new Worker(__filename, { workerData: { i }, execArgv: ['--import', 'tsx'] });
    w.on('message', async (m: number[]) => {
      lat.push(...m);
      if (++done < THREADS) return;
      lat.sort((a, b) => a - b);
      const q = (p: number) => lat[Math.floor(p * (lat.length - 1))].toFixed(0);
      const v = await new AuditChain(createSqliteStore(F), 'console').verify();
      console.log(`bench/audit-threads: ${THREADS} threads x ${RATE} appends/s for ${SECONDS} s, ${BURNERS} threads burning CPU: ${lat.length} appends; latency p50 ${q(0.5)} ms p99 ${q(0.99)} ms max ${q(1)} ms; verify ${v.ok}`);
      process.exit(0);
    });
  }
} else {
  const chain = new AuditChain(createSqliteStore(F), 'console');
  const lat: number[] = [];
  const pending: Promise<void>[] = [];
  let n = 0;
  // open loop: each append has its time on the clock (p0 + n / RATE) and its latency counts from
  // then, so a thread held up (a write waiting for the lock inside SQLite's busy handler) shows as
  // late appends, not as fewer appends measured from when they could finally start
  const p0 = performance.now();
  const tick = () => {
    const elapsed = performance.now() - p0;
    while (n < Math.floor((elapsed * RATE) / 1000) + 1 && n < SECONDS * RATE) {
      const due = p0 + (n * 1000) / RATE;
      pending.push(chain.append({ event: 'authz.decision', outcome: 'allowed', actor: { name: 'x', provider: 'ad' }, details: { n: n++ } }).then(() => void lat.push(performance.now() - due)));
    }
    if (n >= SECONDS * RATE) return void Promise.all(pending).then(() => parentPort!.postMessage(lat));
    setTimeout(tick, 1000 / RATE);
  };
  tick();
}
