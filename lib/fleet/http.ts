import { randomUUID } from 'node:crypto';
import { header, parseBody } from '../http/event';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ZodError } from 'zod';
import { ApiError, badRequest, isApiError, notFound } from '../errors';
import { browserDefaults, crossSiteRequest, type BrowserPolicy } from '../http/browser';
import { validationError } from '../http/handler';
import { findRoute, STATE_CHANGING } from '../http/route';
import { logger } from '../log';
import { authenticate, requestToken, SignInRefused } from './access';
import { auditRefusal, guardRoute, refuse } from './guard';
import type { FleetConfig } from './config';
import type { FleetContext, FleetRoute } from './route';
import { fleetRuntime, type FleetRuntime } from './runtime';

/** The fleet plane's browser policy (FLEET_PUBLIC_ORIGIN, FLEET_HSTS_MAX_AGE). */
export const fleetBrowserPolicy = (config: FleetConfig): BrowserPolicy => ({ publicOrigin: config.FLEET_PUBLIC_ORIGIN, hstsMaxAge: config.FLEET_HSTS_MAX_AGE });


const headers = (correlationId: string, extra?: Record<string, string>) => ({
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-correlation-id': correlationId,
  ...extra,
});

const json = (status: number, body: unknown, correlationId: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: headers(correlationId, { 'content-type': 'application/json; charset=utf-8' }),
  body: body === undefined ? '' : JSON.stringify(body),
});


const parseWith = <T>(schema: { parse(v: unknown): T } | undefined, value: unknown, where: 'body' | 'query'): T | undefined => {
  if (!schema) return undefined;
  try {
    return schema.parse(value);
  } catch (e) {
    if (e instanceof ZodError) throw validationError(e, where);
    throw e;
  }
};

/**
 * The fleet plane's HTTP pipeline, in this order for every route: route match (404) →
 * cross-site origin on state-changing calls (403 cross_site_request, logged: no credential
 * travels cross-site here) → authentication (401; 403 signin_refused, audited) → path
 * parameters (malformed = unknown, 404) → the central guard (admin / scope / level) → JSON content type on state-changing calls (415)
 * → query and body validation (400) → the route's body-dependent checks → the handler.
 * No cookies: tokens travel in headers, and state-changing calls must be JSON, which a
 * cross-site form cannot send, so there is no ambient credential to forge requests with.
 */
export function createFleetHttpHandler(routes: FleetRoute[], getRuntime: () => FleetRuntime) {
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const correlationId = randomUUID();
    const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
    const path = event.rawPath ?? '/';
    try {
      const { route, params } = findRoute(routes, method, path);
      if (!route) throw notFound();
      const rt = getRuntime();
      if (STATE_CHANGING.has(route.method)) {
        const seen = crossSiteRequest(event, fleetBrowserPolicy(rt.config));
        if (seen) {
          logger.warn('cross-site request refused', { correlationId, route: `${route.method} ${route.path}`, ...seen });
          throw new ApiError(403, 'cross_site_request');
        }
      }
      const sourceIp = event.requestContext?.http?.sourceIp ?? 'unknown';
      const ctx: FleetContext = {
        rt,
        event,
        body: undefined,
        query: undefined,
        params,
        sourceIp,
        correlationId,
        actor: { ip: sourceIp },
        route: `${route.method} ${route.path}`,
        header: (n) => header(event, n),
        refuse: (code, level, client) => refuse(ctx, code, level, client),
      };
      if (route.access !== 'anonymous') {
        try {
          ctx.access = await authenticate(rt, requestToken(ctx.header, rt.config));
        } catch (e) {
          if (e instanceof SignInRefused) {
            // the row names the user the signed token names, and the roles it carried
            ctx.actor = { id: e.username, name: e.username, provider: 'access', ip: sourceIp };
            await auditRefusal(ctx, 'signin_refused', 'viewer', null, undefined, { roles: e.roles.slice(0, 50) });
          }
          throw e;
        }
        const id = ctx.access.identity;
        ctx.actor = { id: id.username, name: id.username, provider: id.method, ip: sourceIp };
      }
      if (route.params) {
        const p = route.params.safeParse(params);
        if (!p.success) {
          if (route.access === 'admin') await guardRoute(route, ctx); // a non-administrator is refused as for any id
          else if (ctx.access && !ctx.access.identity.admin && route.access === 'client') await auditRefusal(ctx, 'not_found', route.level ?? 'viewer', null);
          throw notFound(); // a malformed id answers like an unknown one
        }
        ctx.params = p.data;
      }
      await guardRoute(route, ctx);
      if (STATE_CHANGING.has(route.method) && !/^application\/json\b/i.test(header(event, 'content-type') ?? '')) {
        throw new ApiError(415, 'json_required');
      }
      ctx.query = parseWith(route.query, event.queryStringParameters ?? {}, 'query');
      if (route.body) ctx.body = parseWith(route.body, parseBody(event) ?? {}, 'body');
      if (route.authorize) await route.authorize(ctx);
      const result = await route.handle(ctx);
      if (result.text !== undefined) {
        return {
          statusCode: result.status ?? 200,
          headers: headers(correlationId, { 'content-type': result.contentType ?? 'text/plain; charset=utf-8', ...result.headers }),
          body: result.text,
        };
      }
      return json(result.status ?? 200, result.body, correlationId);
    } catch (e) {
      if (isApiError(e)) return json(e.status, e.body(), correlationId);
      // internal errors: only a code and the correlation id leave the process; the log has the detail
      logger.error('unhandled error', { correlationId, method, path, error: e as Error });
      return json(500, { code: 'internal_error', correlationId }, correlationId);
    }
  };
}

/** A fleet Lambda handler for a group of routes: the shared pipeline inside one middy chain. */
export function fleetHandler(routes: FleetRoute<any, any, any, any>[]) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(browserDefaults(() => fleetBrowserPolicy(fleetRuntime().config)))
    .handler(createFleetHttpHandler(routes, fleetRuntime));
}
