import fs from 'node:fs';
import YAML from 'yaml';

// What a container needs from a serverless service file: each function's handler, its HTTP API
// routes and its schedule. Read from the same serverless.yml the AWS deployment packages, so both
// deployments serve the same routes with the same handlers (docs/decisions.md, containers).

export interface HttpRoute {
  method: string;
  /** API Gateway path syntax (/api/computers/{id}, /{proxy+}); '*' is the catch-all route */
  path: string;
}

export interface ServiceFunction {
  name: string;
  /** `functions/console/auth.handler`: the module path (no extension) and its export */
  module: string;
  exportName: string;
  routes: HttpRoute[];
  /** `rate(5 minutes)` as written, or a `${self:custom.schedules.<key>}` reference resolved by the caller */
  schedule?: string;
  /** seconds, from the function or the provider */
  timeout: number;
  /** Lambda's reserved concurrency of the function: the container gateway caps its in-flight requests at it (issue 28) */
  reservedConcurrency?: number;
}

export interface ServiceMap {
  service: string;
  functions: ServiceFunction[];
}

/** Resolves `${self:custom.schedules.x}`-style references in a schedule rate; anything else stays as written. */
export type RateResolver = (reference: string) => string | undefined;

export function readServiceMap(file: string, resolveRate: RateResolver = () => undefined): ServiceMap {
  // the file's CloudFormation tags (!GetAtt, !Ref) are not needed here: kept as plain values
  const doc = YAML.parse(fs.readFileSync(file, 'utf8'), { customTags: cfnTags, logLevel: 'error' }) as Record<string, any>;
  const providerTimeout = Number(doc.provider?.timeout ?? 29);
  const functions: ServiceFunction[] = [];
  for (const [name, fn] of Object.entries<Record<string, any>>(doc.functions ?? {})) {
    const [module, exportName] = splitHandler(String(fn.handler));
    const routes: HttpRoute[] = [];
    let schedule: string | undefined;
    for (const ev of fn.events ?? []) {
      if (ev.httpApi === '*') routes.push({ method: '*', path: '*' });
      else if (ev.httpApi) routes.push({ method: String(ev.httpApi.method).toUpperCase(), path: String(ev.httpApi.path) });
      if (ev.schedule) {
        const rate = typeof ev.schedule === 'string' ? ev.schedule : String(ev.schedule.rate);
        schedule = rate.startsWith('${') ? resolveRate(rate) : rate;
        if (!schedule) throw new Error(`${file}: function ${name}: schedule ${rate} cannot be resolved`);
      }
    }
    const reserved = fn.reservedConcurrency === undefined ? undefined : Number(selfReference(doc, fn.reservedConcurrency));
    if (reserved !== undefined && !(Number.isInteger(reserved) && reserved >= 1)) throw new Error(`${file}: function ${name}: reservedConcurrency ${String(fn.reservedConcurrency)} is not a whole number of at least 1`);
    functions.push({ name, module, exportName, routes, schedule, timeout: Number(fn.timeout ?? providerTimeout), ...(reserved !== undefined ? { reservedConcurrency: reserved } : {}) });
  }
  return { service: String(doc.service), functions };
}

/** A value as written, or the one a `${self:custom.a.b}` reference names in the same file. */
function selfReference(doc: Record<string, any>, value: unknown): unknown {
  const m = typeof value === 'string' ? /^\$\{self:([\w.]+)\}$/.exec(value) : null;
  if (!m) return value;
  return m[1].split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), doc);
}

function splitHandler(handler: string): [string, string] {
  const dot = handler.lastIndexOf('.');
  if (dot <= 0) throw new Error(`handler ${handler}: expected <module>.<export>`);
  return [handler.slice(0, dot), handler.slice(dot + 1)];
}

const cfnTags = ['!GetAtt', '!Ref', '!Sub', '!Join', '!If', '!Equals', '!Not', '!Select', '!Split', '!FindInMap', '!ImportValue', '!GetAZs', '!Condition'].flatMap((tag) => [
  { tag, resolve: (v: unknown) => v },
  { tag, collection: 'seq' as const, resolve: (v: unknown) => v },
  { tag, collection: 'map' as const, resolve: (v: unknown) => v },
]);

/** `rate(5 minutes)` → milliseconds. */
export function rateToMs(rate: string): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(rate.trim());
  if (!m) throw new Error(`unsupported schedule ${rate}: only rate(N minutes|hours|days)`);
  const n = Number(m[1]);
  const unit = m[2].startsWith('minute') ? 60_000 : m[2].startsWith('hour') ? 3_600_000 : 86_400_000;
  if (n < 1) throw new Error(`unsupported schedule ${rate}`);
  return n * unit;
}
