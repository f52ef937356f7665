import http from 'node:http';
import path from 'node:path';
import { listen } from '../lib/gateway/listen';
import { staticApp } from '../lib/gateway/static-files';
import { securityHeaders } from '../lib/http/browser';

// Local stand-in for CloudFront in front of the console: the built web app from its folder
// (index.html for every app path, like the distribution's 404 → /index.html rule), and /api/*,
// /health/* and /openapi/* passed to the console API (serverless-offline) with the request's own
// headers (Origin, Cookie, X-CSRF-TOKEN): the app and the API share one origin, so the
// `__Host-hdc` cookie and the CSRF check work unchanged.

const PROXIED = /^\/(api|health|openapi)(\/|$)/;
// hop-by-hop headers are the connection's own, never forwarded
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export interface WebServerOptions {
  port: number;
  apiUrl: string;
  dist: string;
  publicOrigin?: string;
}

export function createWebServer(opts: WebServerOptions): http.Server {
  const api = new URL(opts.apiUrl);
  const security = securityHeaders({ publicOrigin: opts.publicOrigin, hstsMaxAge: 0 });

  const proxy = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP.has(k)));
    headers.host = api.host;
    headers['x-forwarded-host'] = req.headers.host ?? '';
    const up = http.request({ hostname: api.hostname, port: api.port, method: req.method, path: req.url, headers }, (r) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(r.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
      res.writeHead(r.statusCode ?? 502, out);
      r.pipe(res);
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...security });
      res.end(JSON.stringify({ code: 'api_unreachable' }));
    });
    req.pipe(up);
  };

  const file = staticApp(opts.dist, security);

  return http.createServer((req, res) => (PROXIED.test(req.url ?? '') ? proxy(req, res) : file(req, res)));
}

if (require.main === module) {
  const port = Number(process.env.HDC_WEB_PORT ?? 3010);
  const server = createWebServer({
    port,
    apiUrl: process.env.HDC_WEB_API_URL ?? 'http://127.0.0.1:3000',
    dist: process.env.HDC_WEB_DIST ?? path.join(__dirname, '../web/console/dist'),
    publicOrigin: `http://127.0.0.1:${port}`,
  });
  void listen(server, port, '127.0.0.1').then(() => process.stdout.write(`web app on http://127.0.0.1:${port}\n`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
