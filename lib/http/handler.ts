import { randomUUID } from 'node:crypto';
import { header, parseBody } from './event';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ZodError } from 'zod';
import { operatorRights } from '../authz/rights';
import { csrfMatches, destroySession, loadSession, readSessionCookie, updateSession, type Session } from '../auth/sessions';
import { sessionPolicy } from '../auth/signin';
import { requireRecentStepUp } from '../auth/stepup';
import { ApiError, badRequest, forbidden, isApiError, notFound, unauthorized } from '../errors';
import type { Config } from '../config';
import { logger } from '../log';
import type { ConsoleRuntime } from '../runtime';
import { crossSiteRequest, type BrowserPolicy } from './browser';
import { findRoute, STATE_CHANGING, type Route, type RouteContext } from './route';

const OPERATOR_FACTS_MAX_AGE_MS = 60_000;

const json = (status: number, body: unknown, correlationId: string, extra: Partial<APIGatewayProxyStructuredResultV2> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-correlation-id': correlationId,
    ...(extra.headers as Record<string, string> | undefined),
  },
  body: body === undefined ? '' : JSON.stringify(body),
  ...(extra.cookies ? { cookies: extra.cookies } : {}),
});

/** Field errors of a zod failure, without echoing the rejected values (they may be secrets). */
export function validationError(e: ZodError, where: 'body' | 'query' | 'path'): ApiError {
  const issues = e.issues.map((i) => ({
    field: [where, ...i.path.map(String)].join('.'),
    message: i.message,
    ...(((i as { params?: { code?: string } }).params?.code) ? { code: (i as { params?: { code?: string } }).params!.code } : {}),
  }));
  const specific = issues.find((i) => i.code)?.code;
  return badRequest(specific ?? 'validation_failed', { errors: issues });
}


/** The console's browser policy (Hosting:PublicOrigin, Hosting:HstsMaxAge). */
export const consoleBrowserPolicy = (config: Config): BrowserPolicy => ({ publicOrigin: config.Hosting.PublicOrigin, hstsMaxAge: config.Hosting.HstsMaxAge });
/** The JSON body for a refusal's audit row; an unreadable body is simply absent there. */
function rawBodyOrNothing(event: APIGatewayProxyEventV2): unknown {
  try {
    return parseBody(event);
  } catch {
    return undefined;
  }
}

/**
 * The one HTTP pipeline of the console, in this order for every route, before any side effect:
 * route match (unknown → 404) → session → cross-site origin on POST/PUT/DELETE (403, audited
 * when an operator's session came with it) → CSRF on POST/PUT/DELETE (400) → operator (401) →
 * permission (403, audited) → step-up (403) → zod validation (400 with field details) → the
 * route's handler. Security headers: lib/http/lambda.ts (middleware) adds them to every answer.
 * Errors: ApiError as `{ code, ... }`; anything else `{ code: internal_error, correlationId }`.
 */
