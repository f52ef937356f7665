import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { log, ROOT } from './processes';

// The console's web app (web/console): built with Vite into web/console/dist, the files S3 and
// CloudFront serve in AWS and local/web-server.ts serves locally. The build prints the initial
// JavaScript's gzip size (issue 10: at most 200 KB).
export const WEB_ROOT = path.join(ROOT, 'web/console');
export const WEB_DIST = path.join(WEB_ROOT, 'dist');
export const INITIAL_JS_BUDGET = 200 * 1024;

/** The gzip size of the scripts index.html loads at once (entry and module preloads). */
export function initialJsGzip(dist = WEB_DIST): { files: string[]; bytes: number } {
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/([^"]+\.js)"/g)].map((m) => m[1]);
  const bytes = files.reduce((n, f) => n + gzipSync(fs.readFileSync(path.join(dist, f)), { level: 9 }).length, 0);
  return { files, bytes };
}

export async function buildWeb(): Promise<{ bytes: number }> {
  const t0 = Date.now();
  const { build } = await import('vite');
  await build({ configFile: path.join(WEB_ROOT, 'vite.config.mts'), root: WEB_ROOT, logLevel: 'warn' });
  const { files, bytes } = initialJsGzip();
  log(`web app built in ${((Date.now() - t0) / 1000).toFixed(1)} s: initial JavaScript ${(bytes / 1024).toFixed(1)} KB gzip (${files.join(', ')}; budget ${INITIAL_JS_BUDGET / 1024} KB)`);
  if (bytes > INITIAL_JS_BUDGET) throw new Error(`the web app's initial JavaScript is ${bytes} bytes gzip, over the ${INITIAL_JS_BUDGET} budget`);
  return { bytes };
}

if (require.main === module) {
  buildWeb().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
