import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { seal } from '../../lib/crypto/seal';
import { storeOfEnvironment, type Store } from '../../lib/store';
import { putRecord } from '../../lib/store/records';
import type { Client } from '../../lib/fleet/clients';
import type { ConsoleRecord } from '../../lib/fleet/consoles';
import { setLocalAdminPassword } from '../../lib/fleet/local-admin';
import type { Assignment } from '../../lib/fleet/technicians';
import { fakeTctlEnv, resetFakeTctl } from './fake-tctl';
import { DEV_AUDIENCE, DEV_CLUSTER, issuerKey } from './issuer';
import { DATA_DIR, log, portOpen, ROOT, RUN_DIR, startProcess, stopRecorded, waitFor } from '../processes';
import { FLEET_WEB_DIST } from '../web';

// The fleet plane's part of the local stack: the dev access-platform issuer (JWKS on loopback),
// serverless-offline for serverless.fleet.yml with the fake tctl, the fleet dashboard in front of it, the fleet table in the given
// DynamoDB Local, and its seed (clients, consoles, technician assignments, local administrator).

export type FleetProfile = 'dev' | 'test';

export const FLEET_PORTS: Record<FleetProfile, { http: number; lambda: number; jwks: number; web: number }> = {
  dev: { http: 4000, lambda: 4002, jwks: 4003, web: 4010 },
  test: { http: 4100, lambda: 4102, jwks: 4103, web: 4110 },
};

/** Roles and users of the dev issuer the fleet is configured with (docs/fleet.md). */
export const FLEET_ACCESS_CONFIG = {
  ACCESS_JWT_ADMIN_ROLES: 'fleet-admin',
  ACCESS_JWT_ALLOWED_ROLES: 'fleet-admin,fleet-technician',
  ACCESS_JWT_ALLOWED_USERS: 'breakglass-ops',
  ACCESS_JWT_CLIENT_ROLES: 'true',
  ACCESS_JWT_CLIENT_ROLE_LEVEL: 'viewer',
};

export const SEED_CLIENTS: Array<Pick<Client, 'code' | 'name' | 'notes' | 'contacts'>> = [
  { code: 'acme', name: 'Acme Industries', notes: 'Two gateways in Lyon', contacts: [{ name: 'Wile E. Coyote', email: 'it@acme.example', role: 'IT lead' }] },
  { code: 'globex', name: 'Globex SA', notes: '', contacts: [{ name: 'Hank Scorpio', phone: '+41 22 000 00 00' }] },
  { code: 'initech', name: 'Initech', notes: 'No proxy yet', contacts: [] },
];
export const SEED_TECHNICIANS: Assignment[] = [
  { username: 'tech-alice', clients: [{ code: 'acme', level: 'operator' }] },
  { username: 'tech-bob', clients: [{ code: 'globex', level: 'viewer' }, { code: 'acme', level: 'viewer' }] },
];

export interface FleetStackInfo {
  fleetUrl: string;
  /** the fleet dashboard (local/web-server.ts: web/fleet/dist, /api/* passed to fleetUrl); the fleet's public origin */
  fleetWebUrl: string;
  fleetAdmin: { username: string; password: string };
  fleetClients: string[];
  jwksUrl: string;
  lambdaEndpoint: string;
  /** the environment naming the fleet's store (its SQLite file, or DynamoDB Local and its table) */
  storeEnv: Record<string, string>;
  tctlDir: string;
  tctlLog: string;
  issuer: string;
  audience: string;
  accessConfig: typeof FLEET_ACCESS_CONFIG;
  technicians: Assignment[];
  consoles: Array<{ id: string; clientCode: string; url: string }>;
}

export interface StartFleetOptions {
  profile: FleetProfile;
  /** the environment naming the fleet's own store (HDC_SQLITE_FILE, or DYNAMODB_ENDPOINT and FLEET_TABLE) */
  storeEnv: Record<string, string>;
  masterKeyFile: string;
  /** CA file the fleet trusts beside the system store (the local console's HTTPS front) */
  extraCaFile?: string;
  /** other ports (experiments); defaults per profile */
  ports?: { http: number; lambda: number; jwks: number; web: number };
}

/** The key sealing the fleet's channel secrets, created once under local/.data/secrets (mode 0600). */
function fleetSecretsKey(): string {
  const file = path.join(DATA_DIR, 'secrets/fleet-secrets.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8').trim();
}

const fleetRunDir = (profile: FleetProfile) => path.join(RUN_DIR, `fleet-${profile}`);

async function seedFleet(store: Store, masterKey: Buffer, adminPassword: string) {
  const now = new Date().toISOString();
  for (const c of SEED_CLIENTS) await putRecord(store, 'CLIENT', c.code, { ...c, createdAt: now, updatedAt: now });
  for (const t of SEED_TECHNICIANS) await putRecord(store, 'TECH', t.username, { ...t, updatedAt: now });
  const consoles: FleetStackInfo['consoles'] = [];
  for (const [i, code] of ['acme', 'globex'].entries()) {
    const id = `00000000-0000-4000-8000-00000000000${i + 1}`;
    const url = `https://${code}-hdc.clients.example:8443`;
    const rec: ConsoleRecord = { id, clientCode: code, url, sealedToken: seal(masterKey, randomBytes(24).toString('base64url'), `fleet-console-token:${id}`), createdAt: now, updatedAt: now };
    await putRecord(store, 'CONSOLE', id, rec);
    consoles.push({ id, clientCode: code, url });
  }
  await setLocalAdminPassword(store, 'admin', adminPassword);
  return consoles;
}

