import { z } from 'zod';
import { errorCodes, type ErrorCodes } from '../http/answers';
import type { HealthRoute } from '../http/health';
import { openApiDocument, type Operation } from '../http/openapi';
import { STATE_CHANGING } from '../http/paths';
import type { FleetRoute } from './route';

// The fleet plane's OpenAPI document (GET /openapi/v1.json): every route of its table with the
// errors its pipeline (lib/fleet/http.ts) adds to the route's own, and its security: the access
// platform's JWT (its header, or as a bearer token) or the local administrator's bearer token.

export interface FleetRouteGroup {
  tag: string;
  description: string;
  routes: Array<FleetRoute<any, any, any, any, any> | HealthRoute<any>>;
}

const ALWAYS: ErrorCodes = { 500: ['internal_error'] };
const SIGNED_IN: ErrorCodes = { 401: ['invalid_token', 'unauthenticated'], 403: ['signin_refused'] };
const BODY: ErrorCodes = { 400: ['body_too_large', 'invalid_json', 'validation_failed'] };
/** A state-changing call from another site's page; a body that is not JSON (lib/fleet/middlewares.ts). */
const STATE_CHANGE: ErrorCodes = { 403: ['cross_site_request'], 415: ['json_required'] };

const isHealth = (r: FleetRoute | HealthRoute<unknown>): r is HealthRoute<unknown> => !('responses' in r);
const probeAnswer = z.object({ status: z.literal('ok') });

/** The errors the fleet plane's pipeline answers for a route, before and around its own. */
export function fleetPipelineErrors(r: FleetRoute): ErrorCodes {
  return errorCodes(
    ALWAYS,
    STATE_CHANGING.has(r.method) ? STATE_CHANGE : undefined,
    r.access !== 'anonymous' ? SIGNED_IN : undefined,
    r.params ? { 404: ['not_found'] } : undefined,
    r.access === 'admin' ? { 403: ['admin_required'] } : undefined,
    r.access === 'client' ? { 403: ['client_scope', 'insufficient_level'], 404: ['not_found'] } : undefined,
    r.query ? { 400: ['validation_failed'] } : undefined,
    r.body ? BODY : undefined,
    r.authorize ? { 403: ['admin_required', 'client_scope', 'insufficient_level'] } : undefined,
  );
}

function who(r: FleetRoute): string {
  switch (r.access) {
    case 'anonymous':
      return 'Anonymous.';
    case 'signed-in':
      return 'Any signed-in caller (technicians see the clients of their scope).';
    case 'admin':
      return 'Administrators.';
    case 'client':
      return `${r.level === 'operator' ? 'Operators' : 'Viewers'} of the addressed resource's client (administrators always; out of scope answers 404).`;
  }
}

const SIGNED_IN_SECURITY: Array<Record<string, string[]>> = [{ accessPlatform: [] }, { bearer: [] }];

function operationOf(r: FleetRoute, tag: string): Operation {
  return {
    method: r.method,
    path: r.path,
    summary: r.summary,
    description: `${r.description ? `${r.description}\n\n` : ''}Who may call it: ${who(r)}`,
    tag,
    security: r.access === 'anonymous' ? [] : SIGNED_IN_SECURITY,
    params: r.params,
    query: r.query,
    body: r.body,
    parameters: r.openapi?.parameters,
    responses: r.responses,
    errors: errorCodes(fleetPipelineErrors(r), r.errors),
    extensions: { ...(r.access === 'client' ? { 'x-level': r.level ?? 'viewer' } : {}), ...(r.access === 'admin' ? { 'x-admin': true } : {}) },
  };
}

function probeOperation(r: HealthRoute<unknown>, tag: string): Operation {
  return { method: r.method, path: r.path, summary: r.summary, description: 'Who may call it: anyone (no credential).', tag, security: [], responses: { 200: probeAnswer }, errors: errorCodes(ALWAYS, r.errors) };
}

export interface FleetDocumentOptions {
  version: string;
  /** FLEET_PUBLIC_ORIGIN: the server URL; else a template */
  publicOrigin?: string;
  /** ACCESS_JWT_HEADER (default Teleport-Jwt-Assertion) */
  accessHeader?: string;
}

/** The fleet plane's OpenAPI 3.1 document. */
export function fleetOpenApiDocument(groups: FleetRouteGroup[], opts: FleetDocumentOptions) {
  const operations: Operation[] = [];
  for (const g of groups) for (const r of g.routes) operations.push(isHealth(r) ? probeOperation(r, g.tag) : operationOf(r, g.tag));
  return openApiDocument({
    title: 'hdc fleet plane API',
    version: opts.version,
    description:
      "The fleet plane's API: proxies, alerts, the client register, consoles and their polls, deployments, upgrades, the audit. Errors are JSON `{ code, ... }` with a stable code; every answer carries X-Correlation-Id. State-changing calls that send a body send JSON. How to authenticate and script against it: docs/api.md.",
    servers: opts.publicOrigin
      ? [{ url: opts.publicOrigin, description: 'this fleet plane (FLEET_PUBLIC_ORIGIN)' }]
      : [{ url: 'https://{host}', description: 'the fleet plane (its dashboard and API share one origin)', variables: { host: { default: 'fleet.example.com', description: "the fleet plane's host name" } } }],
    tags: groups.map((g) => ({ name: g.tag, description: g.description })),
    securitySchemes: {
      accessPlatform: {
        type: 'apiKey',
        in: 'header',
        name: opts.accessHeader ?? 'Teleport-Jwt-Assertion',
        description: "the access platform's JWT, added by its proxy (ACCESS_JWT_HEADER, default Teleport-Jwt-Assertion); it may also come as a bearer token",
      },
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "the local administrator's token (POST /api/auth/login), or the access platform's JWT" },
    },
    operations,
  });
}
