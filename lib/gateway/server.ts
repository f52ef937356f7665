import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Context } from 'aws-lambda';
import { retryAfterFor } from '../errors';
import { logOverload } from '../http/overload';
import { logger } from '../log';
import { httpApiEvent, httpApiResponse, RouteTable, type GatewayResponse } from './http-api';
import { InFlightLimit } from './in-flight';
import type { ServiceFunction, ServiceMap } from './service-map';

// The production HTTP gateway of a container: API Gateway's part (routes → payload 2.0 events →
// the same handlers the Lambda deployment runs), Lambda's invoke API for a function invoked by
// another (the password service), and the static app on the same origin (no serverless-offline).

export type Handler = (event: unknown, context: Context) => Promise<unknown>;
/** The handler of `functions/console/auth` + `handler` (bundled in an image, TypeScript under tsx). */
export type HandlerLoader = (module: string, exportName: string) => Promise<Handler>;

export interface GatewayOptions {
  map: ServiceMap;
  load: HandlerLoader;
  /** serve HTTP API routes (console, fleet) */
  http?: boolean;
  /** answer Lambda's Invoke API for these function names (the password service, on its internal network only) */
  invoke?: boolean;
  /** requests not routed to a function: the static app (GET/HEAD) */
  staticApp?: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  /** the header carrying the client address from a trusted reverse proxy in front (else the socket's) */
  clientIpHeader?: string;
  /**
   * The start budget (ms, Concurrency:StartBudget): a request to a function with a reserved
   * concurrency waits at most this long for its turn, then answers 503 `overloaded` (HTTP) or
   * Lambda's throttle (invoke). Default 2 s.
   */
  startBudgetMs?: number;
  /**
   * Reads with a deadline and their route keys ("GET /api/computers/{id}"): `ms` after its arrival
   * such a read must have done its work (the console's: readWorkMs, two thirds of
   * Concurrency:ReadBudget, the rest kept to answer). It is given a turn only while a run as long
   * as the function's longest recent one still ends by then (lib/gateway/in-flight.ts).
   */
  readDeadline?: { ms: number; routeKeys: ReadonlySet<string> };
  /** told of every refusal (the console audits it once a minute per reason) */
  onOverload?: (refusal: { function: string; route?: string; reason: string; retryAfterSeconds: number; correlationId?: string; inFlight?: Record<string, number> }) => void;
}

/** API Gateway's payload limit for HTTP APIs is 10 MB; Lambda's synchronous payload 6 MB: the smaller. */
export const MAX_REQUEST_BYTES = 6 * 1024 * 1024;

export function lambdaContext(fn: ServiceFunction, service: string): Context {
  const deadline = Date.now() + fn.timeout * 1000;
  const name = `${service}-${fn.name}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:container:lambda:local:0:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/container/${name}`,
    logStreamName: 'gateway',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

class FunctionTimeout extends Error {}

/** Invoke one function with its timeout, as Lambda would (a handler still running after it is abandoned). */
export async function invokeFunction(opts: GatewayOptions, fn: ServiceFunction, event: unknown): Promise<unknown> {
  const handler = await opts.load(fn.module, fn.exportName);
  const context = lambdaContext(fn, opts.map.service);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FunctionTimeout()), fn.timeout * 1000);
  });
  try {
    return await Promise.race([handler(event, context), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const json = (status: number, body: unknown, extra: Record<string, string> = {}): GatewayResponse => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...extra },
  body: Buffer.from(JSON.stringify(body)),
});

