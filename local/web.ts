import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { log, ROOT } from './processes';

// The web apps: the console's (web/console) and the fleet dashboard (web/fleet), built with Vite
// into <app>/dist, the files S3 and CloudFront serve in AWS and local/web-server.ts serves locally
// (code both use lives in web/shared). The build prints each app's initial JavaScript gzip size
// (issue 10: at most 200 KB).
export const WEB_ROOT = path.join(ROOT, 'web/console');
export const WEB_DIST = path.join(WEB_ROOT, 'dist');
export const FLEET_WEB_ROOT = path.join(ROOT, 'web/fleet');
export const FLEET_WEB_DIST = path.join(FLEET_WEB_ROOT, 'dist');
export const INITIAL_JS_BUDGET = 200 * 1024;

/** The gzip size of the scripts index.html loads at once (entry and module preloads). */
export function initialJsGzip(dist = WEB_DIST): { files: string[]; bytes: number } {
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/([^"]+\.js)"/g)].map((m) => m[1]);
  const bytes = files.reduce((n, f) => n + gzipSync(fs.readFileSync(path.join(dist, f)), { level: 9 }).length, 0);
  return { files, bytes };
}

async function buildApp(name: string, root: string, dist: string): Promise<number> {
  const t0 = Date.now();
  const { build } = await import('vite');
  await build({ configFile: path.join(root, 'vite.config.mts'), root, logLevel: 'warn' });
  const { files, bytes } = initialJsGzip(dist);
  log(`${name} built in ${((Date.now() - t0) / 1000).toFixed(1)} s: initial JavaScript ${(bytes / 1024).toFixed(1)} KB gzip (${files.join(', ')}; budget ${INITIAL_JS_BUDGET / 1024} KB)`);
  if (bytes > INITIAL_JS_BUDGET) throw new Error(`the ${name}'s initial JavaScript is ${bytes} bytes gzip, over the ${INITIAL_JS_BUDGET} budget`);
  return bytes;
}

export async function buildWeb(): Promise<{ bytes: number; fleetBytes: number }> {
  const bytes = await buildApp('web app', WEB_ROOT, WEB_DIST);
  const fleetBytes = await buildApp('fleet dashboard', FLEET_WEB_ROOT, FLEET_WEB_DIST);
  return { bytes, fleetBytes };
}

if (require.main === module) {
  buildWeb().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
