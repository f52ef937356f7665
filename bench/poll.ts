import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { seal } from '../lib/crypto/seal';
import type { ConsoleRecord } from '../lib/fleet/consoles';
import { boundedEach } from '../lib/fleet/poll/round';
import { pollConsole } from '../lib/fleet/poll/status';
import { makeTestCa } from '../tests/support/test-ca';

// npm run bench:poll — one polling round over 1 000 simulated consoles answering after 100 ms,
// each poll a fresh TLS connection verified against a test CA (as the fleet polls: no keep-alive
// across consoles), printed beside the ideal (latency × consoles ÷ concurrency), with memory.
// The consoles run in a child process so their TLS work does not share the poller's event loop.
// Goal (issue 11): a round of 1 000 consoles in 10 s or less.

const CONSOLES = Number(process.env.BENCH_CONSOLES ?? 1000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '50,100').split(',').map(Number);

const STATUS = JSON.stringify({
  instance: { version: '1.4.0' },
  health: { status: 'healthy' },
  audit: { chain: 'ok', failedLogins24h: 3, head: { seq: 1200, hash: 'a'.repeat(64) } },
  directory: { dcs: [{ name: 'dc1', url: 'ldaps://dc1.corp.test', state: 'up' }, { name: 'dc2', url: 'ldaps://dc2.corp.test', state: 'up' }] },
});

if (process.argv[2] === 'consoles') {
  // the simulated consoles: one HTTPS server, a path per console, answering after LATENCY_MS
  const [key, cert] = [process.env.BENCH_KEY!, process.env.BENCH_CERT!];
  const server = https.createServer({ key, cert }, (_req, res) => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(STATUS), LATENCY_MS));
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
} else {
  void main();
}

async function main() {
  const ca = makeTestCa('bench');
  const cert = ca.issue('consoles', { days: 5 });
  const child = fork(__filename, ['consoles'], { env: { ...process.env, BENCH_KEY: cert.key, BENCH_CERT: cert.cert }, execArgv: process.execArgv });
  const port = await new Promise<number>((r) => child.once('message', (m: any) => r(m.port)));
  const key = randomBytes(32);
  const consoles: ConsoleRecord[] = Array.from({ length: CONSOLES }, (_, i) => {
    const id = `bench-${i}`;
    return { id, clientCode: `c${i % 50}`, url: `https://127.0.0.1:${port}/c/${i}`, sealedToken: seal(key, `tok-${i}-0123456789abcdef`, `fleet-console-token:${id}`), createdAt: '', updatedAt: '' };
  });
  const trust = { extraCaPem: ca.caPem };
  // warm-up: TLS contexts, JIT
  await boundedEach(consoles.slice(0, 20), 10, () => false, async (c) => void (await pollConsole(c, { masterKey: key, trust })));

  console.log(`poll round: ${CONSOLES} consoles, ${LATENCY_MS} ms each, TLS verified, one connection per console (load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`);
  for (const concurrency of CONCURRENCIES) {
    if (global.gc) global.gc();
    const rss0 = process.memoryUsage().rss;
    let peakRss = rss0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    let ok = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await boundedEach(consoles, concurrency, () => false, async (c) => {
      if ((await pollConsole(c, { masterKey: key, trust })).ok) ok++;
    });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cpuPerPoll = (cpu.user + cpu.system) / 1000 / CONSOLES;
    clearInterval(sampler);
    const ideal = (LATENCY_MS * CONSOLES) / concurrency;
    console.log(
      `  concurrency ${String(concurrency).padStart(3)}: round ${(ms / 1000).toFixed(2)} s (ideal ${(ideal / 1000).toFixed(2)} s, ${(ms / ideal).toFixed(2)}x), ${ok}/${CONSOLES} ok, ` +
        `${(CONSOLES / (ms / 1000)).toFixed(0)} polls/s, poller CPU ${cpuPerPoll.toFixed(2)} ms/poll; rss ${(rss0 / 2 ** 20).toFixed(0)} -> peak ${(peakRss / 2 ** 20).toFixed(0)} MiB, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB; ${ms <= 10_000 ? 'within' : 'OVER'} the 10 s goal`,
    );
  }
  child.kill();
}
