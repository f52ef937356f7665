import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Context } from 'aws-lambda';
import { logger } from '../log';
import { httpApiEvent, httpApiResponse, RouteTable, type GatewayResponse } from './http-api';
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

  const handleInvoke = async (req: http.IncomingMessage, res: http.ServerResponse, name: string) => {
    // the function name may be the full one (<service>-<stage>-<fn>) the console is configured with
    const fn = byName.get(name) ?? opts.map.functions.find((f) => name.endsWith(`-${f.name}`));
    if (!fn || req.method !== 'POST') return answer(res, json(404, { Type: 'User', message: 'Function not found' }));
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

  const handleHttp = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> => {
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
    const body = await readBody(req);
    if (!body) {
      answer(res, json(413, { code: 'body_too_large' }));
      return true;
    }
    const forwarded = opts.clientIpHeader ? String(req.headers[opts.clientIpHeader] ?? '').split(',')[0].trim() : '';
    const sourceIp = forwarded || (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const event = httpApiEvent(req, body, matched, sourceIp);
    try {
      answer(res, httpApiResponse(await invokeFunction(opts, matched.target, event)));
    } catch (e) {
      logger.error('function failed', { function: matched.target.name, route: matched.routeKey, error: (e as Error).name });
      answer(res, e instanceof FunctionTimeout ? json(503, { code: 'function_timeout' }) : json(500, { code: 'internal_error' }));
    }
    return true;
  };

  return (req, res) => {
    void (async () => {
      const invoke = INVOKE.exec((req.url ?? '').split('?')[0]);
      if (invoke && opts.invoke) return handleInvoke(req, res, decodeURIComponent(invoke[1]));
      if (opts.http && (await handleHttp(req, res))) return;
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
