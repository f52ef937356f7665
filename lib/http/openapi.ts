import { z } from 'zod';
import { isFileAnswer, isJsonAnswer, isNoContent, type Answer, type Answers, type ErrorCodes, type HeaderDecl } from './answers';

// The OpenAPI 3.1 document of an application (the console's, the fleet plane's), generated from
// its route table: each route's schemas (zod, through z.toJSONSchema), its success answers and
// error codes (lib/http/answers.ts), its security. The applications map their routes to
// operations (lib/http/console-openapi.ts, lib/fleet/openapi.ts); this file only writes them out.

export interface OperationParameter {
  name: string;
  in: 'header' | 'cookie';
  required: boolean;
  description: string;
}

export interface Operation {
  method: string;
  path: string;
  summary: string;
  description: string;
  tag: string;
  security: Array<Record<string, string[]>>;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  parameters?: OperationParameter[];
  responses: Answers;
  errors: ErrorCodes;
  extensions?: Record<`x-${string}`, unknown>;
}

export interface DocumentSpec {
  title: string;
  version: string;
  description: string;
  servers: Array<{ url: string; description: string; variables?: Record<string, { default: string; description: string }> }>;
  tags: Array<{ name: string; description: string }>;
  securitySchemes: Record<string, Record<string, unknown>>;
  operations: Operation[];
}

const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad request',
  401: 'Not signed in',
  403: 'Refused',
  404: 'Not found (unknown, out of scope and unreadable alike)',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'An outside system failed',
  503: 'Unavailable',
};

/** `GET /api/computers/{id}/laps` → `getComputersByIdLaps`: stable, unique per method and path. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\//, '/')
    .split('/')
    .filter(Boolean)
    .flatMap((seg) => {
      const param = /^\{(\w+)\}$/.exec(seg);
      return param ? ['by', param[1]] : seg.split(/[^A-Za-z0-9]+/).filter(Boolean);
    });
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

type JsonSchema = Record<string, unknown>;

/**
 * Zod schemas to JSON Schema, their named parts (`.meta({ id })`) as shared components: an answer's
 * under its id, a request's under `<id>Input` (the two forms of one schema may differ: defaults,
 * closed objects). One id naming two different schemas is an error, not a silent overwrite.
 */
class Schemas {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const { $schema: _, $defs, ...root } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const names = new Map(Object.keys($defs ?? {}).map((id) => [id, io === 'input' ? `${id}Input` : id]));
    for (const [id, def] of Object.entries($defs ?? {})) {
      const name = names.get(id)!;
      const component = rewriteRefs(def, names) as JsonSchema;
      if (this.components[name] && JSON.stringify(this.components[name]) !== JSON.stringify(component)) throw new Error(`OpenAPI: two different schemas are named ${id}`);
      this.components[name] = component;
    }
    return rewriteRefs(root, names) as JsonSchema;
  }
}

function rewriteRefs(node: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, names));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
      const id = v.slice('#/$defs/'.length);
      out[k] = `#/components/schemas/${names.get(id) ?? id}`;
    } else out[k] = rewriteRefs(v, names);
  }
  return out;
}

const CORRELATION = { $ref: '#/components/headers/CorrelationId' };

function headersOf(decls: Record<string, HeaderDecl> | undefined) {
  const out: Record<string, unknown> = { 'X-Correlation-Id': CORRELATION };
  for (const [name, h] of Object.entries(decls ?? {})) out[name] = { description: h.description, required: !!h.required, schema: { type: 'string' } };
  return out;
}

function successResponse(status: number, answer: Answer | readonly Answer[], schemas: Schemas) {
  const alternatives: readonly Answer[] = Array.isArray(answer) ? answer : [answer as Answer];
  const content: Record<string, unknown> = {};
  const descriptions: string[] = [];
  const declared: Array<Record<string, HeaderDecl>> = [];
  for (const a of alternatives) {
    if (isNoContent(a)) {
      descriptions.push(a.none);
      declared.push(a.headers ?? {});
    } else if (isFileAnswer(a)) {
      descriptions.push(a.description);
      declared.push(a.headers ?? {});
      content[a.file] = { schema: a.file === 'application/zip' ? { type: 'string', contentMediaType: 'application/zip' } : { type: 'string' } };
    } else {
      const j = isJsonAnswer(a) ? a : { json: a as z.ZodType };
      if (j.description) descriptions.push(j.description);
      declared.push(j.headers ?? {});
      content['application/json'] = { schema: schemas.convert(j.json, 'output') };
    }
  }
  // headers are per status: one that only some alternatives send (a zip's name) is not required
  const headers: Record<string, HeaderDecl> = {};
  for (const d of declared) for (const [name, h] of Object.entries(d)) headers[name] = { ...h, required: declared.every((x) => x[name]?.required) };
  return {
    description: descriptions.join('; ') || REASONS[status] || 'Success',
    headers: headersOf(headers),
    ...(Object.keys(content).length ? { content } : {}),
  };
}

