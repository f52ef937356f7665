import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { inRequestScope } from '../request-scope';
import type { Config } from '../config';
import { auditLogger, logger } from '../log';
import { runtime as consoleRuntime, type ConsoleRuntime } from '../runtime';
import type { BrowserPolicy, CrossSiteVerdict } from './browser';
import { admission, readDeadline } from './middlewares/admission';
import { browserDefaults } from './middlewares/browser-defaults';
import { consoleValidation } from './middlewares/console-validation';
import { crossSite } from './middlewares/cross-site';
import { errorResponse } from './middlewares/errors';
import { exchangeFor, exchangeOf, httpEvent, type HttpRequest } from './middlewares/exchange';
import { loggerContext } from './middlewares/logger';
import { permissionGuard, signedInOperator, stepUp } from './middlewares/operator';
import { httpResponse } from './middlewares/response';
import { matchRoute, runtime } from './middlewares/route';
import { schemaReady } from './middlewares/schema';
import { consoleContext, csrf, refusalAudit, session } from './middlewares/session';
import type { Route, RouteContext } from './route';

type ConsoleRequest = HttpRequest<Route, RouteContext, ConsoleRuntime>;

/** The console's browser policy (Hosting:PublicOrigin, Hosting:HstsMaxAge). */
export const consoleBrowserPolicy = (config: Config): BrowserPolicy => ({ publicOrigin: config.Hosting.PublicOrigin, hstsMaxAge: config.Hosting.HstsMaxAge });

/** The route's own handler, once every middleware has let the request through. */
async function routeHandler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const ex = exchangeFor<Route, RouteContext>(event);
  ex.refused = undefined; // from here the route audits its own refusals
  return httpResponse(await ex.route!.handle(ex.ctx!), ex.correlationId);
}

/** A signed-in operator's cross-site request is an audited refusal (decision 55); anonymous ones are only logged. */
async function auditCrossSite(request: ConsoleRequest, seen: CrossSiteVerdict) {
  const ex = exchangeOf(request);
  const op = ex.ctx?.session?.operator;
  if (!op) return;
  await ex.rt!.audit.append({
    event: 'authz.decision',
    outcome: 'denied',
    reason: 'cross_site_request',
    actor: { id: op.guid, name: op.username, provider: op.provider, ip: ex.sourceIp },
    correlationId: ex.correlationId,
    details: { route: `${ex.route!.method} ${ex.route!.path}`, ...seen },
  });
}

/**
 * The console's request pipeline, one middleware per step, in this order for every route and
 * before any side effect: admission (a request past its start budget: 503 `overloaded`, issue 28)
 * → route match (unknown → 404) → a read's deadline (Concurrency:ReadBudget) → the store's schema (pending migrations,
 * 503 `migration_pending`) → session → cross-site origin on
 * POST/PUT/DELETE (403, audited when an operator's session came with it) → CSRF on POST/PUT/DELETE
 * (400) → operator (401) → permission (403, audited) → step-up (403) → zod validation (400 with
 * field details; a malformed id 404) → the route's handler. Every answer carries the security
 * headers; errors are `{ code, ... }`, anything unexpected `{ code: internal_error, correlationId }`.
 */
export function createHttpHandler(routes: Route<any, any, any, any>[], getRuntime: () => ConsoleRuntime, opts: { /** when the instance started (tests: a warm instance or a cold one) */ instanceStartedAt?: number } = {}) {
  const policy = () => consoleBrowserPolicy(getRuntime().config);
  const chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(routeHandler)
    .use(httpEvent())
    .use(browserDefaults(policy))
    .use(loggerContext([logger, auditLogger]))
    .use(errorResponse())
    .use(runtime(getRuntime))
    .use(admission(Date.now, opts.instanceStartedAt))
    .use(matchRoute(routes, (route: Route, request: ConsoleRequest) => !route.helpdesk || exchangeOf(request).rt!.config.Helpdesk.Enabled))
    .use(readDeadline())
    .use(schemaReady())
    .use(consoleContext())
    .use(session())
    .use(crossSite((request: ConsoleRequest) => consoleBrowserPolicy(exchangeOf(request).rt!.config), auditCrossSite))
    .use(csrf())
    .use(refusalAudit())
    .use(signedInOperator())
    .use(permissionGuard())
    .use(stepUp())
    .use(consoleValidation());
  // each request with its own shared reads (lib/request-scope); callable without a Lambda context
  // too (tests, the container gateway)
  return (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => inRequestScope(() => chain(event, context as Context));
}

/** A console Lambda handler for a group of routes. */
export const consoleHandler = (routes: Route<any, any, any, any>[]) => createHttpHandler(routes, consoleRuntime);
