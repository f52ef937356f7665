import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { build } from 'esbuild';
import { buildProxies, proxiesInScope, type ClusterSnapshot } from '../lib/fleet/nodes';
import { listNodes } from '../lib/fleet/node-list';

// Measured twice: here, as `tsx` runs the sources; then as the fleet functions run (issue 28, the
// figure the goal applies to): this file bundled with the deployment's esbuild options
// (esbuild.config.cjs) and run with the functions' 64 MB young generation (serverless.fleet.yml,
// NODE_OPTIONS).
const FUNCTION_HEAP = '--max-semi-space-size=64';
const deployed = process.env.BENCH_NODES_DEPLOYED === '1';

// npm run bench:nodes — GET /api/nodes' work for 5 000 proxies and 20 000 Windows desktops:
// parse the cluster CLI's JSON + join + status computation + filter/sort/summary, per request,
// printed beside the time of parsing the CLI's JSON alone, measured in this one run.
const PROXIES = Number(process.env.BENCH_PROXIES ?? 5000);
const DESKTOPS = Number(process.env.BENCH_DESKTOPS ?? 20000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const now = Date.now();
const uuid = (i: number) => `${i.toString(16).padStart(8, '0')}-1e24-4c75-8d0f-92a6e3b4c5d7`;
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '512734906Z').replace(/\.(\d{3})512734906Z$/, '.$1512734Z');
const codes = Array.from({ length: 500 }, (_, i) => `client-${i}`);

// outputs shaped like tctl's (COMMANDS.md §0: 4-space arrays for get, 2-space for inventory)
const instances = Array.from({ length: PROXIES }, (_, i) => ({
  kind: 'instance', version: 'v1', metadata: { name: uuid(i), expires: iso(now + 3600e3), revision: uuid(i + 1e6) },
  spec: { version: i % 7 === 0 ? '17.7.3' : '18.4.2', services: i === 0 ? ['Auth', 'Proxy', 'Node'] : ['Node', 'WindowsDesktop'], hostname: `gw-${i}`, auth_id: uuid(0), last_seen: iso(now - (i % 40) * 60_000) },
}));
const services = instances.map((it, i) => ({ kind: 'windows_desktop_service', version: 'v3', metadata: { name: it.metadata.name, expires: iso(now + 600e3), revision: uuid(i + 3e6) }, spec: { addr: '@local-windows-desktop', teleport_version: '18.4.2', hostname: `gw-${i}` } }));
const desktops = Array.from({ length: DESKTOPS }, (_, i) => ({ kind: 'windows_desktop', version: 'v3', metadata: { name: `desk-${i}`, labels: { client_code: codes[(i % PROXIES) % codes.length] }, expires: iso(now + 600e3), revision: uuid(i + 4e6) }, spec: { addr: `10.0.${(i >> 8) & 255}.${i & 255}:3389`, domain: 'corp.local', host_id: uuid(i % PROXIES), non_ad: false } }));
const locks = Array.from({ length: 200 }, (_, i) => ({ kind: 'lock', version: 'v2', metadata: { name: uuid(i + 5e6), revision: uuid(i + 6e6) }, spec: { target: { server_id: uuid(i * 13) }, message: 'm', ...(i % 2 ? { expires: iso(now + 3600e3) } : {}), created_at: iso(now), created_by: 'bot-fleet-plane' } }));
const out = {
  instances: JSON.stringify(instances, null, 2) + '\n',
  services: JSON.stringify(services, null, 4) + '\n',
  desktops: JSON.stringify(desktops, null, 4) + '\n',
  locks: JSON.stringify(locks, null, 4) + '\n',
};
const bytes = Object.values(out).reduce((n, s) => n + s.length, 0);
const names = new Map(codes.map((c) => [c, c.toUpperCase()]));
const parse = (): ClusterSnapshot => ({ instances: JSON.parse(out.instances), desktopServices: JSON.parse(out.services), desktops: JSON.parse(out.desktops), locks: JSON.parse(out.locks) });

