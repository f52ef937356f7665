import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { auditLogger, logger } from '../log';
import type { ErrorCodes } from './answers';
import type { BrowserPolicy } from './browser';
import { browserDefaults } from './middlewares/browser-defaults';
import { errorResponse } from './middlewares/errors';
import { exchangeFor, httpEvent } from './middlewares/exchange';
import { loggerContext } from './middlewares/logger';
import { httpResponse, type HttpResult } from './middlewares/response';
import { matchRoute, runtime } from './middlewares/route';

// The health probes' own chain: the shared middlewares that every answer needs (event, logger,
// errors, security headers, route match) and nothing that needs a session, the directory or the
// full zod, so that the function a load balancer calls every few seconds loads in a few
// milliseconds (bench/bundles.ts: health <= 100 KB).

/**
 * An anonymous probe route (it has the shape of a console or fleet route, for the route tables).
 * It answers 200 `{ status: 'ok' }` (described in the OpenAPI documents without zod here, so that
 * this bundle stays small) or one of its `errors`.
 */
export interface HealthRoute<RT> {
  method: 'GET';
  path: string;
  summary: string;
  access: 'anonymous';
  errors?: ErrorCodes;
  handle(ctx: { rt: RT }): Promise<HttpResult>;
}

async function routeHandler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const ex = exchangeFor<HealthRoute<unknown>>(event);
  return httpResponse(await ex.route!.handle({ rt: ex.rt }), ex.correlationId);
}

export function healthHandler<RT>(routes: HealthRoute<RT>[], getRuntime: () => RT, policy: (rt: RT) => BrowserPolicy) {
  const chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(routeHandler)
    .use(httpEvent())
    .use(browserDefaults(() => policy(getRuntime())))
    .use(loggerContext([logger, auditLogger]))
    .use(errorResponse())
    .use(runtime(getRuntime))
    .use(matchRoute(routes));
  return chain as typeof chain & ((event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>);
}
