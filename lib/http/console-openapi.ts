import { z } from 'zod';
import { errorCodes, type ErrorCodes } from './answers';
import type { HealthRoute } from './health';
import { openApiDocument, type Operation, type OperationParameter } from './openapi';
import { STATE_CHANGING } from './paths';
import type { Route } from './route';

// The console's OpenAPI document (spec: GET /openapi/v1.json): every route of its table with the
// errors its pipeline (lib/http/console.ts) adds to the route's own, and its security:
// anonymous, the pre-session of sign-in (cookie and CSRF header), a signed-in operator's session
// cookie (plus the CSRF header on POST/PUT/DELETE), the fleet plane's bearer token.

export interface ConsoleRouteGroup {
  tag: string;
  description: string;
  routes: Array<Route<any, any, any, any> | HealthRoute<any>>;
}

export interface ConsoleDocumentOptions {
  helpdeskEnabled: boolean;
  version: string;
  /** Development: the document itself is open to anyone */
  development?: boolean;
  /** Hosting:PublicOrigin: the server URL; else a template */
  publicOrigin?: string;
  /** Authentication:Access:Header (default Teleport-Jwt-Assertion) */
  accessHeader?: string;
}

/** Every answer can be a fault nobody foresaw: `{ code: internal_error, correlationId }` (DESIGN, invariant 7). */
const ALWAYS: ErrorCodes = { 500: ['internal_error'] };
/** Bounded concurrency (lib/http/middlewares/admission.ts): too late after arrival, or no directory connection in time. */
const ADMISSION: ErrorCodes = { 503: ['overloaded'] };
/** The store's schema is checked before anything else (lib/http/middlewares/schema.ts). */
const SCHEMA_READY: ErrorCodes = { 503: ['migration_in_progress', 'migration_pending', 'schema_newer_than_code'] };
/** A signed-in operator (lib/http/middlewares/operator.ts): the facts are re-read from the directory after 60 s. */
const OPERATOR: ErrorCodes = { 401: ['session_revoked', 'unauthenticated'], 503: ['directory_unavailable', 'not_configured'] };
const STEP_UP: ErrorCodes = { 403: ['reauth_required', 'strict_reauth_required'] };
const BODY: ErrorCodes = { 400: ['body_too_large', 'invalid_json', 'validation_failed'] };
const STATE_CHANGE: ErrorCodes = { 403: ['cross_site_request'] };
const CSRF: ErrorCodes = { 400: ['csrf_token_invalid', 'csrf_token_missing'] };

const csrfHeader: OperationParameter = { name: 'X-CSRF-TOKEN', in: 'header', required: true, description: "the session's CSRF token: GET /api/auth/antiforgery, or csrfToken of the sign-in answer" };
const sessionCookie = (required: boolean): OperationParameter => ({
  name: '__Host-hdc',
  in: 'cookie',
  required,
  description: 'the session cookie: the anonymous pre-session GET /api/auth/antiforgery opens, or the signed-in session',
});

const isHealth = (r: Route | HealthRoute<unknown>): r is HealthRoute<unknown> => !('responses' in r);
const probeAnswer = z.object({ status: z.literal('ok') });

/** The errors the console's pipeline answers for a route, before and around its own. */
export function consolePipelineErrors(r: Route): ErrorCodes {
  const changing = STATE_CHANGING.has(r.method);
  const operator = r.access === 'operator';
  return errorCodes(
    ALWAYS,
    ADMISSION,
    SCHEMA_READY,
    changing ? STATE_CHANGE : undefined,
    changing && r.access !== 'bearer' ? CSRF : undefined,
    operator ? OPERATOR : undefined,
    operator && r.permission ? { 403: ['forbidden'] } : undefined,
    r.stepUp ? STEP_UP : undefined,
    r.params ? { 404: ['not_found'] } : undefined,
    r.query ? { 400: ['validation_failed'] } : undefined,
    r.body ? BODY : undefined,
  );
}

