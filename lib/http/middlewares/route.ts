import { notFound } from '../../errors';
import { findRoute, type Method } from '../paths';
import { exchangeOf, type HttpRequest } from './exchange';

/** The application's runtime (configuration validated at cold start: an invalid one answers 500). */
export function runtime<RT>(get: () => RT) {
  return {
    name: 'runtime',
    before: (request: HttpRequest<any, any, RT>) => {
      exchangeOf(request).rt = get();
    },
  };
}

/** The route of the request (method and path template), or 404 `not_found` like any unknown id. */
export function matchRoute<R extends { method: Method; path: string }>(routes: R[], exists: (route: R, request: HttpRequest<R>) => boolean = () => true) {
  return {
    name: 'matchRoute',
    before: (request: HttpRequest<R>) => {
      const ex = exchangeOf(request);
      const { route, params } = findRoute(routes, ex.method, ex.path);
      if (!route || !exists(route, request)) throw notFound();
      ex.route = route;
      ex.params = params;
    },
  };
}
