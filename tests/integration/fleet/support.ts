import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { mintToken } from '../../../local/fleet/issuer';
import { commandOf, readCommandLog, resetFakeTctl, setFakeTctlControl, type FakeTctlControl } from '../../../local/fleet/fake-tctl';
import type { FleetStackInfo } from '../../../local/fleet/stack';
import { storeOfEnvironment, type Store } from '../../../lib/store';
import { recordAnswer } from '../../support/contract-recorder';

// The running fleet stack: FLEET_STACK_FILE, else `fleet` in the test stack file, else the file
// local/fleet/stack.ts writes for the test profile.
export function fleetStack(): FleetStackInfo {
  const root = path.resolve(__dirname, '../../..');
  if (process.env.FLEET_STACK_FILE) return JSON.parse(fs.readFileSync(process.env.FLEET_STACK_FILE, 'utf8'));
  const stackFile = path.join(root, 'local/.run', process.env.HDC_STACK_PROFILE === 'dev' ? 'stack.json' : 'stack.test.json');
  if (fs.existsSync(stackFile)) {
    const s = JSON.parse(fs.readFileSync(stackFile, 'utf8'));
    if (s.fleet) return { ...s.fleet, fleetUrl: s.fleetUrl ?? s.fleet.fleetUrl, fleetAdmin: s.fleetAdmin ?? s.fleet.fleetAdmin };
  }
  return JSON.parse(fs.readFileSync(path.join(root, 'local/.run/fleet-test/fleet.json'), 'utf8'));
}

// first calls pay serverless-offline cold starts and scrypt
jest.setTimeout(60000);

export const stack = fleetStack();

/** The fleet's own store (its SQLite file, or its table on DynamoDB Local). */
export const fleetStore = (): Store => storeOfEnvironment(stack.storeEnv);

/** A store of a test's own, beside the fleet's (a fresh SQLite file, or a fresh table on DynamoDB Local). */
export async function scratchStore(name: string): Promise<Store> {
  const unique = `${name}-${Date.now()}-${process.pid}`;
  const s = stack.storeEnv.HDC_SQLITE_FILE
    ? storeOfEnvironment({ HDC_SQLITE_FILE: path.join(path.dirname(stack.storeEnv.HDC_SQLITE_FILE), 'scratch', `${unique}.sqlite`) })
    : storeOfEnvironment({ DYNAMODB_ENDPOINT: stack.storeEnv.DYNAMODB_ENDPOINT, HDC_TABLE: unique });
  await s.ensure();
  return s;
}

// Node ids of the fixture scenario (../shared/reference/teleport/README.md)
export const NODE = {
  master: '0b6f3a9d-1e24-4c75-8d0f-92a6e3b4c5d7',
  acmeGw01: '3f9c2b7e-5d41-4c8a-9a1e-7b2d6c0f8e13',
  acmeGw02: '8a1d4e62-7bc3-4f0e-a5d9-0e6b1c37f2a4',
  globexGw01: 'c27e9f05-64a8-4b1d-9e3c-5f0a7d28b6e1',
  globexGw02: 'd41a7c93-0f6e-4b2a-8c55-3e9b17a0d6f2',
  lab: '5e8d2c14-a3f7-4b96-b0e2-7c91d45f6a38',
};

export interface Reply {
  status: number;
  body: any;
  text: string;
  headers: http.IncomingHttpHeaders;
  correlationId: string;
}

/** A real HTTP call to the fleet plane; `from` picks the loopback source address (rate limits). */
export function call(method: string, urlPath: string, opts: { token?: string; assertion?: string; body?: unknown; headers?: Record<string, string>; from?: string } = {}): Promise<Reply> {
  const url = new URL(urlPath, stack.fleetUrl);
  const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  // JSON where the API asks for it (lib/fleet/middlewares.ts needsJson): a body, and every POST; a
  // PUT or DELETE without a body goes without a content type, as `curl -X DELETE` sends it
  if ((payload !== undefined || method === 'POST') && ['POST', 'PUT', 'DELETE'].includes(method) && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.assertion) headers['teleport-jwt-assertion'] = opts.assertion;
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, localAddress: opts.from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any = undefined;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        recordAnswer('fleet', { method, url: url.pathname + url.search, status: res.statusCode ?? 0, headers: res.headers, body: text });
        resolve({ status: res.statusCode ?? 0, body, text, headers: res.headers, correlationId: String(res.headers['x-correlation-id'] ?? '') });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

let adminToken: Promise<string> | undefined;
/** The local administrator's token (one login per test file). */
export function localAdmin(): Promise<string> {
  return (adminToken ??= call('POST', '/api/auth/login', { body: stack.fleetAdmin }).then((r) => {
    if (r.status !== 200) throw new Error(`local admin login failed: ${r.status} ${r.text}`);
    return r.body.token as string;
  }));
}

export type Persona = 'admin' | 'operator' | 'viewer' | 'outsider' | 'anonymous';

/** Seeded personas: tech-alice operates acme; tech-bob views acme and globex; tech-carol only initech. */
export async function personaHeaders(p: Persona): Promise<{ token?: string; assertion?: string }> {
  switch (p) {
    case 'admin':
      return { assertion: await mintToken('msp-admin', ['fleet-admin']) };
    case 'operator':
      return { assertion: await mintToken('tech-alice', ['fleet-technician']) };
    case 'viewer':
      return { assertion: await mintToken('tech-bob', ['fleet-technician']) };
    case 'outsider':
      return { assertion: await mintToken('tech-carol', ['fleet-technician', 'fleet-client-initech']) };
    case 'anonymous':
      return {};
  }
}

/** An administrator through the access platform (the local login has its own tests and limits). */
export const adminAuth = async () => ({ assertion: await mintToken('msp-admin', ['fleet-admin']) });

export async function auditRows(limit = 50): Promise<any[]> {
  const r = await call('GET', `/api/audit?limit=${limit}`, await adminAuth());
  if (r.status !== 200) throw new Error(`audit read failed: ${r.status}`);
  return r.body.entries;
}

export async function auditRowOf(correlationId: string): Promise<any | undefined> {
  return (await auditRows(100)).find((r) => r.correlationId === correlationId);
}

/** Every row of one request (an action covering several clients is filed under each), oldest first. */
export async function auditRowsOf(correlationId: string): Promise<any[]> {
  return (await auditRows(200)).filter((r) => r.correlationId === correlationId).reverse();
}

// The fleet's scheduled jobs read the cluster's snapshot (lib/fleet/nodes readSnapshot) at any
// moment, also while a test runs: those four reads are never a test's own command.
const SNAPSHOT_READS = new Set(['inventory ls --format=json', 'get windows_desktop_service --format=json', 'get windows_desktop --format=json', 'get locks --format=json']);

export const tctl = {
  reset: () => {
    resetFakeTctl(stack.tctlDir);
    setFakeTctlControl(stack.tctlDir, {});
  },
  control: (c: FakeTctlControl) => setFakeTctlControl(stack.tctlDir, c),
  mark: () => readCommandLog(stack.tctlLog).length,
  /** The commands run since `mark`, without the scheduled jobs' snapshot reads. */
  commandsSince: (mark: number) =>
    readCommandLog(stack.tctlLog)
      .slice(mark)
      .map(commandOf)
      .filter((c) => !SNAPSHOT_READS.has(c.join(' '))),
  writeFixture: (file: string, items: unknown) => fs.writeFileSync(path.join(stack.tctlDir, file), JSON.stringify(items, null, 4) + '\n'),
  readFixture: (file: string) => JSON.parse(fs.readFileSync(path.join(stack.tctlDir, file), 'utf8')),
};
