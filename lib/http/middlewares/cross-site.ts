import { forbidden } from '../../errors';
import { logger } from '../../log';
import { crossSiteRequest, type BrowserPolicy, type CrossSiteVerdict } from '../browser';
import { STATE_CHANGING, type Method } from '../paths';
import { exchangeOf, type HttpRequest } from './exchange';

/**
 * A state-changing call sent by a page of another site is refused 403 `cross_site_request`
 * before any credential is looked at (console decision 55, fleet decision 22); logged, and handed
 * to `audit` (the console writes a row when a signed-in operator's session came with it).
 */
export function crossSite<R extends { method: Method; path: string }>(policy: (request: HttpRequest<R>) => BrowserPolicy, audit?: (request: HttpRequest<R>, seen: CrossSiteVerdict) => Promise<void>) {
  return {
    name: 'crossSite',
    before: async (request: HttpRequest<R>) => {
      const ex = exchangeOf(request);
      const route = ex.route!;
      if (!STATE_CHANGING.has(route.method)) return;
      const seen = crossSiteRequest(request.event, policy(request));
      if (!seen) return;
      logger.warn('cross-site request refused', { correlationId: ex.correlationId, route: `${route.method} ${route.path}`, ...seen });
      await audit?.(request, seen);
      throw forbidden('cross_site_request');
    },
  };
}
