import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// No cycles, no arrows up (issue 9): the import graph of lib/ and functions/ (static, type-only
// and dynamic imports alike: a cycle through a type or an `await import()` is still two rooms
// that need each other) must have no cycle beyond the known ones below. Each entry is one
// strongly connected set of modules as it stands today; when a cycle is untangled its entry goes
// (the test also fails on an entry that no longer matches, so the list only shrinks).

const ROOT = path.resolve(__dirname, '../..');
const DIRS = ['lib', 'functions'];

// (the approvals cycle is gone: the ApprovalRequest type sits in lib/approvals/record.ts, which notify.ts reads)
const KNOWN_CYCLES: Array<{ why: string; modules: string[] }> = [];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|tsx|mts|cts)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function resolve(from: string, spec: string): string | undefined {
  let base: string;
  if (spec.startsWith('@lib/')) base = path.join(ROOT, 'lib', spec.slice(5));
  else if (spec.startsWith('.')) base = path.resolve(path.dirname(from), spec);
  else return undefined; // a package
  for (const c of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  return undefined;
}

/** module (repo-relative, no extension) → modules it imports */
function importGraph(): Map<string, Set<string>> {
  const rel = (f: string) => path.relative(ROOT, f).replace(/\.(ts|tsx|mts|cts)$/, '');
  const graph = new Map<string, Set<string>>();
  for (const file of DIRS.flatMap((d) => sourceFiles(path.join(ROOT, d)))) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const deps = new Set<string>();
    for (const imp of info.importedFiles) {
      const target = resolve(file, imp.fileName);
      if (target && DIRS.some((d) => target.startsWith(path.join(ROOT, d) + path.sep))) deps.add(rel(target));
    }
    graph.set(rel(file), deps);
  }
  return graph;
}

/** Strongly connected sets of more than one module, or a module importing itself (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

describe('import cycles in lib/ and functions/', () => {
  const found = cycles(importGraph());
  const key = (m: string[]) => [...m].sort().join(' ');
  it('finds the graph (sanity)', () => {
    expect(importGraph().get('functions/fleet/nodes')?.has('lib/fleet/proxies')).toBe(true);
  });
  it('has no cycle beyond the known ones', () => {
    const known = new Set(KNOWN_CYCLES.map((c) => key(c.modules)));
    const unknown = found.filter((c) => !known.has(key(c)));
    expect(unknown).toEqual([]);
  });
  it('lists no known cycle that is gone or changed (shrink KNOWN_CYCLES)', () => {
    const now = new Set(found.map(key));
    expect(KNOWN_CYCLES.filter((c) => !now.has(key(c.modules))).map((c) => c.modules)).toEqual([]);
  });
});
