'use strict';
// Local development only: makes serverless-offline's HTTP gateway answer like the API Gateway the
// apps deploy behind (no CORS configuration), so the browser-facing promises hold locally too:
//   - no CORS: serverless-offline reflects any Origin with credentials; API Gateway without a
//     `cors` setting adds no Access-Control-* header, so the apps are same-origin only;
//   - every answer of the gateway itself is `{ code }` with the security headers (hapi answers
//     a path whose percent-encoding does not decode, a bad cookie header, ... with its own body);
//     such a path names no resource: 404 not_found, what the apps' own router answers for it;
//   - in-flight requests per function capped at its reserved concurrency (issue 28), as Lambda caps
//     a function's instances and the container gateway its in-flight requests (lib/gateway/in-flight):
//     serverless-offline would otherwise start a new worker for every request waiting; one that
//     cannot get a turn within the start budget answers 503 `overloaded` with Retry-After;
//   - the gateway listens as the container gateway does (lib/gateway/listen.ts): a backlog of 4096
//     and, on Linux, several sockets on its port, so a busy thread still takes in a burst's new
//     connections (hapi listens with Node's defaults: one connection accepted per turn of the loop).
// Nothing here runs outside `serverless offline`: the hook is the plugin's start.
const { randomUUID } = require('node:crypto');
const net = require('node:net');
const { require: tsxRequire } = require('tsx/cjs/api');

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-expose-headers',
  'access-control-max-age',
];
const CODES = { 400: 'bad_request', 404: 'not_found', 405: 'method_not_allowed', 413: 'body_too_large', 415: 'unsupported_media_type' };

