import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const ROOT = path.resolve(__dirname, '../..');

export interface HttpEvent {
  fn: string;
  method: string;
  path: string;
  handler: string;
}

/** Every HTTP event declared in a serverless file (the deployable truth of which routes exist). */
export function serverlessHttpEvents(file = 'serverless.yml'): HttpEvent[] {
  const doc = YAML.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'), { logLevel: 'error' });
  const out: HttpEvent[] = [];
  for (const [fn, def] of Object.entries<any>(doc.functions)) {
    for (const ev of def.events ?? []) {
      if (ev.httpApi && typeof ev.httpApi === 'object') out.push({ fn, method: ev.httpApi.method, path: ev.httpApi.path, handler: def.handler });
    }
  }
  return out;
}
