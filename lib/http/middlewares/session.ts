import { AUTHZ_REVISION_KEY, rightsInputsOncePerRequest, shareAuthzRevisionRead } from '../../authz/rights';
import { csrfMatches, loadSession, readSessionCookie, sessionKey } from '../../auth/sessions';
import { SETTINGS_KEY, shareSettingsRead } from '../../setup/settings';
import type { Store } from '../../store';
import { getRecords, type Rec } from '../../store/records';
import { sessionPolicy } from '../../auth/signin';
import { badRequest } from '../../errors';
import { parseBody } from '../event';
import type { ConsoleRuntime } from '../../runtime';
import { STATE_CHANGING, type Route, type RouteContext } from '../route';
import { exchangeOf, type HttpRequest } from './exchange';

type ConsoleRequest = HttpRequest<Route, RouteContext, ConsoleRuntime>;

/** The console's route context, built once the route is known (its handler and the middlewares fill it). */
export function consoleContext() {
  return {
    name: 'consoleContext',
    before: (request: ConsoleRequest) => {
      const ex = exchangeOf(request);
      ex.ctx = {
        rt: ex.rt!,
        event: request.event,
        body: undefined,
        query: undefined,
        params: ex.params,
        session: undefined,
        sourceIp: ex.sourceIp,
        correlationId: ex.correlationId,
        header: ex.header,
      };
    },
  };
}

/**
 * The session of the cookie, for routes that need one: signed-in and pre-session routes, every
 * state-changing call (its CSRF token is the session's), the OpenAPI document in development.
 */
export function session() {
  return {
    name: 'session',
    before: async (request: ConsoleRequest) => {
      const ex = exchangeOf(request);
      const route = ex.route!;
      const needsSession = route.access === 'presession' || route.access === 'operator' || STATE_CHANGING.has(route.method);
      if (!needsSession && !route.openInDevelopment) return;
      const id = readSessionCookie(request.event.cookies, ex.header('cookie'));
      // an operator route's guard needs the settings and the roles and delegations: the session,
      // the settings and the rights' revision are one batch read, shared with the route for this
      // request (lib/request-scope); the roles and delegations follow the revision
      const read = route.access === 'operator' ? operatorReads(ex.rt!.store, id) : undefined;
      ex.ctx!.session = await loadSession(ex.rt!.store, id, sessionPolicy(ex.rt!), read);
    },
  };
}

/** One BatchGetItem for what every operator request reads first; the session's item is answered. */
function operatorReads(store: Store, sessionId: string | undefined): Promise<Rec<unknown> | undefined> {
  const session = sessionKey(sessionId);
  const batch = getRecords(store, [SETTINGS_KEY, AUTHZ_REVISION_KEY, ...(session ? [session] : [])]);
  shareSettingsRead(batch.then(([settings]) => settings));
  shareAuthzRevisionRead(batch.then(([, revision]) => revision));
  void rightsInputsOncePerRequest(store);
  return batch.then(([, , found]) => found);
}

/** CSRF: every state-changing call carries the session's token (console spec, Authentication 2; decision 9). */
export function csrf() {
  return {
    name: 'csrf',
    before: (request: ConsoleRequest) => {
      const ex = exchangeOf(request);
      const route = ex.route!;
      if (!STATE_CHANGING.has(route.method) || route.access === 'bearer') return;
      const token = ex.header('x-csrf-token');
      if (!token) throw badRequest('csrf_token_missing');
      if (!csrfMatches(ex.ctx!.session, token)) throw badRequest('csrf_token_invalid');
    },
  };
}

/**
 * From here a refusal of a signed-in operator is also the route's own audit row (`refusalAudit`,
 * decision 63); a CSRF refusal before is not: a forged cross-site request must not write rows in
 * their name. The handler clears it: from there the route audits its own refusals.
 */
export function refusalAudit() {
  return {
    name: 'refusalAudit',
    before: (request: ConsoleRequest) => {
      const ex = exchangeOf(request);
      const { route, ctx } = ex;
      const op = ctx!.session?.operator;
      if (!route!.refusalAudit || !op) return;
      const subject = route!.refusalAudit({ params: ex.params, body: rawBodyOrNothing(request) });
      if (!subject) return;
      ex.refused = async (e) => {
        await ex.rt!.audit.append({ ...subject, outcome: 'denied', reason: e.code, actor: { id: op.guid, name: op.username, provider: op.provider, ip: ex.sourceIp }, correlationId: ex.correlationId });
      };
      ex.refusalSubject = subject;
    },
  };
}

/** The JSON body for a refusal's audit row; an unreadable body is simply absent there. */
function rawBodyOrNothing(request: ConsoleRequest): unknown {
  try {
    return parseBody(request.event);
  } catch {
    return undefined;
  }
}
