import { notFound } from '../../errors';
import type { ConsoleRuntime } from '../../runtime';
import { parseBody } from '../event';
import type { Route, RouteContext } from '../route';
import { exchangeOf, type HttpRequest } from './exchange';
import { parseWith } from './validate';

type ConsoleRequest = HttpRequest<Route, RouteContext, ConsoleRuntime>;

/**
 * The route's schemas, after the guard: a malformed path id answers 404 like an unknown one
 * (decision 11), a bad query or body 400 with the fields named (decision 18).
 */
export function consoleValidation() {
  return {
    name: 'consoleValidation',
    before: (request: ConsoleRequest) => {
      const { route, ctx, params } = exchangeOf(request);
      if (route!.params) {
        const p = route!.params.safeParse(params);
        if (!p.success) throw notFound();
        ctx!.params = p.data;
      }
      ctx!.query = route!.query ? parseWith(route!.query, request.event.queryStringParameters ?? {}, 'query') : undefined;
      const rawBody = route!.body ? parseBody(request.event) : undefined;
      ctx!.body = route!.body ? parseWith(route!.body, rawBody ?? {}, 'body') : undefined;
    },
  };
}