function decodable(path) {
  try {
    for (const segment of path.split('/')) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

class OfflineGateway {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'before:offline:start:init': () => this.widenBacklog(),
      'after:offline:start:init': () => {
        this.restoreListen?.();
        this.install();
      },
    };
  }

  /** Until the servers are up, a listen as hapi calls it gets the gateways' backlog and acceptors (lib/gateway/listen.ts). */
  widenBacklog() {
    const { gatewayListenArgs } = tsxRequire('../lib/gateway/listen.ts', __filename);
    const listen = net.Server.prototype.listen;
    net.Server.prototype.listen = function (...args) {
      return listen.apply(this, gatewayListenArgs(this, args));
    };
    this.restoreListen = () => {
      net.Server.prototype.listen = listen;
    };
  }

  /** The security headers of the app this service is (console or fleet plane), from its own configuration. */
  headers() {
    const browser = tsxRequire('../lib/http/browser.ts', __filename);
    if (this.serverless.service.service === 'hdc-fleet') {
      const { loadFleetConfig } = tsxRequire('../lib/fleet/config.ts', __filename);
      const c = loadFleetConfig(process.env);
      return browser.securityHeaders({ publicOrigin: c.FLEET_PUBLIC_ORIGIN, hstsMaxAge: c.FLEET_HSTS_MAX_AGE });
    }
    const { loadConfig } = tsxRequire('../lib/config/index.ts', __filename);
    const { config } = loadConfig(process.env);
    return browser.securityHeaders({ publicOrigin: config.Hosting.PublicOrigin, hstsMaxAge: config.Hosting.HstsMaxAge });
  }

  install() {
    const offline = this.serverless.pluginManager.plugins.find((p) => p.constructor.name === 'ServerlessOffline');
    let server;
    try {
      server = offline?.internals().getApiGatewayServer();
    } catch {
      server = undefined; // no HTTP event in this service: nothing to shape
    }
    if (!server) return;
    const security = this.headers();
    const answer = (h, status, code) => {
      const r = h.response(JSON.stringify({ code })).code(status);
      r.type('application/json; charset=utf-8');
      r.header('cache-control', 'no-store');
      for (const [k, v] of Object.entries(security)) r.header(k, v);
      return r;
    };
    server.ext('onRequest', (request, h) => (decodable(request.url.pathname) ? h.continue : answer(h, 404, 'not_found').takeover()));
    this.capInFlight(server, security);
    // the function's own status: serverless-offline turns an OPTIONS answer into 200 (preflight)
    server.ext('onPostHandler', (request, h) => {
      if (!request.response.isBoom) request.app.hdcStatus = request.response.statusCode;
      return h.continue;
    });
    server.ext('onPreResponse', (request, h) => {
      const res = request.response;
      if (res.isBoom) {
        const status = res.output.statusCode;
        return answer(h, status, CODES[status] ?? (status >= 500 ? 'internal_error' : 'bad_request'));
      }
      for (const k of CORS_HEADERS) delete res.headers[k];
      if (request.app.hdcStatus) res.statusCode = request.app.hdcStatus;
      for (const [k, v] of Object.entries(security)) if (!(k in res.headers)) res.header(k, v);
      return h.continue;
    });
  }

  /** Each function's in-flight requests at its `reservedConcurrency`, waiting within the start budget. */
  capInFlight(server, security) {
    const { InFlightLimit } = tsxRequire('../lib/gateway/in-flight.ts', __filename);
    const { retryAfterFor } = tsxRequire('../lib/errors.ts', __filename);
    const consoleApp = this.serverless.service.service === 'hdc-console';
    let budgetMs = 2000;
    // a refusal is logged once: by the console's recordOverload, which audits it too; by logOverload otherwise
    let record = tsxRequire('../lib/http/overload.ts', __filename).logOverload;
    let readDeadline;
    if (consoleApp) {
      const { loadConfig } = tsxRequire('../lib/config/index.ts', __filename);
      const { config } = loadConfig(process.env);
      budgetMs = config.Concurrency.StartBudget * 1000;
      // a read bounded by Concurrency:ReadBudget gets a turn only while it can still do its work in time
      const { loadRouteTables } = tsxRequire('./route-tables.ts', __filename);
      const { readWorkMs } = tsxRequire('../lib/http/middlewares/admission.ts', __filename);
      readDeadline = { ms: readWorkMs(config), routeKeys: new Set(loadRouteTables().readBudgetRouteKeys()) };
      // the console audits a refusal once a minute per reason, as its functions do; loaded now, at
      // start: compiling it at the first refusal blocked this process (every request) for seconds
      const overloads = tsxRequire('../lib/http/console-overload.ts', __filename);
      overloads.prepareConsoleOverload();
      record = overloads.recordConsoleOverload;
    }
    const byRoute = new Map();
    for (const [name, fn] of Object.entries(this.serverless.service.functions ?? {})) {
      const reserved = Number(fn.reservedConcurrency);
      if (!Number.isInteger(reserved) || reserved < 1) continue;
      const limit = new InFlightLimit(reserved, budgetMs);
      for (const ev of fn.events ?? []) {
        // serverless-offline rewrites each httpApi event to its routeKey ("GET /api/x") before this hook
        const key = ev.httpApi && typeof ev.httpApi === 'object' ? (ev.httpApi.routeKey ?? `${String(ev.httpApi.method).toUpperCase()} ${ev.httpApi.path}`) : undefined;
        if (key && key !== '$default') byRoute.set(key, { name, limit });
      }
    }
    const skipped = Object.entries(this.serverless.service.functions ?? {}).filter(([, fn]) => !Number.isInteger(Number(fn.reservedConcurrency))).map(([n, fn]) => `${n}=${JSON.stringify(fn.reservedConcurrency)}`);
    process.stdout.write(`offline gateway: in-flight caps on ${byRoute.size} routes (start budget ${budgetMs} ms)${skipped.length ? `; no cap: ${skipped.join(', ')}` : ''}\n`);
    server.ext('onPreAuth', async (request, h) => {
      const routeKey = `${request.route.method.toUpperCase()} ${request.route.path}`;
      const entry = byRoute.get(routeKey);
      if (!entry) return h.continue;
      const doneBy = readDeadline?.routeKeys.has(routeKey) ? request.info.received + readDeadline.ms : undefined;
      const release = await entry.limit.acquire(request.info.received, doneBy);
      if (release) {
        request.app.hdcRelease = release;
        return h.continue;
      }
      const retryAfterSeconds = retryAfterFor(budgetMs);
      // an answer of the API like any other: its correlation id, also in the log line
      const correlationId = randomUUID();
      const refusal = { function: entry.name, route: routeKey, reason: `in_flight:${entry.name}`, retryAfterSeconds, correlationId };
      record({ ...refusal, inFlight: entry.limit.stats() });
      const r = h.response(JSON.stringify({ code: 'overloaded', retryAfterSeconds })).code(503);
      r.type('application/json; charset=utf-8');
      r.header('cache-control', 'no-store');
      r.header('retry-after', String(retryAfterSeconds));
      r.header('x-correlation-id', correlationId);
      for (const [k, v] of Object.entries(security)) r.header(k, v);
      return r.takeover();
    });
    // the turn is given back when the answer has gone (or the client went away)
    server.events.on('response', (request) => request.app.hdcRelease?.());
  }
}

module.exports = OfflineGateway;
