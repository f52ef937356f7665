import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

// The local console's HTTPS front (npm start): the fleet plane polls consoles over HTTPS only,
// and serverless-offline serves plain HTTP. Usage: https-front.ts <port> <key.pem> <cert.pem> <http target origin>
const [port, keyFile, certFile, target] = process.argv.slice(2);
const to = new URL(target);
https
  .createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) }, (req, res) => {
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  })
  .listen(Number(port), '127.0.0.1');
