import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { allFunctions, budgetOf, bundleSize, entryOf, ROOT } from './bundle-budgets';

// npm run bench:bundles: every function of serverless.yml, serverless.password-service.yml and
// serverless.fleet.yml built as for deployment (esbuild.config.cjs: bundled, minified,
// tree-shaken, the AWS SDK left to the runtime), its size and the
// time to load its module (a fresh node process, median of RUNS) printed beside an empty
// handler's, measured in this one run. Budgets (issue 9): health <= 100 KB, the password service
// <= 300 KB, any other function <= 600 KB; the run exits 1 when a function is over its budget.
const OUT = path.join(ROOT, '.esbuild/bench-bundles');
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Milliseconds to require the bundle in a new process (what a cold start pays before the first request). */
function loadMs(file: string): number {
  const probe = `const t=process.hrtime.bigint();require(${JSON.stringify(file)});process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    times.push(Number(execFileSync(process.execPath, ['-e', probe], { cwd: ROOT, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'SILENT' } }).toString()));
  }
  return median(times);
}

const bundle = (entry: string, outfile: string) => bundleSize(entry, outfile);

async function main() {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const empty = path.join(OUT, 'empty-entry.ts');
  fs.writeFileSync(empty, 'export const handler = async () => ({ statusCode: 200, body: "" });\n');
  const emptySize = await bundle(empty, path.join(OUT, 'empty.js'));
  const emptyMs = loadMs(path.join(OUT, 'empty.js'));
  console.log(`empty handler: ${(emptySize / 1024).toFixed(1)} KB, load ${emptyMs.toFixed(1)} ms (median of ${RUNS})`);
  console.log('');
  console.log(`${'function'.padEnd(44)} ${'size'.padStart(9)} ${'budget'.padStart(8)} ${'load'.padStart(9)} ${'× empty'.padStart(8)}`);
  let over = 0;
  for (const fn of allFunctions()) {
    const out = path.join(OUT, `${fn.service}-${fn.name}.js`);
    const size = await bundle(entryOf(fn), out);
    const ms = loadMs(out);
    const budget = budgetOf(fn);
    if (size > budget) over++;
    console.log(`${`${fn.service}/${fn.name}`.padEnd(44)} ${`${(size / 1024).toFixed(0)} KB`.padStart(9)} ${`${budget / 1024} KB`.padStart(8)} ${`${ms.toFixed(1)} ms`.padStart(9)} ${`${(ms / emptyMs).toFixed(1)}×`.padStart(8)}${size > budget ? '  OVER BUDGET' : ''}`);
  }
  console.log('');
  console.log(over ? `${over} function(s) over their size budget` : 'every function within its size budget');
  if (over) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
