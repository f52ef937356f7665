import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { API_TYPES } from '../../local/api-types';

// The web apps' API types (issue 30) are what openapi-typescript generates from the documents
// now (`npm run api:types -- --check`, in its own process: openapi-typescript is an ES module):
// a route's answer changed without `npm run api:types` fails here, and a field the apps use that
// the API no longer has fails `npm run typecheck` (they import these types).
const ROOT = path.resolve(__dirname, '../..');

describe("the web apps' API types", () => {
  it('are the committed files', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'local/api-types.ts', '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr.split('\n').filter((l) => l.includes('api:types'))).toEqual([]);
    expect(r.status).toBe(0);
  });
  it.each(Object.entries(API_TYPES))('are used by the %s app', (app, file) => {
    expect(fs.existsSync(path.join(ROOT, file))).toBe(true);
    expect(fs.readFileSync(path.join(ROOT, `web/${app}/src/api.ts`), 'utf8')).toContain("from './api/schema'");
  });
});
