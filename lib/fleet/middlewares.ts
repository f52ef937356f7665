import { ApiError, notFound } from '../errors';
import { parseBody } from '../http/event';
import { exchangeOf, type HttpRequest } from '../http/middlewares/exchange';
import { parseWith } from '../http/middlewares/validate';
import { STATE_CHANGING } from '../http/route';
import { authenticate, requestToken, SignInRefused } from './access';
import { auditRefusal, guardRoute, refuse } from './guard';
import type { FleetContext, FleetRoute } from './route';
import type { FleetRuntime } from './runtime';

// The fleet plane's own steps of the shared pipeline (lib/http/middlewares): its route context,
// the bearer token, the central guard, and its validation order.

type FleetRequest = HttpRequest<FleetRoute, FleetContext, FleetRuntime>;

/** The fleet route's context, built once the route and the runtime are known. */
export function fleetContext() {
  return {
    name: 'fleetContext',
    before: (request: FleetRequest) => {
      const ex = exchangeOf(request);
      const ctx: FleetContext = {
        rt: ex.rt!,
        event: request.event,
        body: undefined,
        query: undefined,
        params: ex.params,
        sourceIp: ex.sourceIp,
        correlationId: ex.correlationId,
        actor: { ip: ex.sourceIp },
        route: `${ex.route!.method} ${ex.route!.path}`,
        header: ex.header,
        refuse: (code, level, client) => refuse(ctx, code, level, client),
      };
      ex.ctx = ctx;
    },
  };
}

/**
 * The caller's token (the platform's JWT or the local administrator's), for every route but the
 * anonymous ones: 401 without a valid one; a refused platform sign-in is 403, audited with the
 * user and roles the signed token names (decisions 5, 29).
 */
export function accessToken() {
  return {
    name: 'accessToken',
    before: async (request: FleetRequest) => {
      const { route, ctx, rt, sourceIp } = exchangeOf(request);
      if (route!.access === 'anonymous') return;
      try {
        ctx!.access = await authenticate(rt!, requestToken(ctx!.header, rt!.config));
      } catch (e) {
        if (e instanceof SignInRefused) {
          ctx!.actor = { id: e.username, name: e.username, provider: 'access', ip: sourceIp };
          await auditRefusal(ctx!, 'signin_refused', 'viewer', null, undefined, { roles: e.roles.slice(0, 50) });
        }
        throw e;
      }
      const id = ctx!.access.identity;
      ctx!.actor = { id: id.username, name: id.username, provider: id.method, ip: sourceIp };
    },
  };
}

/**
 * Path parameters: a malformed id answers 404 like an unknown one; on an administrators' route a
 * non-administrator is refused as for any id, on a client route a technician's miss is audited.
 */
export function fleetParams() {
  return {
    name: 'fleetParams',
    before: async (request: FleetRequest) => {
      const { route, ctx, params } = exchangeOf(request);
      if (!route!.params) return;
      const p = route!.params.safeParse(params);
      if (!p.success) {
        if (route!.access === 'admin') await guardRoute(route!, ctx!);
        else if (ctx!.access && !ctx!.access.identity.admin && route!.access === 'client') await auditRefusal(ctx!, 'not_found', route!.level ?? 'viewer', null);
        throw notFound();
      }
      ctx!.params = p.data;
    },
  };
}

/** The fleet plane's one guard (lib/fleet/guard.ts): admin, scope and level, before any side effect. */
export function fleetGuard() {
  return {
    name: 'fleetGuard',
    before: async (request: FleetRequest) => {
      const { route, ctx } = exchangeOf(request);
      await guardRoute(route!, ctx!);
    },
  };
}

/**
 * A body must be JSON, and so must every POST (415 `json_required`): a cross-site form can POST,
 * with or without a body, but cannot send JSON, so the platform's JWT its proxy adds to every
 * request cannot be used to forge one (decision 3). A PUT or DELETE cannot be sent cross-site
 * without a CORS preflight: without a body it needs no content type (`curl -X DELETE`; issue 30).
 * Then the query and body schemas (400 with the fields named) and the route's body-dependent checks.
 */
export const needsJson = (method: string, event: { body?: string | null }) => STATE_CHANGING.has(method as never) && (method === 'POST' || !!event.body);

export function fleetValidation() {
  return {
    name: 'fleetValidation',
    before: async (request: FleetRequest) => {
      const { route, ctx } = exchangeOf(request);
      if (needsJson(route!.method, request.event) && !/^application\/json\b/i.test(ctx!.header('content-type') ?? '')) throw new ApiError(415, 'json_required');
      ctx!.query = parseWith(route!.query, request.event.queryStringParameters ?? {}, 'query');
      if (route!.body) ctx!.body = parseWith(route!.body, parseBody(request.event) ?? {}, 'body');
      if (route!.authorize) await route!.authorize(ctx!);
    },
  };
}
