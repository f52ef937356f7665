import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';

// An ACME test CA on loopback: Debian's pebble (RFC 8555) validating DNS-01 against
// pebble-challtestsrv (a mock DNS server with a management API), as TOOLCHAIN.md describes.
// pebble's own HTTPS listener gets a certificate from a throwaway CA made here with openssl:
// the installer trusts it through NODE_EXTRA_CA_CERTS (as it would trust a private CA).

export interface AcmeLabPorts {
  acme: number;
  management: number;
  dns: number;
  challtestManagement: number;
}
export const DEFAULT_LAB_PORTS: AcmeLabPorts = { acme: 14300, management: 15300, dns: 8353, challtestManagement: 8355 };

export interface AcmeLab {
  directoryUrl: string;
  /** the CA of pebble's own HTTPS listener (for NODE_EXTRA_CA_CERTS) */
  listenerCaFile: string;
  challtestsrv: string;
  /** pebble's issuing root of this run (pebble makes a new one at each start) */
  issuingRoot(): Promise<string>;
  stop(): Promise<void>;
}

export function pebbleAvailable(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v pebble && command -v pebble-challtestsrv'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

async function waitPort(port: number, what: string, ms = 15000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

function makeListenerCert(dir: string) {
  const o = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  o(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=hdc acme lab listener CA']);
  o(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'pebble.key', '-out', 'pebble.csr', '-subj', '/CN=127.0.0.1']);
  fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  o(['x509', '-req', '-in', 'pebble.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'pebble.pem', '-days', '2', '-extfile', 'ext.cnf']);
}

export async function startAcmeLab(dir: string, ports: AcmeLabPorts = DEFAULT_LAB_PORTS): Promise<AcmeLab> {
  fs.mkdirSync(dir, { recursive: true });
  for (const p of Object.values(ports)) if (await portOpen(p)) throw new Error(`port ${p} is already in use: another ACME lab running?`);
  makeListenerCert(dir);
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${ports.acme}`,
      managementListenAddress: `127.0.0.1:${ports.management}`,
      certificate: path.join(dir, 'pebble.pem'),
      privateKey: path.join(dir, 'pebble.key'),
      httpPort: 5002,
      tlsPort: 5001,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
    },
  };
  fs.writeFileSync(path.join(dir, 'pebble-config.json'), JSON.stringify(config));
  const logOf = (name: string) => fs.openSync(path.join(dir, `${name}.log`), 'a');
  const children: ChildProcess[] = [];
  const start = (cmd: string, args: string[], env: NodeJS.ProcessEnv) => {
    const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', logOf(cmd), logOf(cmd)] });
    children.push(c);
    return c;
  };
  start('pebble-challtestsrv', ['-defaultIPv4', '127.0.0.1', '-defaultIPv6', '', '-dns01', `127.0.0.1:${ports.dns}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${ports.challtestManagement}`], {});
  await waitPort(ports.challtestManagement, 'pebble-challtestsrv');
  // no sleep before validation, no random nonce rejection: a deterministic test CA
  start('pebble', ['-config', path.join(dir, 'pebble-config.json'), '-dnsserver', `127.0.0.1:${ports.dns}`], { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' });
  await waitPort(ports.acme, 'pebble');
  await waitPort(ports.management, 'pebble management');
  const listenerCa = fs.readFileSync(path.join(dir, 'ca.pem'));
  return {
    directoryUrl: `https://127.0.0.1:${ports.acme}/dir`,
    listenerCaFile: path.join(dir, 'ca.pem'),
    challtestsrv: `http://127.0.0.1:${ports.challtestManagement}`,
    issuingRoot: () =>
      new Promise((resolve, reject) => {
        https
          .get(`https://127.0.0.1:${ports.management}/roots/0`, { ca: listenerCa }, (res) => {
            let s = '';
            res.on('data', (d) => (s += d));
            res.on('end', () => (res.statusCode === 200 ? resolve(s) : reject(new Error(`pebble roots: ${res.statusCode}`))));
          })
          .on('error', reject);
      }),
    stop: async () => {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((r) => {
              if (c.exitCode !== null || c.signalCode !== null) return r();
              c.once('exit', () => r());
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
