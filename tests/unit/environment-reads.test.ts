import fs from 'node:fs';
import path from 'node:path';

// One configuration loader: no module of lib/ reads the process environment on its own; they get
// an Environment from their caller or from lib/config/environment.ts, the only reader.
const LIB = path.resolve(__dirname, '../../lib');
const ALLOWED = new Set(['config/environment.ts']);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|js|cjs|mjs)$/.test(e.name) ? [p] : [];
  });
}

describe('environment reads in lib/', () => {
  it('happen only in lib/config/environment.ts', () => {
    const readers = sources(LIB)
      .filter((f) => !ALLOWED.has(path.relative(LIB, f).split(path.sep).join('/')))
      .filter((f) => /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*['"]env['"]\s*\]/.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.relative(LIB, f));
    expect(readers).toEqual([]);
  });
});
