import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import YAML from 'yaml';

// Security invariant 2 as a folder boundary (issue 9): the console's function bundles, built as
// for deployment, take no input from lib/password-service/service-side (the only code that holds
// the LAPS and reset accounts); the password service's own bundle does.
const ROOT = path.resolve(__dirname, '../..');
const SERVICE_SIDE = 'lib/password-service/service-side/';
const OUT = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-bundle-boundary-'));
afterAll(() => fs.rmSync(OUT, { recursive: true, force: true }));

function handlersOf(file: string): Array<{ name: string; entry: string }> {
  const doc = YAML.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'), { logLevel: 'silent' });
  return Object.entries(doc.functions as Record<string, { handler: string }>).map(([name, f]) => ({ name, entry: `${f.handler.slice(0, f.handler.lastIndexOf('.'))}.ts` }));
}

/** Per entry, the source files its bundle is built from (one esbuild run for all entries, metafile). */
async function inputsOf(entries: string[]): Promise<Map<string, string[]>> {
  const result = await build({
    entryPoints: entries.map((e) => path.join(ROOT, e)),
    outdir: OUT,
    outbase: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['@aws-sdk/*'],
    logLevel: 'silent',
    tsconfig: path.join(ROOT, 'tsconfig.json'),
  });
  const norm = (p: string) => path.relative(ROOT, path.resolve(ROOT, p)).split(path.sep).join('/');
  const out = new Map<string, string[]>();
  for (const o of Object.values((result.metafile as Metafile).outputs)) if (o.entryPoint) out.set(norm(o.entryPoint), Object.keys(o.inputs).map(norm));
  return out;
}

const consoleHandlers = handlersOf('serverless.yml');

describe('the console bundle boundary', () => {
  let inputs: Map<string, string[]>;
  beforeAll(async () => {
    inputs = await inputsOf([...new Set(consoleHandlers.map((h) => h.entry))]);
  });

  it('builds every console function (the list is not empty)', () => {
    expect(consoleHandlers.length).toBeGreaterThan(10);
    expect(consoleHandlers.map((h) => h.entry)).not.toContain('functions/password-service/handler.ts');
  });

  it.each(consoleHandlers)('$name takes no service-side input', ({ entry }) => {
    const own = inputs.get(entry) ?? [];
    expect(own.length).toBeGreaterThan(1);
    expect(own.filter((p) => p.startsWith(SERVICE_SIDE))).toEqual([]);
  });

  it('the password service bundle does (the check would see it)', async () => {
    const [svc] = handlersOf('serverless.password-service.yml');
    const own = (await inputsOf([svc.entry])).get(svc.entry) ?? [];
    expect(own).toEqual(expect.arrayContaining([`${SERVICE_SIDE}service.ts`, `${SERVICE_SIDE}context.ts`]));
  });
});