function who(r: Route, development: boolean): string {
  if (r.access === 'anonymous') return 'Anonymous.';
  if (r.access === 'bearer') return "The fleet plane's bearer token (the admin CLI's issue-fleet-token).";
  if (r.access === 'presession') return STATE_CHANGING.has(r.method) ? 'Anonymous, with the pre-session of GET /api/auth/antiforgery: its cookie and its CSRF token.' : 'Anonymous.';
  const parts = [r.permission ? `A signed-in operator holding \`${r.permission}\`` : 'Any signed-in operator'];
  if (r.openInDevelopment) parts.push(development ? 'open to anyone in Development (this instance)' : 'open to anyone in Development');
  if (r.stepUp) parts.push('with a recent step-up (POST /api/auth/reauth)');
  if (STATE_CHANGING.has(r.method)) parts.push('and the CSRF token in X-CSRF-TOKEN');
  if (r.helpdesk) parts.push('only when Helpdesk:Enabled');
  return `${parts.join(', ')}.`;
}

function security(r: Route, development: boolean): Array<Record<string, string[]>> {
  if (r.openapi?.security) return r.openapi.security;
  if (r.access === 'anonymous' || r.access === 'presession') return [];
  if (r.access === 'bearer') return [{ fleetToken: [] }];
  const session: Record<string, string[]> = STATE_CHANGING.has(r.method) ? { session: [], csrf: [] } : { session: [] };
  return r.openInDevelopment && development ? [{}, session] : [session];
}

function operationOf(r: Route, tag: string, development: boolean): Operation {
  const presessionChange = r.access === 'presession' && STATE_CHANGING.has(r.method);
  return {
    method: r.method,
    path: r.path,
    summary: r.summary,
    description: `${r.description ? `${r.description}\n\n` : ''}Who may call it: ${who(r, development)}`,
    tag,
    security: security(r, development),
    params: r.params,
    query: r.query,
    body: r.body,
    parameters: [...(presessionChange ? [csrfHeader, sessionCookie(true)] : []), ...(r.openapi?.parameters ?? [])],
    responses: r.responses,
    errors: errorCodes(consolePipelineErrors(r), r.errors),
    extensions: { ...(r.permission ? { 'x-permission': r.permission } : {}), ...(r.stepUp ? { 'x-step-up': true } : {}), ...(r.helpdesk ? { 'x-helpdesk': true } : {}) },
  };
}

function probeOperation(r: HealthRoute<unknown>, tag: string): Operation {
  return {
    method: r.method,
    path: r.path,
    summary: r.summary,
    description: 'Who may call it: anyone (no credential).',
    tag,
    security: [],
    responses: { 200: probeAnswer },
    errors: errorCodes(ALWAYS, r.errors),
  };
}

/** The console's OpenAPI 3.1 document; helpdesk routes only when the helpdesk is enabled (spec). */
export function consoleOpenApiDocument(groups: ConsoleRouteGroup[], opts: ConsoleDocumentOptions) {
  const development = !!opts.development;
  const operations: Operation[] = [];
  for (const g of groups) {
    for (const r of g.routes) {
      if (isHealth(r)) operations.push(probeOperation(r, g.tag));
      else if (!r.helpdesk || opts.helpdeskEnabled) operations.push(operationOf(r, g.tag, development));
    }
  }
  return openApiDocument({
    title: 'hdc console API',
    version: opts.version,
    description:
      "The directory helpdesk console's API: every route of this instance, its answers and its errors. Errors are JSON `{ code, ... }` with a stable code; every answer carries X-Correlation-Id. How to authenticate and script against it: docs/api.md.",
    servers: opts.publicOrigin
      ? [{ url: opts.publicOrigin, description: 'this instance (Hosting:PublicOrigin)' }]
      : [{ url: 'https://{host}', description: 'the console (its web app and API share one origin)', variables: { host: { default: 'console.example.com', description: "the console's host name" } } }],
    tags: groups.map((g) => ({ name: g.tag, description: g.description })),
    securitySchemes: {
      session: { type: 'apiKey', in: 'cookie', name: '__Host-hdc', description: 'the session cookie set by POST /api/auth/login or POST /api/auth/access' },
      csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-TOKEN', description: "the session's CSRF token (csrfToken of the sign-in answer, or GET /api/auth/antiforgery), required on POST, PUT and DELETE" },
      fleetToken: { type: 'http', scheme: 'bearer', description: "the fleet plane's read-only token (`npm run admin -- issue-fleet-token`; a new one replaces the old)" },
      accessPlatform: { type: 'apiKey', in: 'header', name: opts.accessHeader ?? 'Teleport-Jwt-Assertion', description: "the access platform's JWT, added by its proxy (header Authentication:Access:Header, default Teleport-Jwt-Assertion)" },
    },
    operations,
  });
}
