import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { matchPath } from '../../lib/http/paths';

// The contract test's validator (issue 30): an HTTP answer held against the OpenAPI document of
// its application. The operation is the document's path template and method that match the
// request (literal segments before parameters, as the gateway routes); then its status must be
// declared, its media type one the status declares (no body where none is), its JSON body valid
// against the declared schema (ajv, JSON Schema 2020-12, the document's own components), and
// every header the answer declares required present. An error's `code` is one its status
// declares. An answer to a path and method no operation describes must be the gateway's
// `{ code }` refusal (404 not_found for an unknown route). Messages never carry a body's values,
// only the paths into it and, for an error, its code.

export type App = 'console' | 'fleet';

export interface ObservedAnswer {
  method: string;
  /** the request's path, query string allowed (ignored) */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** the body as text (a zip: anything; it is not parsed) */
  body: string;
}

export interface Verdict {
  /** `GET /api/computers/{id}`, or null: no operation describes the request */
  operation: string | null;
  status: number;
  violations: string[];
}

interface OperationEntry {
  method: string;
  template: string;
  literals: number;
  op: { responses: Record<string, ResponseObject> };
}
interface ResponseObject {
  headers?: Record<string, { $ref?: string; required?: boolean }>;
  content?: Record<string, { schema?: unknown }>;
}

/** Outside the document: what the gateway and the catch-all route answer for a route that does not exist. */
const OUTSIDE_STATUSES = new Set([400, 404, 405, 413, 415]);

const pointer = (...parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const mediaType = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : (h ?? '')).split(';')[0].trim().toLowerCase();
const headerOf = (headers: ObservedAnswer['headers'], name: string) => {
  const n = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === n && v !== undefined) return v;
  return undefined;
};

export class ContractValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, validateSchema: false });
  private readonly operations: OperationEntry[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    readonly app: App,
    private readonly doc: { paths: Record<string, Record<string, unknown>>; components?: { headers?: Record<string, { required?: boolean }> } },
  ) {
    this.ajv.addSchema(doc as object, app);
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        this.operations.push({ method: method.toUpperCase(), template, literals: template.split('/').filter((s) => s && !s.startsWith('{')).length, op: op as OperationEntry['op'] });
      }
    }
    // the most literal template first: /api/alerts/silences before /api/alerts/{key}
    this.operations.sort((a, b) => b.literals - a.literals);
  }

  /** The operation a request addresses, as the gateway routes it. */
  operationOf(method: string, url: string): OperationEntry | undefined {
    const path = url.split('?')[0];
    return this.operations.find((o) => o.method === method.toUpperCase() && matchPath(o.template, path));
  }

  validate(a: ObservedAnswer): Verdict {
    const entry = this.operationOf(a.method, a.url);
    if (!entry) return { operation: null, status: a.status, violations: this.outside(a) };
    const operation = `${entry.method} ${entry.template}`;
    const violations: string[] = [];
    const declared = entry.op.responses[String(a.status)];
    if (!declared) return { operation, status: a.status, violations: [`status ${a.status} is not declared (declared: ${Object.keys(entry.op.responses).join(', ')})${this.codeNote(a)}`] };
    for (const [name, h] of Object.entries(declared.headers ?? {})) {
      const required = h.$ref ? this.refHeader(h.$ref)?.required : h.required;
      if (required && headerOf(a.headers, name) === undefined) violations.push(`header ${name} is declared required and is missing`);
    }
    const content = declared.content ?? {};
    if (!Object.keys(content).length) {
      if (a.body !== '') violations.push(`status ${a.status} declares no body, and the answer has one`);
      return { operation, status: a.status, violations };
    }
    const type = mediaType(headerOf(a.headers, 'content-type'));
    const media = content[type];
    if (!media) return { operation, status: a.status, violations: [...violations, `media type ${type || '(none)'} is not declared for ${a.status} (declared: ${Object.keys(content).join(', ')})`] };
    if (type !== 'application/json') return { operation, status: a.status, violations };
    let body: unknown;
    try {
      body = JSON.parse(a.body);
    } catch {
      return { operation, status: a.status, violations: [...violations, 'the body is not JSON'] };
    }
    const validate = this.schema(pointer('paths', entry.template, entry.method.toLowerCase(), 'responses', String(a.status), 'content', type, 'schema'));
    if (!validate(body)) violations.push(...(validate.errors ?? []).map((e) => describe(e, body)));
    return { operation, status: a.status, violations };
  }

  /** No operation: the gateway's or the catch-all route's `{ code }` refusal. */
  private outside(a: ObservedAnswer): string[] {
    const code = codeOf(a.body);
    if (OUTSIDE_STATUSES.has(a.status) && typeof code === 'string') return [];
    return [`${a.method} ${a.url.split('?')[0]} matches no operation and answered ${a.status}${code ? ` ${code}` : ' without a { code } body'}`];
  }

  private codeNote(a: ObservedAnswer) {
    const code = a.status >= 400 ? codeOf(a.body) : undefined;
    return typeof code === 'string' ? ` (code ${code})` : '';
  }

  private refHeader(ref: string) {
    const name = ref.split('/').pop()!;
    return this.doc.components?.headers?.[name];
  }

  private schema(ptr: string): ValidateFunction {
    let v = this.compiled.get(ptr);
    if (!v) this.compiled.set(ptr, (v = this.ajv.compile({ $ref: `${this.app}${ptr}` })));
    return v;
  }
}

function codeOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { code?: unknown })?.code;
  } catch {
    return undefined;
  }
}

/** An ajv error as a message naming where, never the value (an error's code excepted: codes are not secrets). */
function describe(e: ErrorObject, body: unknown): string {
  const where = e.instancePath || '(body)';
  if (e.instancePath === '/code' && e.keyword !== 'type') return `code ${JSON.stringify((body as { code?: unknown }).code)} is not declared for this status`;
  if (e.keyword === 'additionalProperties') return `${where} has a property the schema does not declare: ${(e.params as { additionalProperty: string }).additionalProperty}`;
  if (e.keyword === 'required') return `${where} lacks ${(e.params as { missingProperty: string }).missingProperty}`;
  return `${where} ${e.message}`;
}
