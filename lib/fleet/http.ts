import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { BrowserPolicy } from '../http/browser';
import { browserDefaults } from '../http/middlewares/browser-defaults';
import { crossSite } from '../http/middlewares/cross-site';
import { errorResponse } from '../http/middlewares/errors';
import { exchangeFor, exchangeOf, httpEvent, type HttpRequest } from '../http/middlewares/exchange';
import { loggerContext } from '../http/middlewares/logger';
import { httpResponse } from '../http/middlewares/response';
import { matchRoute, runtime } from '../http/middlewares/route';
import { auditLogger, logger } from '../log';
import type { FleetConfig } from './config';
import { accessToken, fleetContext, fleetGuard, fleetParams, fleetValidation } from './middlewares';
import type { FleetContext, FleetRoute } from './route';
import { fleetRuntime, type FleetRuntime } from './runtime';

/** The fleet plane's browser policy (FLEET_PUBLIC_ORIGIN, FLEET_HSTS_MAX_AGE). */
export const fleetBrowserPolicy = (config: FleetConfig): BrowserPolicy => ({ publicOrigin: config.FLEET_PUBLIC_ORIGIN, hstsMaxAge: config.FLEET_HSTS_MAX_AGE });

type FleetRequest = HttpRequest<FleetRoute, FleetContext, FleetRuntime>;

/** The route's own handler, once every middleware has let the request through. */
async function routeHandler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const ex = exchangeFor<FleetRoute, FleetContext>(event);
  return httpResponse(await ex.route!.handle(ex.ctx!), ex.correlationId);
}

/**
 * The fleet plane's request pipeline, one middleware per step, in this order for every route:
 * route match (404) → cross-site origin on state-changing calls (403 cross_site_request, logged:
 * no credential travels cross-site here) → authentication (401; 403 signin_refused, audited) →
 * path parameters (malformed = unknown, 404) → the central guard (admin / scope / level) → JSON
 * content type on state-changing calls (415) → query and body validation (400) → the route's
 * body-dependent checks → the handler. The same shared middlewares as the console's (event,
 * logger, errors, security headers, cross-site); no cookies, so no CSRF token.
 */
export function createFleetHttpHandler(routes: FleetRoute<any, any, any, any, any>[], getRuntime: () => FleetRuntime) {
  const chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(routeHandler)
    .use(httpEvent())
    .use(browserDefaults(() => fleetBrowserPolicy(getRuntime().config)))
    .use(loggerContext([logger, auditLogger]))
    .use(errorResponse())
    .use(matchRoute(routes))
    .use(runtime(getRuntime))
    .use(crossSite((request: FleetRequest) => fleetBrowserPolicy(exchangeOf(request).rt!.config)))
    .use(fleetContext())
    .use(accessToken())
    .use(fleetParams())
    .use(fleetGuard())
    .use(fleetValidation());
  // callable without a Lambda context too (tests, the container gateway)
  return chain as typeof chain & ((event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>);
}

/** A fleet Lambda handler for a group of routes. */
export const fleetHandler = (routes: FleetRoute<any, any, any, any, any>[]) => createFleetHttpHandler(routes, fleetRuntime);