// Paired runs (issue 28): the goal is a ratio, so each request is timed next to a parse of the same
// output, and the figure is the median of the per-pair ratios. Blocks of 20 parses then 20 requests
// swung from 1.08 to 1.61 x between runs of one build (the parse alone 40-55 ms): the machine's
// load and where the collector's pauses fell drifted between blocks, and a pair sees the same
// drift on both sides. The order alternates within the pairs, so neither side always runs in the
// other's garbage; every collection the runs cause is counted, as a request would pay it. A full
// collection (node --expose-gc) before each series, so a series does not pay for the last one's.
const collect = (globalThis as { gc?: () => void }).gc;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function once(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
function paired(fn: () => void, baseline: () => void): { ms: number; baselineMs: number; ratio: number; ratioOfMedians: number } {
  collect?.();
  baseline(); // warm-up
  fn();
  const a: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let ta: number;
    let tb: number;
    if (i % 2 === 0) {
      tb = once(baseline);
      ta = once(fn);
    } else {
      ta = once(fn);
      tb = once(baseline);
    }
    a.push(ta);
    b.push(tb);
    ratios.push(ta / tb);
  }
  return { ms: median(a), baselineMs: median(b), ratio: median(ratios), ratioOfMedians: median(a) / median(b) };
}

let sink = 0;
const parseOnly = () => {
  sink += parse().desktops.length;
};
// the request as the fleet runs it (proxiesList): readSnapshot hands the CLI's texts, buildProxies
// parses each list right before it folds it in (one pass; the parsed list is garbage as soon as it
// is folded) and counts the desktops without materializing them (the list's path: no { desktops })
const texts = (): ClusterSnapshot => ({ instances: out.instances, desktopServices: out.services, desktops: out.desktops, locks: out.locks });
const request = paired(() => {
  const { proxies } = buildProxies(texts(), now);
  const r = listNodes(proxiesInScope(proxies, undefined), { all: false, sort: 'status', dir: 'desc' }, names);
  sink += r.summary.total;
}, parseOnly);
const scoped = new Set(codes.slice(0, 5));
const technician = paired(() => {
  const { proxies } = buildProxies(texts(), now);
  sink += listNodes(proxiesInScope(proxies, scoped), { all: false, q: 'gw-1' }, names).summary.total;
}, parseOnly);
const { proxies } = buildProxies(parse(), now);

console.log(`bench/nodes${deployed ? ' (deployed form)' : ' (tsx)'}: ${PROXIES} proxies, ${DESKTOPS} desktops, ${locks.length} locks; CLI output ${(bytes / 1048576).toFixed(1)} MiB; ${RUNS} paired runs, medians (checksum ${sink % 997})`);
console.log(`  parse the CLI's JSON alone        ${request.baselineMs.toFixed(1)} ms`);
console.log(`  GET /api/nodes (administrator)     ${request.ms.toFixed(1)} ms   ratio ${request.ratio.toFixed(2)} x parse   (goal <= 1.3, issue 28; ratio of the medians ${request.ratioOfMedians.toFixed(2)})`);
console.log(`  GET /api/nodes (technician, ?q=)   ${technician.ms.toFixed(1)} ms   ratio ${technician.ratio.toFixed(2)} x parse`);
console.log(`  join + status + list alone         ${(request.ms - request.baselineMs).toFixed(1)} ms (${proxies.filter((p) => p.locked).length} locked, ${proxies.filter((p) => p.status === 'unreachable').length} unreachable)`);
if (!deployed) {
  const root = path.resolve(__dirname, '..');
  const outfile = path.join(root, 'local/.run/bench-nodes.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildOptions } = require(path.join(root, 'esbuild.config.cjs'));
  void build({ ...buildOptions, external: ['esbuild'], entryPoints: [__filename], outfile, logLevel: 'warning' }).then(() => {
    console.log(`\nas the fleet functions run it (the deployment's bundle options, node ${FUNCTION_HEAP}):`);
    const r = spawnSync(process.execPath, [FUNCTION_HEAP, '--expose-gc', outfile], { env: { ...process.env, BENCH_NODES_DEPLOYED: '1' }, encoding: 'utf8' });
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
  });
}
