import { operatorRights } from '../../authz/rights';
import { destroySession, updateSession } from '../../auth/sessions';
import { noteStepUpRequest, requireRecentStepUp } from '../../auth/stepup';
import { ApiError, forbidden, unauthorized } from '../../errors';
import type { ConsoleRuntime } from '../../runtime';
import type { Route, RouteContext } from '../route';
import { exchangeOf, type HttpRequest } from './exchange';

type ConsoleRequest = HttpRequest<Route, RouteContext, ConsoleRuntime>;

const OPERATOR_FACTS_MAX_AGE_MS = 60_000;

/** Does the route need a signed-in operator? (the OpenAPI document is open in development) */
const operatorRoute = (request: ConsoleRequest) => {
  const { route, rt } = exchangeOf(request);
  const devOpen = route!.openInDevelopment && rt!.config.Hosting.Environment === 'Development';
  return route!.access === 'operator' && !devOpen;
};

/**
 * The signed-in operator of the session (401 otherwise) and their rights. Their directory facts
 * are re-read when older than 60 s: a disabled or deleted account loses its session (decision 8).
 */
export function signedInOperator() {
  return {
    name: 'signedInOperator',
    before: async (request: ConsoleRequest) => {
      if (!operatorRoute(request)) return;
      const { rt, ctx } = exchangeOf(request);
      const session = ctx!.session;
      if (!session?.operator) throw unauthorized();
      const settings = await rt!.settings();
      if (!settings) throw new ApiError(503, 'not_configured');
      let operator = session.operator;
      if (Date.now() - operator.factsAt > OPERATOR_FACTS_MAX_AGE_MS) {
        const dir = await rt!.directory();
        const dn = await dir.dnOfGuid(operator.guid);
        const facts = dn ? await dir.principalFacts(dn) : undefined;
        if (!facts || facts.userAccountControl & 0x2) {
          await destroySession(rt!.store, session.id);
          throw unauthorized('session_revoked');
        }
        operator = { ...operator, dn: facts.dn, groupSids: [...facts.groupSids, ...(operator.mappedGroupSids ?? [])], sid: facts.sid, factsAt: Date.now() };
        await updateSession(rt!.store, session, { operator });
        session.operator = operator;
      }
      ctx!.operator = operator;
      ctx!.rights = await operatorRights(rt!.store, settings, operator);
    },
  };
}

/** The console's guard: the route's permission, in any delegation (403, audited `authz.decision`). */
export function permissionGuard() {
  return {
    name: 'permissionGuard',
    before: async (request: ConsoleRequest) => {
      if (!operatorRoute(request)) return;
      const ex = exchangeOf(request);
      const { route, ctx, rt } = ex;
      const operator = ctx!.operator!;
      if (!route!.permission || ctx!.rights!.permissions.has(route!.permission)) return;
      const subject = ex.refusalSubject;
      await rt!.audit.append({
        event: 'authz.decision',
        outcome: 'denied',
        reason: 'missing_permission',
        actor: { id: operator.guid, name: operator.username, provider: operator.provider, ip: ex.sourceIp },
        ...(subject ? { target: subject.target, ticket: subject.ticket } : {}),
        correlationId: ex.correlationId,
        details: { route: `${route!.method} ${route!.path}`, permission: route!.permission },
      });
      await ex.refused?.(forbidden('missing_permission'));
      ex.refused = undefined;
      throw forbidden('forbidden', { permission: route!.permission });
    },
  };
}

/** A recent step-up in the instance's mode, for routes that declare it (403 `reauth_required`). */
export function stepUp() {
  return {
    name: 'stepUp',
    before: async (request: ConsoleRequest) => {
      if (!operatorRoute(request)) return;
      const { route, rt, ctx, sourceIp, correlationId, params } = exchangeOf(request);
      // the request a strict step-up is asked for: a passkey assertion must have been made for it (issue 32)
      noteStepUpRequest(`${route!.method} ${route!.path}`, Object.values(params).join('/'));
      if (route!.stepUp) await requireRecentStepUp(rt!, ctx!.session!, { sourceIp, correlationId });
    },
  };
}
