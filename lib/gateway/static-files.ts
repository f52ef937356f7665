import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';

// A single-page app's built folder served as the CloudFront distribution serves it: index.html for
// every app path (its 404 → /index.html rule), a missing /assets/* file a 404, hashed assets
// immutable and index.html asked again each time (a new build shows at once). Used by the
// container gateway and by the local stack's stand-in for CloudFront (local/web-server.ts).

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export function staticApp(dist: string, security: Record<string, string>) {
  const distRoot = path.resolve(dist);
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'application/json; charset=utf-8', ...security });
      return res.end(JSON.stringify({ code: 'method_not_allowed' }));
    }
    let p: string;
    try {
      p = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      p = '/';
    }
    let full = path.resolve(distRoot, `.${p}`);
    const asset = full.startsWith(distRoot + path.sep) && fs.existsSync(full) && fs.statSync(full).isFile();
    if (!asset) {
      // an app path (/computers/…, /approvals/<id>): the app itself; a missing asset: 404
      if (p.startsWith('/assets/')) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...security });
        return res.end('not found');
      }
      full = path.join(distRoot, 'index.html');
    }
    const body = fs.readFileSync(full);
    const hashed = full.includes(`${path.sep}assets${path.sep}`);
    res.writeHead(200, {
      'content-type': TYPES[path.extname(full)] ?? 'application/octet-stream',
      'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...security,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
