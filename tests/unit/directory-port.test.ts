import fs from 'node:fs';
import path from 'node:path';

// One directory port (issue 9): ldapts is imported by lib/directory only; every other module
// reaches the directory through the Directory interface and sees one error type (DirectoryError).
const ROOT = path.resolve(__dirname, '../..');
const SOURCES = ['lib', 'functions'];

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|tsx|mts|cts|js|mjs|cjs)$/.test(e.name) ? [p] : [];
  });
}

const importsLdapts = (code: string) => /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]ldapts(?:\/[^'"]*)?['"]/.test(code);
const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join('/');

describe('the directory port', () => {
  const files = SOURCES.flatMap((d) => sources(path.join(ROOT, d)));

  it('scans the sources it means to (a moved tree would pass vacuously)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.map(rel)).toEqual(expect.arrayContaining(['lib/directory/pool.ts', 'lib/authz/engine.ts']));
  });

  it('ldapts is imported nowhere outside lib/directory', () => {
    const outside = files.filter((f) => !rel(f).startsWith('lib/directory/') && importsLdapts(fs.readFileSync(f, 'utf8'))).map(rel);
    expect(outside).toEqual([]);
  });

  it('the detector sees every spelling of an import', () => {
    for (const s of [`import { Client } from 'ldapts';`, `import type { Entry } from "ldapts";`, `const l = require('ldapts')`, `await import('ldapts')`, `import 'ldapts';`, `from 'ldapts/dist/x'`]) expect([s, importsLdapts(s)]).toEqual([s, true]);
    expect(importsLdapts(`// ldapts is behind the port`)).toBe(false);
  });

  it('no domain module reaches into the pool for a raw client', () => {
    const raw = files
      .filter((f) => !rel(f).startsWith('lib/directory/'))
      .filter((f) => /\.pool\.(run|search)\(/.test(fs.readFileSync(f, 'utf8')))
      .map(rel);
    expect(raw).toEqual([]);
  });
});