export async function startFleet(opts: StartFleetOptions): Promise<FleetStackInfo> {
  const ports = opts.ports ?? FLEET_PORTS[opts.profile];
  for (const p of Object.values(ports)) {
    if (await portOpen(p)) throw new Error(`port ${p} is already in use: is another fleet stack running?`);
  }
  const store = storeOfEnvironment(opts.storeEnv);
  await store.ensure();

  const runDir = fleetRunDir(opts.profile);
  const tctlDir = path.join(runDir, 'tctl');
  const tctlLog = path.join(runDir, 'tctl-commands.log');
  resetFakeTctl(tctlDir);
  fs.writeFileSync(tctlLog, '');
  // an identity file for the CLI's -i flag (the fake only checks that it is passed with --auth-server)
  const identityFile = path.join(runDir, 'identity');
  fs.writeFileSync(identityFile, 'fake identity of the fleet plane\n', { mode: 0o600 });

  await issuerKey(); // create the key pair before the JWKS server and the minting scripts read it
  const jwksUrl = `http://127.0.0.1:${ports.jwks}/.well-known/jwks.json`;
  log(`fleet: dev access-platform JWKS on ${jwksUrl}`);
  startProcess(`${opts.profile}-fleet-jwks`, path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'local/fleet/jwks-server.ts'), String(ports.jwks)], process.env);
  await waitFor('fleet JWKS server', async () => (await fetch(jwksUrl)).status === 200, 30000);

  const fleetUrl = `http://127.0.0.1:${ports.http}`;
  // the dashboard and the API share this origin (the CloudFront distribution in AWS)
  const fleetWebUrl = `http://127.0.0.1:${ports.web}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...fakeTctlEnv(tctlDir, tctlLog),
    ...FLEET_ACCESS_CONFIG,
    ...opts.storeEnv,
    HDC_MASTER_KEY_FILE: opts.masterKeyFile,
    HDC_MASTER_KEY_SECRET_ID: '',
    ACCESS_JWT_JWKS_URL: jwksUrl,
    ACCESS_JWT_ISSUER: DEV_CLUSTER,
    ACCESS_JWT_AUDIENCE: DEV_AUDIENCE,
    ACCESS_AUTH_SERVER: 'teleport.hdc-local.test:443',
    ACCESS_IDENTITY_FILE: identityFile,
    ACCESS_CLUSTER_NAME: DEV_CLUSTER,
    DEFAULT_PROXY_ADDR: 'teleport.hdc-local.test:443',
    FLEET_PUBLIC_ORIGIN: fleetWebUrl,
    // alert channel secrets: one key kept beside the store (the dev profile's store survives restarts)
    SECRETS_ENCRYPTION_KEY: fleetSecretsKey(),
    ...(opts.extraCaFile ? { NODE_EXTRA_CA_CERTS: opts.extraCaFile } : {}),
    // the lab's consoles and receivers are HTTPS servers on loopback: the outbound allow-list admits 127.0.0.1 only
    FLEET_OUTBOUND_ALLOWED_TARGETS: '127.0.0.1/32',
    // the poll continues a round it could not finish through serverless-offline's Lambda port
    FLEET_LAMBDA_ENDPOINT: `http://127.0.0.1:${ports.lambda}`,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
  };
  const stage = opts.profile === 'dev' ? 'local' : 'test';
  log(`serverless-offline: fleet API on ${fleetUrl}`);
  startProcess(
    `${opts.profile}-fleet-offline`,
    path.join(ROOT, 'node_modules/.bin/serverless'),
    ['offline', 'start', '--config', 'serverless.fleet.yml', '--stage', stage, '--httpPort', String(ports.http), '--lambdaPort', String(ports.lambda)],
    env,
  );
  log(`fleet dashboard on ${fleetWebUrl} (API under /api/* passed to ${fleetUrl})`);
  startProcess(`${opts.profile}-fleet-web`, process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'local/web-server.ts')], {
    ...process.env,
    HDC_WEB_PORT: String(ports.web),
    HDC_WEB_API_URL: fleetUrl,
    HDC_WEB_DIST: FLEET_WEB_DIST,
  });
  await waitFor('fleet serverless-offline', async () => (await fetch(`${fleetUrl}/health/live`)).status === 200, 180000);
  await waitFor('fleet dashboard', async () => (await fetch(`${fleetWebUrl}/health/live`)).status === 200, 30000);

  const masterKey = Buffer.from(fs.readFileSync(opts.masterKeyFile, 'utf8').trim(), 'base64');
  const adminPassword = randomBytes(18).toString('base64url');
  const consoles = await seedFleet(store, masterKey, adminPassword);
  const info: FleetStackInfo = {
    fleetUrl,
    fleetWebUrl,
    fleetAdmin: { username: 'admin', password: adminPassword },
    fleetClients: SEED_CLIENTS.map((c) => c.code),
    jwksUrl,
    lambdaEndpoint: `http://127.0.0.1:${ports.lambda}`,
    storeEnv: opts.storeEnv,
    tctlDir,
    tctlLog,
    issuer: DEV_CLUSTER,
    audience: DEV_AUDIENCE,
    accessConfig: FLEET_ACCESS_CONFIG,
    technicians: SEED_TECHNICIANS,
    consoles,
  };
  fs.writeFileSync(path.join(runDir, 'fleet.json'), JSON.stringify(info, null, 2), { mode: 0o600 });
  return info;
}

export async function stopFleet(profile: FleetProfile): Promise<void> {
  await stopRecorded(`${profile}-fleet-web`);
  await stopRecorded(`${profile}-fleet-offline`);
  await stopRecorded(`${profile}-fleet-jwks`);
}
