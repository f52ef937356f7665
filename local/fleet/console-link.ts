import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '../../lib/crypto/seal';
import { createConsole, listConsoles } from '../../lib/fleet/consoles';
import { storeOfEnvironment, type Store } from '../../lib/store';
import { deleteRecord, putRecord } from '../../lib/store/records';
import { log, ROOT, RUN_DIR, startProcess, stopRecorded, waitFor, portOpen } from '../processes';

// npm start: the local console registered with the local fleet, so the fleet's dashboard shows a
// live, polled console within a minute (the poll runs on minute boundaries). The console is
// served over HTTPS by a small front on loopback (certificate of the local test CA, which the
// fleet trusts through NODE_EXTRA_CA_CERTS); the fleet token is issued as `issue-fleet-token` does.

export const CONSOLE_HTTPS_PORT = 3443;

export async function linkLocalConsole(opts: { consoleUrl: string; consoleStore: Store; caFile: string; fleetStore: Record<string, string>; masterKey: Buffer }): Promise<{ url: string; id: string }> {
  const dir = path.join(RUN_DIR, 'console-https');
  fs.mkdirSync(dir, { recursive: true });
  const caKey = path.join(path.dirname(opts.caFile), 'ca.key');
  fs.writeFileSync(path.join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', `${dir}/key.pem`, '-out', `${dir}/req.csr`], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', `${dir}/req.csr`, '-CA', opts.caFile, '-CAkey', caKey, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '20', '-extfile', `${dir}/ext`, '-out', `${dir}/cert.pem`], { stdio: 'ignore' });
  if (await portOpen(CONSOLE_HTTPS_PORT)) throw new Error(`port ${CONSOLE_HTTPS_PORT} is already in use`);
  startProcess('dev-console-https', path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'local/fleet/https-front.ts'), String(CONSOLE_HTTPS_PORT), `${dir}/key.pem`, `${dir}/cert.pem`, opts.consoleUrl], process.env);
  await waitFor('console HTTPS front', () => portOpen(CONSOLE_HTTPS_PORT), 30000);
  const token = `hdcf_${randomBytes(32).toString('base64url')}`;
  await putRecord(opts.consoleStore, 'INSTANCE', 'FLEET_TOKEN', { hash: sha256Hex(token), issuedAt: new Date().toISOString() });
  const url = `https://127.0.0.1:${CONSOLE_HTTPS_PORT}`;
  const fleetStore = storeOfEnvironment(opts.fleetStore);
  // a kept fleet store (an earlier npm start) holds this console's registration with the token of
  // that start: it is replaced, not doubled
  for (const c of await listConsoles(fleetStore)) if (c.url === url) await deleteRecord(fleetStore, 'CONSOLE', c.id);
  const rec = await createConsole(fleetStore, opts.masterKey, { clientCode: 'acme', url, token });
  log(`fleet: the local console is registered as ${url} (client acme), polled every minute`);
  return { url, id: rec.id };
}

export const stopConsoleLink = () => stopRecorded('dev-console-https');