/** The `code` of an error answer: its codes, and code families written `prefix:*` (`approver_not_allowed:*`). */
function codeSchema(codes: readonly string[]) {
  const exact = codes.filter((c) => !c.endsWith(':*'));
  const families = codes.filter((c) => c.endsWith(':*')).map((c) => ({ pattern: `^${c.slice(0, -1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}` }));
  if (!families.length) return { type: 'string', enum: exact };
  return { type: 'string', anyOf: [...(exact.length ? [{ enum: exact }] : []), ...families] };
}

function errorResponse(status: number, codes: readonly string[]) {
  const properties: Record<string, unknown> = { code: codeSchema(codes) };
  if (status === 500) properties.correlationId = { type: 'string', description: 'the id of the request, in the log' };
  const retry = status === 429 || status === 503;
  if (retry) properties.retryAfterSeconds = { type: 'integer', description: 'when to try again, in seconds (a rate window, an overload)' };
  return {
    description: `${REASONS[status] ?? 'Error'}: ${codes.join(', ')}`,
    headers: retry ? { 'X-Correlation-Id': CORRELATION, 'Retry-After': { description: 'seconds, when the refusal says when it lifts', required: false, schema: { type: 'string' } } } : { 'X-Correlation-Id': CORRELATION },
    content: {
      'application/json': {
        schema: { type: 'object', required: ['code'], properties, additionalProperties: true, description: 'An error: its stable code, and details named by the code (never a secret)' },
      },
    },
  };
}

function parametersOf(op: Operation, schemas: Schemas) {
  const params: Array<Record<string, unknown>> = [];
  const pathNames = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const pathSchema = op.params ? (schemas.convert(op.params, 'input') as { properties?: Record<string, unknown> }) : undefined;
  for (const name of pathNames) params.push({ name, in: 'path', required: true, schema: pathSchema?.properties?.[name] ?? { type: 'string' } });
  const query = op.query ? (schemas.convert(op.query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] }) : undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const { description, ...rest } = schema;
    params.push({ name, in: 'query', required: !!query?.required?.includes(name), ...(description ? { description } : {}), schema: rest });
  }
  for (const p of op.parameters ?? []) params.push({ name: p.name, in: p.in, required: p.required, description: p.description, schema: { type: 'string' } });
  return params;
}

/** Does the body schema accept an absent body (sent as `{}`)? Then the request body is optional. */
const bodyOptional = (body: z.ZodType) => body.safeParse({}).success;

export function openApiDocument(spec: DocumentSpec) {
  const schemas = new Schemas();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of spec.operations) {
    const parameters = parametersOf(op, schemas);
    const responses: Record<string, unknown> = {};
    for (const [status, answer] of Object.entries(op.responses)) responses[status] = successResponse(Number(status), answer as Answer, schemas);
    for (const [status, codes] of Object.entries(op.errors).sort(([a], [b]) => Number(a) - Number(b))) if (codes?.length) responses[status] = errorResponse(Number(status), codes);
    (paths[op.path] ??= {})[op.method.toLowerCase()] = {
      operationId: operationIdOf(op.method, op.path),
      tags: [op.tag],
      summary: op.summary,
      description: op.description,
      security: op.security,
      ...op.extensions,
      ...(parameters.length ? { parameters } : {}),
      ...(op.body ? { requestBody: { required: !bodyOptional(op.body), content: { 'application/json': { schema: schemas.convert(op.body, 'input') } } } } : {}),
      responses,
    };
  }
  const usedTags = new Set(spec.operations.map((o) => o.tag));
  return {
    openapi: '3.1.0' as const,
    // the contact is the instance's operator: the document tells where its guide is (docs/api.md)
    info: { title: spec.title, version: spec.version, description: spec.description, contact: { name: 'the operator of this instance (docs/api.md)' } },
    servers: spec.servers,
    tags: spec.tags.filter((t) => usedTags.has(t.name)),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    components: {
      schemas: Object.fromEntries(Object.entries(schemas.components).sort(([a], [b]) => (a < b ? -1 : 1))),
      headers: { CorrelationId: { description: 'the id of this request, as the log and the audit row name it', required: true, schema: { type: 'string' } } },
      securitySchemes: spec.securitySchemes,
    },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
