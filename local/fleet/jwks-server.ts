import http from 'node:http';
import { issuerKey } from './issuer';

// Serves the dev issuer's JWKS on loopback: GET /.well-known/jwks.json (the platform's path).
async function main() {
  const port = Number(process.argv[2] ?? 4003);
  const { publicJwk } = await issuerKey();
  const body = JSON.stringify({ keys: [publicJwk] });
  http
    .createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/.well-known/jwks.json') {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
      } else res.writeHead(404).end();
    })
    .listen(port, '127.0.0.1', () => process.stdout.write(`dev access-platform JWKS on http://127.0.0.1:${port}/.well-known/jwks.json\n`));
}
void main();
