import { randomUUID } from 'node:crypto';
import type { Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { AuditInput } from '../../audit';
import type { ApiError } from '../../errors';
import { header } from '../event';

// What the middlewares of one request and its handler share: read once from the event, then
// filled step by step (route, runtime, the route's context) until the handler runs. Keyed by the
// event object, which middy hands to the middlewares and to the handler alike.
export interface Exchange<R = any, C = any, RT = any> {
  correlationId: string;
  method: string;
  path: string;
  sourceIp: string;
  header(name: string): string | undefined;
  rt?: RT;
  route?: R;
  /** path parameters as matched (strings), before the route's own schema */
  params: Record<string, string>;
  /** the route's context, handed to its `handle` */
  ctx?: C;
  /** the route's own audit row for a refusal the pipeline decides (console, decision 63) */
  refused?: (e: ApiError) => Promise<void>;
  /** the target and ticket of that row, also named by the pipeline's own `authz.decision` row */
  refusalSubject?: { target?: AuditInput['target']; ticket?: string };
}

/** middy's request, typed with what its exchange holds (the optional brand only carries the types). */
export type HttpRequest<R = any, C = any, RT = any> = Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context> & { readonly __exchange?: Exchange<R, C, RT> };

const exchanges = new WeakMap<object, Exchange>();

/** The exchange of a request's event (the handler's view). */
export const exchangeFor = <R = any, C = any, RT = any>(event: APIGatewayProxyEventV2): Exchange<R, C, RT> => exchanges.get(event) as Exchange<R, C, RT>;
/** The exchange of a request (the middlewares' view). */
export const exchangeOf = <R = any, C = any, RT = any>(request: HttpRequest<R, C, RT>): Exchange<R, C, RT> => exchanges.get(request.event) as Exchange<R, C, RT>;

/** Event reading: the correlation id of this request, the method, the path, the caller's address. */
export function httpEvent() {
  return {
    name: 'httpEvent',
    before: (request: HttpRequest) => {
      const event = request.event;
      exchanges.set(event, {
        correlationId: randomUUID(),
        method: (event.requestContext?.http?.method ?? 'GET').toUpperCase(),
        path: event.rawPath ?? '/',
        sourceIp: event.requestContext?.http?.sourceIp ?? 'unknown',
        header: (n) => header(event, n),
        params: {},
      });
    },
  };
}