function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const API_PATHS = /^\/(api|health|openapi)(\/|$)/;
const START_BUDGET_MS = 2000;
const INVOKE = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** The gateway as a request listener (for an HTTP or HTTPS server). */
export function gatewayListener(opts: GatewayOptions): http.RequestListener {
  const routes = new RouteTable<ServiceFunction>();
  if (opts.http) for (const fn of opts.map.functions) for (const r of fn.routes) routes.add(r, fn);
  const byName = new Map<string, ServiceFunction>();
  for (const fn of opts.map.functions) {
    byName.set(fn.name, fn);
    byName.set(`${opts.map.service}-${fn.name}`, fn);
  }

  const answer = (res: http.ServerResponse, r: GatewayResponse) => {
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  };

  // in-flight requests per function, capped at its reserved concurrency as Lambda would (issue 28)
  const budgetMs = opts.startBudgetMs ?? START_BUDGET_MS;
  const limits = new Map<string, InFlightLimit>();
  for (const fn of opts.map.functions) if (fn.reservedConcurrency) limits.set(fn.name, new InFlightLimit(fn.reservedConcurrency, budgetMs));
  /** A turn of `fn` for a request that arrived at `arrivedAt`: its release, or undefined (refused, told to onOverload). */
  const turn = async (fn: ServiceFunction, arrivedAt: number, route?: string, correlationId?: string): Promise<(() => void) | undefined> => {
    const limit = limits.get(fn.name);
    if (!limit) return () => undefined;
    const doneBy = route && opts.readDeadline?.routeKeys.has(route) ? arrivedAt + opts.readDeadline.ms : undefined;
    const release = await limit.acquire(arrivedAt, doneBy);
    if (!release) {
      const refusal = { function: fn.name, route, reason: `in_flight:${fn.name}`, retryAfterSeconds: retryAfterFor(budgetMs), ...(correlationId ? { correlationId } : {}) };
      // logged once: by onOverload when given (the console's recordOverload), here otherwise
      (opts.onOverload ?? logOverload)({ ...refusal, inFlight: { ...limit.stats() } });
    }
    return release;
  };

  const handleInvoke = async (req: http.IncomingMessage, res: http.ServerResponse, name: string, arrivedAt: number) => {
    // the function name may be the full one (<service>-<stage>-<fn>) the console is configured with
    const fn = byName.get(name) ?? opts.map.functions.find((f) => name.endsWith(`-${f.name}`));
    if (!fn || req.method !== 'POST') return answer(res, json(404, { Type: 'User', message: 'Function not found' }));
    const release = await turn(fn, arrivedAt);
    // as Lambda throttles a function at its reserved concurrency (the SDK names it TooManyRequestsException)
    if (!release) return answer(res, json(429, { Type: 'User', message: 'Rate Exceeded.', Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded' }, { 'x-amzn-errortype': 'TooManyRequestsException' }));
    try {
      await invokeWithin(req, res, fn);
    } finally {
      release();
    }
  };

  const invokeWithin = async (req: http.IncomingMessage, res: http.ServerResponse, fn: ServiceFunction) => {
    const body = await readBody(req);
    if (!body) return answer(res, json(413, { Type: 'User', message: 'Request payload too large' }));
    let payload: unknown;
    try {
      payload = body.length ? JSON.parse(body.toString('utf8')) : {};
    } catch {
      return answer(res, json(400, { Type: 'User', message: 'Could not parse request body into json' }));
    }
    try {
      const result = await invokeFunction(opts, fn, payload);
      answer(res, { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(result ?? null)) });
    } catch (e) {
      // as Lambda: 200 with the error in the payload and X-Amz-Function-Error; the error's name only
      logger.error('function failed', { function: fn.name, error: (e as Error).name });
      const type = e instanceof FunctionTimeout ? 'Sandbox.Timedout' : 'Error';
      answer(res, { status: 200, headers: { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled' }, body: Buffer.from(JSON.stringify({ errorType: type, errorMessage: type })) });
    }
  };

  const handleHttp = async (req: http.IncomingMessage, res: http.ServerResponse, arrivedAt: number): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const matched = routes.match(req.method ?? 'GET', url.pathname);
    // API paths are the functions' (CloudFront's /api/* behaviour): the catch-all function, or a
    // 404 like API Gateway's; every other path is the static app's
    const apiPath = API_PATHS.test(url.pathname);
    if (!apiPath && opts.staticApp) return false;
    if (!matched) {
      answer(res, json(404, { code: 'not_found' }));
      return true;
    }
    const correlationId = randomUUID();
    const release = await turn(matched.target, arrivedAt, matched.routeKey, correlationId);
    if (!release) {
      const retryAfterSeconds = retryAfterFor(budgetMs);
      // an answer of the API like any other: its correlation id (also in the refusal's log line)
      answer(res, json(503, { code: 'overloaded', retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds), 'x-correlation-id': correlationId }));
      return true;
    }
    try {
      await routeWithin(req, res, matched, arrivedAt);
    } finally {
      release();
    }
    return true;
  };

  const routeWithin = async (req: http.IncomingMessage, res: http.ServerResponse, matched: NonNullable<ReturnType<RouteTable<ServiceFunction>['match']>>, arrivedAt: number) => {
    const body = await readBody(req);
    if (!body) {
      answer(res, json(413, { code: 'body_too_large' }));
      return;
    }
    const forwarded = opts.clientIpHeader ? String(req.headers[opts.clientIpHeader] ?? '').split(',')[0].trim() : '';
    const sourceIp = forwarded || (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    // timeEpoch is the arrival: the function's own start budget counts the wait for a turn
    const event = httpApiEvent(req, body, matched, sourceIp, arrivedAt);
    try {
      answer(res, httpApiResponse(await invokeFunction(opts, matched.target, event)));
    } catch (e) {
      logger.error('function failed', { function: matched.target.name, route: matched.routeKey, error: (e as Error).name });
      answer(res, e instanceof FunctionTimeout ? json(503, { code: 'function_timeout' }) : json(500, { code: 'internal_error' }));
    }
  };

  return (req, res) => {
    const arrivedAt = Date.now();
    void (async () => {
      const invoke = INVOKE.exec((req.url ?? '').split('?')[0]);
      if (invoke && opts.invoke) return handleInvoke(req, res, decodeURIComponent(invoke[1]), arrivedAt);
      if (opts.http && (await handleHttp(req, res, arrivedAt))) return;
      if (opts.staticApp) return opts.staticApp(req, res);
      answer(res, json(404, { code: 'not_found' }));
    })().catch((e: unknown) => {
      logger.error('gateway failed', { error: (e as Error).name });
      if (!res.headersSent) answer(res, json(500, { code: 'internal_error' }));
      else res.destroy();
    });
  };
}

export const createGateway = (opts: GatewayOptions): http.Server => http.createServer(gatewayListener(opts));
