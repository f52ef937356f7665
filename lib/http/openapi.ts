import { z } from 'zod';
import type { Route } from './route';

const toSchema = (s: z.ZodType | undefined) => {
  if (!s) return undefined;
  try {
    return z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
  } catch {
    return { type: 'object' };
  }
};

/** OpenAPI 3 description of every /api/ route, from the same zod schemas that validate requests. */
export function openApiDocument(routes: Route<any, any, any>[], opts: { helpdeskEnabled: boolean; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (!r.path.startsWith('/api/')) continue;
    if (r.helpdesk && !opts.helpdeskEnabled) continue;
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const query = toSchema(r.query) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) params.push({ name, in: 'query', required: !!query?.required?.includes(name), schema: schema as any });
    const op: Record<string, unknown> = {
      summary: r.summary,
      ...(r.permission ? { 'x-permission': r.permission } : {}),
      ...(r.stepUp ? { 'x-step-up': true } : {}),
      ...(params.length ? { parameters: params } : {}),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(r.body) } } } } : {}),
      responses: {
        default: { description: 'Error: { code, ... }', content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } } },
        '200': { description: 'OK', ...(r.response ? { content: { 'application/json': { schema: toSchema(r.response) } } } : {}) },
      },
    };
    if (['POST', 'PUT', 'DELETE'].includes(r.method)) {
      op.parameters = [...((op.parameters as unknown[]) ?? []), { name: 'X-CSRF-TOKEN', in: 'header', required: true, schema: { type: 'string' } }];
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'hdc console API', version: opts.version },
    paths,
    components: {
      schemas: { ApiError: { type: 'object', required: ['code'], properties: { code: { type: 'string' }, correlationId: { type: 'string' } } } },
      securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: '__Host-hdc' } },
    },
    security: [{ session: [] }],
  };
}