export function createHttpHandler(routes: Route[], getRuntime: () => ConsoleRuntime) {
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const correlationId = randomUUID();
    const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
    const path = event.rawPath ?? '/';
    let refused: ((e: ApiError) => Promise<void>) | undefined; // the route's own row for a pipeline refusal
    try {
      const rt = getRuntime();
      const { route, params } = findRoute(routes, method, path);
      if (!route || (route.helpdesk && !rt.config.Helpdesk.Enabled)) throw notFound();
      const sourceIp = event.requestContext?.http?.sourceIp ?? 'unknown';
      const policy = sessionPolicy(rt);
      const needsSession = route.access === 'presession' || route.access === 'operator' || STATE_CHANGING.has(route.method);
      let session: Session | undefined;
      if (needsSession || route.openInDevelopment) session = await loadSession(rt.store, readSessionCookie(event.cookies, header(event, 'cookie')), policy);

      // a state-changing call from a page of another site is refused before its token is even
      // looked at; only a signed-in operator's session makes it an audited event (the cookie is
      // SameSite=Strict: it only comes along from the same site), anonymous ones are logged
      if (STATE_CHANGING.has(route.method)) {
        const seen = crossSiteRequest(event, consoleBrowserPolicy(rt.config));
        if (seen) {
          const where = `${route.method} ${route.path}`;
          logger.warn('cross-site request refused', { correlationId, route: where, ...seen });
          const op = session?.operator;
          if (op) {
            await rt.audit.append({
              event: 'authz.decision',
              outcome: 'denied',
              reason: 'cross_site_request',
              actor: { id: op.guid, name: op.username, provider: op.provider, ip: sourceIp },
              correlationId,
              details: { route: where, ...seen },
            });
          }
          throw forbidden('cross_site_request');
        }
      }

      // CSRF: every state-changing call carries the session's token (console spec, Authentication 2)
      if (STATE_CHANGING.has(route.method) && route.access !== 'bearer') {
        const token = header(event, 'x-csrf-token');
        if (!token) throw badRequest('csrf_token_missing');
        if (!csrfMatches(session, token)) throw badRequest('csrf_token_invalid');
      }

      // from here a refusal of a signed-in operator is also the route's own audit row (a CSRF
      // refusal above is not: a forged cross-site request must not write rows in their name)
      const subject = route.refusalAudit && session?.operator ? route.refusalAudit({ params, body: rawBodyOrNothing(event) }) : undefined;
      if (subject) {
        const op = session!.operator!;
        refused = async (e) => {
          await rt.audit.append({ ...subject, outcome: 'denied', reason: e.code, actor: { id: op.guid, name: op.username, provider: op.provider, ip: sourceIp }, correlationId });
        };
      }

      const ctx: RouteContext = {
        rt,
        event,
        body: undefined,
        query: undefined,
        params,
        session,
        sourceIp,
        correlationId,
        header: (n) => header(event, n),
      };

      const devOpen = route.openInDevelopment && rt.config.Hosting.Environment === 'Development';
      if (route.access === 'operator' && !devOpen) {
        if (!session?.operator) throw unauthorized();
        const settings = await rt.settings();
        if (!settings) throw new ApiError(503, 'not_configured');
        let operator = session.operator;
        if (Date.now() - operator.factsAt > OPERATOR_FACTS_MAX_AGE_MS) {
          // re-read the operator's own facts: a disabled or deleted account loses its session
          const dir = await rt.directory();
          const dn = await dir.dnOfGuid(operator.guid);
          const facts = dn ? await dir.principalFacts(dn) : undefined;
          if (!facts || facts.userAccountControl & 0x2) {
            await destroySession(rt.store, session.id);
            throw unauthorized('session_revoked');
          }
          operator = { ...operator, dn: facts.dn, groupSids: facts.groupSids, sid: facts.sid, factsAt: Date.now() };
          await updateSession(rt.store, session, { operator });
          session.operator = operator;
        }
        ctx.operator = operator;
        ctx.rights = await operatorRights(rt.store, settings, operator);
        if (route.permission && !ctx.rights.permissions.has(route.permission)) {
          await rt.audit.append({
            event: 'authz.decision',
            outcome: 'denied',
            reason: 'missing_permission',
            actor: { id: operator.guid, name: operator.username, provider: operator.provider, ip: sourceIp },
            ...(subject ? { target: subject.target, ticket: subject.ticket } : {}),
            correlationId,
            details: { route: `${route.method} ${route.path}`, permission: route.permission },
          });
          await refused?.(forbidden('missing_permission'));
          refused = undefined;
          throw forbidden('forbidden', { permission: route.permission });
        }
        if (route.stepUp) await requireRecentStepUp(rt, session);
      }

      try {
        if (route.params) ctx.params = route.params.parse(params);
      } catch (e) {
        if (e instanceof ZodError) throw notFound(); // a malformed id answers like an unknown one
        throw e;
      }
      try {
        ctx.query = route.query ? route.query.parse(event.queryStringParameters ?? {}) : undefined;
      } catch (e) {
        if (e instanceof ZodError) throw validationError(e, 'query');
        throw e;
      }
      const rawBody = route.body ? parseBody(event) : undefined;
      try {
        ctx.body = route.body ? route.body.parse(rawBody ?? {}) : undefined;
      } catch (e) {
        if (e instanceof ZodError) throw validationError(e, 'body');
        throw e;
      }

      refused = undefined; // from here the route audits its own refusals
      const result = await route.handle(ctx);
      if (result.text !== undefined) {
        return {
          statusCode: result.status ?? 200,
          headers: { 'content-type': result.contentType ?? 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-correlation-id': correlationId, ...result.headers },
          body: result.text,
          ...(result.cookies ? { cookies: result.cookies } : {}),
        };
      }
      return json(result.status ?? 200, result.body, correlationId, { cookies: result.cookies, headers: result.headers });
    } catch (e) {
      if (isApiError(e)) {
        if (refused && e.status < 500) await refused(e);
        return json(e.status, e.body(), correlationId);
      }
      // internal errors: only a code and the correlation id leave the process; the log has the detail
      logger.error('unhandled error', { correlationId, method, path, error: e as Error });
      return json(500, { code: 'internal_error', correlationId }, correlationId);
    }
  };
}
