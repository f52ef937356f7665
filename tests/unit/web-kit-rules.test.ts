import fs from 'node:fs';
import path from 'node:path';

// Issue 29: the web apps ask through their own dialogs, never the browser's confirm(), alert() or
// prompt() (a name used bare must be the file's own, e.g. `const confirm = useConfirm()`), and no
// source file of web/ is over 400 lines.
const ROOT = path.resolve(__dirname, '../..');
const sources = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'dist' || e.name === 'node_modules' ? [] : sources(p);
    return /\.(ts|tsx)$/.test(e.name) ? [p] : [];
  });
const files = sources(path.join(ROOT, 'web')).filter((f) => !f.endsWith(`${path.sep}api${path.sep}schema.ts`)); // generated
const rel = (f: string) => path.relative(ROOT, f);

describe('the web apps', () => {
  it('have sources to check', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it("never call the browser's confirm, alert or prompt", () => {
    const found: string[] = [];
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      for (const m of text.matchAll(/\b(window|globalThis|self)\.(confirm|alert|prompt)\s*\(/g)) found.push(`${rel(f)}: ${m[0]}`);
      for (const name of ['confirm', 'alert', 'prompt']) {
        const bare = new RegExp(`(?<![.\\w])${name}\\(`);
        const own = new RegExp(`(const|let|function)\\s+${name}\\b|\\b${name}\\s*[,}]`);
        if (bare.test(text) && !own.test(text)) found.push(`${rel(f)}: ${name}() not declared in the file`);
      }
    }
    expect(found).toEqual([]);
  });

  it('keep every source file at 400 lines or fewer', () => {
    const long = files.map((f) => [rel(f), fs.readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > 400);
    expect(long).toEqual([]);
  });
});
