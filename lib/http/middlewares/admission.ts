import { overloaded, overloadReason, retryAfterFor } from '../../errors';
import type { AuditChain } from '../../audit';
import type { Store } from '../../store';
import { setRequestDeadline } from '../../request-scope';
import { recordOverload } from '../overload';
import { exchangeOf, type HttpRequest } from './exchange';

/** middy's early timeout (`timeoutEarlyResponse`): the invocation's remaining time ran out */
const isEarlyTimeout = (e: unknown) =>
  e instanceof Error && e.name === 'TimeoutError' && (e as { cause?: { package?: string } }).cause?.package === '@middy/core';

type Admitting = { config: { Concurrency: { StartBudget: number; ReadBudget: number } }; store: Store; audit: AuditChain };

const isRead = (method: string | undefined) => method === 'GET' || method === 'HEAD';

/**
 * Whether Concurrency:ReadBudget bounds a route's answers: a read (GET, HEAD) not slow by nature.
 * The pipeline's deadline below and the gateways' turns (functions/console/all-routes.ts,
 * readBudgetRouteKeys) both ask this.
 */
export const boundByReadBudget = (route: { method: string; longRead?: boolean }) => isRead(route.method) && !route.longRead;

/** When this instance (a Lambda instance, a serverless-offline worker, a container process) loaded the pipeline. */
const INSTANCE_STARTED_AT = Date.now();

/**
 * Bounded concurrency (issue 28): a request that reaches its handler later than the start budget
 * after it arrived (the gateway's `requestContext.timeEpoch`: queued at the gateway, waiting for
 * an instance) is refused 503 `overloaded` with Retry-After before any work; so is one the
 * directory could not give a connection in time. Each refusal is logged, and audited once a minute
 * per reason (lib/http/overload.ts). The error itself is answered by `errorResponse`.
 * A request that arrived before its instance started is not refused by the start budget: the
 * instance was started for it (a cold start), and refusing it would throw that start away and
 * make the retry pay for another. The CI found it: ten parallel requests on serverless-offline,
 * four of them given new workers whose start on two busy cores outlasted the 2 s, answered 503.
 * Its read still has its deadline (readDeadline), counted from its arrival.
 * A read still running when the function's time is nearly up (middy's early timeout, thrown just
 * before Lambda would end the invocation) is refused the same way, reason `deadline`: it changed
 * nothing, so a retry is safe. Any other method keeps the plain 500: its change may have happened.
 */
export function admission(now: () => number = Date.now, instanceStartedAt = INSTANCE_STARTED_AT) {
  return {
    name: 'admission',
    before: (request: HttpRequest<any, any, Admitting>) => {
      const ex = exchangeOf(request);
      const arrived = request.event.requestContext?.timeEpoch;
      const budgetMs = ex.rt!.config.Concurrency.StartBudget * 1000;
      if (typeof arrived !== 'number' || budgetMs <= 0 || arrived < instanceStartedAt) return;
      if (now() - arrived > budgetMs) throw overloaded('start_budget', retryAfterFor(budgetMs));
    },
    onError: async (request: HttpRequest<any, any, Admitting>) => {
      const ex = exchangeOf(request);
      if (isEarlyTimeout(request.error) && isRead(ex?.method) && ex.rt) {
        request.error = overloaded('deadline', retryAfterFor(ex.rt.config.Concurrency.StartBudget * 1000));
      }
      const reason = overloadReason(request.error);
      if (reason === undefined || !ex?.rt) return;
      const retryAfterSeconds = Number((request.error as { details?: { retryAfterSeconds?: number } }).details?.retryAfterSeconds ?? 1);
      const route = ex.route ? `${ex.route.method} ${ex.route.path}` : undefined;
      await recordOverload(ex.rt, { reason, retryAfterSeconds, correlationId: ex.correlationId, function: request.context?.functionName, route });
    },
  };
}

/**
 * The share of a read's budget its directory reads get (2 s of 3): the rest is kept to answer a
 * refusal within the budget. bench/load's overload on serverless-offline found refusals made at
 * the full budget answered 0.1 to 1.7 s late: a refusal's once-a-minute audit window is a store
 * write, and it waits for the writer's lock the overload keeps busy.
 */
export const DIRECTORY_SHARE = 2 / 3;

/**
 * How long after its arrival a read bound by Concurrency:ReadBudget must have done its work (ms):
 * DIRECTORY_SHARE of the budget. The pipeline's deadline (below) and the gateways' turns (a read is
 * given one only while a run can still end by then) both use it: bench/load's overload found a
 * third of the container gateway's turns given to reads that then reached their function too late
 * to finish by it (refused there for `deadline` or `start_budget`, 107 a second), each a run taken
 * from a read that could have been served.
 */
export const readWorkMs = (config: { Concurrency: { ReadBudget: number } }) => config.Concurrency.ReadBudget * 1000 * DIRECTORY_SHARE;

/**
 * A read's answer budget (issue 28, after bench/load on serverless-offline: reads admitted in time
 * then ran 21–29 s, each directory wait bounded only by Directory:OperationTimeout while the
 * overload starved the DCs): a GET or HEAD is answered within Concurrency:ReadBudget of its
 * arrival. The directory's deadline (DIRECTORY_SHARE of the budget) goes into the request scope,
 * and every directory read the request starts is given what is left of it (lib/directory/pool.ts):
 * one still waiting then is answered 503 `overloaded`, reason `deadline`. Changes never get one (a change cut short has an unknown
 * outcome), nor do the reads slow by nature (`longRead`: diagnostics, exports, the audit walk).
 * Placed after the route match, before the session (whose directory reads it bounds too).
 */
export function readDeadline(now: () => number = Date.now) {
  return {
    name: 'readDeadline',
    before: (request: HttpRequest<{ longRead?: boolean }, any, Admitting>) => {
      const ex = exchangeOf(request);
      const workMs = readWorkMs(ex.rt!.config);
      if (!boundByReadBudget({ method: ex.method, longRead: ex.route?.longRead }) || workMs <= 0) return;
      const timeEpoch = request.event.requestContext?.timeEpoch;
      const arrived = typeof timeEpoch === 'number' ? timeEpoch : now();
      setRequestDeadline({ at: arrived + workMs, retryAfterSeconds: retryAfterFor(ex.rt!.config.Concurrency.StartBudget * 1000) });
    },
  };
}
