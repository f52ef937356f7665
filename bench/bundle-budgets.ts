import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import YAML from 'yaml';
// the options serverless packaging uses (one file for both)
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildOptions } = require('../esbuild.config.cjs');

// The functions of the three services and their size budgets (issue 9): health <= 100 KB, the
// password service <= 300 KB, the console's OpenAPI document <= 1000 KB and its sign-in function <= 750 KB (issue 32: the WebAuthn
// library), any other function <= 600 KB. Used by bench/bundles.ts and by the
// unit test that keeps every bundle within its budget.
export const ROOT = path.resolve(__dirname, '..');
export const SERVICES = ['serverless.yml', 'serverless.password-service.yml', 'serverless.fleet.yml'];

export interface Fn {
  service: string;
  name: string;
  handler: string;
}

export function functionsOf(file: string): Fn[] {
  const doc = YAML.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'), { logLevel: 'silent' });
  return Object.entries(doc.functions as Record<string, { handler: string }>).map(([name, f]) => ({ service: doc.service, name, handler: f.handler }));
}

export const allFunctions = () => SERVICES.flatMap(functionsOf);

export function budgetOf(fn: Fn): number {
  if (/health/i.test(fn.name)) return 100 * 1024;
  if (fn.name === 'passwordService') return 300 * 1024;
  // the API description is built from every route table of the console, so it bundles every route's
  // schemas and handlers (docs/decisions.md, issue 31): it grows with each route, and serves no user
  if (fn.name === 'consoleOpenapi') return 1000 * 1024;
  // passkeys (issue 32): the WebAuthn verification library (@simplewebauthn/server, ~300 KB with its
  // ASN.1/X.509 dependencies) rides only in the sign-in and step-up function (docs/decisions.md, issue 32)
  if (fn.name === 'consoleAuth') return 750 * 1024;
  return 600 * 1024;
}

/** The entry file of a function (`functions/console/health.handler` → functions/console/health.ts). */
export const entryOf = (fn: Fn) => path.join(ROOT, `${fn.handler.slice(0, fn.handler.lastIndexOf('.'))}.ts`);

/** Bundle as deployed; the size in bytes (written to `outfile`, or only measured without one). */
export async function bundleSize(entry: string, outfile?: string): Promise<number> {
  const r = await build({ ...buildOptions, entryPoints: [entry], ...(outfile ? { outfile } : { outfile: 'out.js', write: false }), logLevel: 'silent' });
  return outfile ? fs.statSync(outfile).size : r.outputFiles![0].contents.length;
}
