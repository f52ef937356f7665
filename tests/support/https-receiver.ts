import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

// A real HTTPS receiver on loopback (notification channels, a console that stops answering), its
// certificate signed by the local test CA (the directory's, which the stack's processes trust
// through NODE_EXTRA_CA_CERTS). It records every request and answers `answer(req)` (204 by default).

export interface Received {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface HttpsReceiver {
  url: string;
  received: Received[];
  /** the status to answer, or a status with a JSON body (a console's status answer) */
  answer: (r: Received) => number | { status: number; json: unknown };
  close(): Promise<void>;
}

export async function startHttpsReceiver(caFile: string): Promise<HttpsReceiver> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-receiver-'));
  const caKey = path.join(path.dirname(caFile), 'ca.key');
  fs.writeFileSync(path.join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1\n');
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', `${dir}/key.pem`, '-out', `${dir}/req.csr`], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', `${dir}/req.csr`, '-CA', caFile, '-CAkey', caKey, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '2', '-extfile', `${dir}/ext`, '-out', `${dir}/cert.pem`], { stdio: 'ignore' });
  const out: HttpsReceiver = { url: '', received: [], answer: () => 204, close: async () => undefined };
  const server = https.createServer({ key: fs.readFileSync(`${dir}/key.pem`), cert: fs.readFileSync(`${dir}/cert.pem`) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      out.received.push(r);
      const a = out.answer(r);
      if (typeof a === 'number') res.writeHead(a).end();
      else res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  out.url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  out.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}
