import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { ROOT, RUN_DIR } from './processes';

// The route tables loaded in a plain Node process (the OpenAPI documents, the console's reads bound
// by Concurrency:ReadBudget): bundled first, since ESM-only packages among the handlers' imports
// (@middy/core) cannot be required the way tsx loads the sources. Used by local/api-types.ts, the
// local gateway (local/offline-gateway.cjs) and the container build (containers/build.ts).
export function loadRouteTables(): typeof import('./api-documents') {
  const outfile = path.join(RUN_DIR, `route-tables-${process.pid}.cjs`);
  buildSync({ entryPoints: [path.join(ROOT, 'local/api-documents.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node22', outfile, loader: { '.sh': 'text' }, logLevel: 'error' });
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(outfile) as typeof import('./api-documents');
  } finally {
    fs.rmSync(outfile, { force: true });
  }
}
