import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { storeOfEnvironment } from '../lib/store';
import { callPasswordService } from '../lib/password-service/console-side/client';
import { DATA_DIR, dynamoLocalDir, log, portOpen, ROOT, RUN_DIR, startProcess, stopRecorded, waitFor } from './processes';
import { seedConsole, type DirectorySeed, type StackAccount } from './seed-app';
import { startFleet, stopFleet, type FleetStackInfo } from './fleet/stack';
import { buildWeb, WEB_DIST } from './web';
import { linkLocalConsole, stopConsoleLink } from './fleet/console-link';
import { ACCESS_OPERATORS, consoleAccessConfig, type AccessOperator } from './access-platform';

// The local stack: the two Samba DCs (local/directory), the store (SQLite files by default, kept
// under local/.data/store; HDC_STORE=dynamodb: DynamoDB Local in memory), serverless-offline with
// every console function (and their schedules), the password service as its own serverless-offline
// process with only its own environment (serverless.password-service.yml), the fleet plane; then
// setup and seed data. Every process is stopped by its recorded PID.

export interface StackOptions {
  /** 'dev' for npm start, 'test' for npm test (other ports and table, same directory) */
  profile: 'dev' | 'test';
  /** called once the ports were found free, before any process is started */
  onProcessesStarting?: () => void;
}
export interface StackInfo {
  consoleUrl: string;
  /** the console's web app (local/web-server.ts: the built app, /api/* passed to consoleUrl); its public origin */
  consoleWebUrl: string;
  /** the console's own Lambda endpoint (its functions: approvalsExpiry, ...) */
  lambdaEndpoint: string;
  /** the password service's Lambda endpoint (its own process) */
  passwordServiceEndpoint: string;
  /** PIDs of the serverless-offline processes (their environments are what each side holds) */
  pids: { console: number; passwordService: number };
  /** which store runs (HDC_STORE: sqlite, the default, or dynamodb) */
  storeKind: 'sqlite' | 'dynamodb';
  /** the environment that names each service's store (HDC_SQLITE_FILE, or DYNAMODB_ENDPOINT and the table) */
  stores: { console: StoreEnv; passwordService: StoreEnv; fleet: StoreEnv };
  /** DynamoDB Local's endpoint (HDC_STORE=dynamodb only) */
  dynamodbEndpoint?: string;
  masterKeyFile: string;
  linkKeyFile: string;
  passwordServiceFunction: string;
  /** Database:BackupFolder of the console (copies taken before migrations) */
  backupFolder: string;
  accounts: StackAccount[];
  /** sign-in through the access platform: the dev issuer's JWKS and the seeded platform users */
  access: { jwksUrl: string; issuer: string; audience: string; operators: AccessOperator[] };
  directory: DirectorySeed;
  computers: Array<{ name: string; guid: string; class: string; laps: string }>;
  fleetUrl: string;
  /** the fleet dashboard (web/fleet), same origin as the fleet API behind it */
  fleetWebUrl: string;
  fleetAdmin: { username: string; password: string };
  fleetClients: string[];
  fleet: FleetStackInfo;
}

export type StoreEnv = Record<string, string>;

/**
 * The store of each service. SQLite: a file each (the console cannot read the password service's
 * rows, nor the fleet the console's); the test profile starts from empty files, the dev profile
 * keeps its files across restarts. DynamoDB Local (HDC_STORE=dynamodb, the AWS parity path): in
 * memory, the console and its password service sharing a table as in AWS, the fleet its own.
 */
function storeEnvironments(profile: 'dev' | 'test', kind: 'sqlite' | 'dynamodb', dynamodbEndpoint: string): StackInfo['stores'] {
  if (kind === 'dynamodb') {
    const table = profile === 'dev' ? 'hdc-local' : 'hdc-test';
    const stage = profile === 'dev' ? 'local' : 'test';
    return {
      console: { DYNAMODB_ENDPOINT: dynamodbEndpoint, HDC_TABLE: table },
      passwordService: { DYNAMODB_ENDPOINT: dynamodbEndpoint, HDC_TABLE: table },
      fleet: { DYNAMODB_ENDPOINT: dynamodbEndpoint, FLEET_TABLE: `hdc-fleet-${stage}` },
    };
  }
  const dir = path.join(DATA_DIR, 'store', profile);
  if (profile === 'test') fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => ({ HDC_SQLITE_FILE: path.join(dir, `${name}.sqlite`) });
  // the password service reads the console's directory settings from the console's file, read only
  return { console: file('console'), passwordService: { ...file('password-service'), HDC_CONSOLE_SQLITE_FILE: file('console').HDC_SQLITE_FILE }, fleet: file('fleet') };
}

const PORTS = {
  dev: { http: 3000, lambda: 3002, passwordService: 3004, dynamodb: 8000, web: 3010 },
  test: { http: 3100, lambda: 3102, passwordService: 3104, dynamodb: 8100, web: 3110 },
};

/** Profile settings of the console beyond the defaults: the test profile expires approvals every minute. */
const PROFILE_CONFIG: Record<'dev' | 'test', Record<string, string>> = {
  dev: {},
  test: { Approvals__CheckInterval: '60' },
};

/** The caller's environment without anything of the password service's (the console must never hold it). */
function withoutServiceSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^HDC_(LOCAL_)?(LAPS|RESET|BITLOCKER)_|^HDC_PWD_/.test(k)));
}

export const stackFile = (profile: 'dev' | 'test') => path.join(RUN_DIR, profile === 'dev' ? 'stack.json' : 'stack.test.json');

export function ensureDirectory(): DirectorySeed {
  log('directory: two Samba AD DCs on 127.0.0.1 and 127.0.0.2 (LDAPS 636)');
  execFileSync('bash', [path.join(ROOT, 'local/directory/dc.sh'), 'ensure'], { stdio: 'inherit' });
  return JSON.parse(fs.readFileSync(path.join(DATA_DIR, 'directory/seed.json'), 'utf8'));
}

/** A local secret file (mode 0600) under local/.data/secrets, created once. */
function secretFile(name: string, create: () => string): string {
  const file = path.join(DATA_DIR, 'secrets', name);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, create(), { mode: 0o600 });
  }
  return file;
}
const masterKeyFile = () => secretFile('master.key', () => randomBytes(32).toString('base64'));
const linkKeyFile = () => secretFile('link.key', () => randomBytes(32).toString('base64'));

function ensureJava() {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
  } catch {
    log('installing a Java runtime for DynamoDB Local (Debian openjdk-17-jre-headless)');
    execFileSync('bash', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless'], { stdio: 'inherit' });
  }
}

export async function startStack(opts: StackOptions): Promise<StackInfo> {
  const ports = PORTS[opts.profile];
  for (const p of Object.values(ports)) {
    if (await portOpen(p)) throw new Error(`port ${p} is already in use: is another stack running? (stop it with Ctrl-C, or: npm run stop)`);
  }
  opts.onProcessesStarting?.();
  const directory = ensureDirectory();
  const keyFile = masterKeyFile();
  const linkFile = linkKeyFile();
  // the LAPS account's password: a file only the password service function is told about
  const lapsFile = path.join(DATA_DIR, 'secrets/laps.password');
  fs.mkdirSync(path.dirname(lapsFile), { recursive: true, mode: 0o700 });
  fs.writeFileSync(lapsFile, directory.technicalAccounts.laps.password, { mode: 0o600 });
  // the reset account's password, the same way (password service only)
  const resetFile = path.join(DATA_DIR, 'secrets/reset.password');
  fs.writeFileSync(resetFile, directory.technicalAccounts.reset.password, { mode: 0o600 });
  // the BitLocker account's password (issue 33): its own file, password service only
  const bitlockerFile = path.join(DATA_DIR, 'secrets/bitlocker.password');
  fs.writeFileSync(bitlockerFile, directory.technicalAccounts.bitlocker.password, { mode: 0o600 });

  await buildWeb();
  const storeKind = process.env.HDC_STORE === 'dynamodb' ? 'dynamodb' : 'sqlite';
  const dynamodbEndpoint = `http://127.0.0.1:${ports.dynamodb}`;
  const stores = storeEnvironments(opts.profile, storeKind, dynamodbEndpoint);
  const store = storeOfEnvironment(stores.console);
  if (storeKind === 'dynamodb') {
    // DynamoDB Local: a test tool (its licence forbids shipping it), the AWS parity path
    ensureJava();
    const jar = dynamoLocalDir();
    log(`store: DynamoDB Local on 127.0.0.1:${ports.dynamodb} (in memory)`);
    startProcess(`${opts.profile}-dynamodb`, 'java', [`-Djava.library.path=${jar}/DynamoDBLocal_lib`, '-jar', `${jar}/DynamoDBLocal.jar`, '-inMemory', '-port', String(ports.dynamodb)], process.env);
    await waitFor('DynamoDB Local', async () => {
      await store.ensure();
      return true;
    }, 30000);
  } else {
    log(`store: SQLite files under ${path.relative(ROOT, path.dirname(stores.console.HDC_SQLITE_FILE))}${opts.profile === 'dev' ? ' (kept across restarts)' : ''}`);
  }

  const consoleUrl = `http://127.0.0.1:${ports.http}`;
  const backupFolder = path.join(RUN_DIR, 'backups', opts.profile);
  // the web app and the API share this origin (the CloudFront distribution in AWS)
  const consoleWebUrl = `http://127.0.0.1:${ports.web}`;
  const stage = opts.profile === 'dev' ? 'local' : 'test';
  const passwordServiceEndpoint = `http://127.0.0.1:${ports.passwordService}`;
  const passwordServiceFunction = `hdc-password-service-${stage}-passwordService`;
  const common = {
    ...withoutServiceSecrets(process.env),
    HDC_LINK_KEY_FILE: linkFile,
    HDC_ENVIRONMENT: 'Development',
    ...PROFILE_CONFIG[opts.profile],
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
  };
  // the password service's process: the LAPS and reset accounts, and nothing of the console's
  const serviceEnv = {
    ...common,
    HDC_LAPS_UPN: directory.technicalAccounts.laps.upn,
    HDC_LAPS_PASSWORD_FILE: lapsFile,
    HDC_RESET_UPN: directory.technicalAccounts.reset.upn,
    HDC_RESET_PASSWORD_FILE: resetFile,
    HDC_BITLOCKER_UPN: directory.technicalAccounts.bitlocker.upn,
    HDC_BITLOCKER_PASSWORD_FILE: bitlockerFile,
    HDC_PWD_DOMAIN: directory.domain,
    ...stores.passwordService,
  };
  // the console's process: its master key, and the password service only as an endpoint to invoke
  const env = {
    ...common,
    HDC_MASTER_KEY_FILE: keyFile,
    HDC_LAMBDA_ENDPOINT: passwordServiceEndpoint,
    // notification receivers in tests are HTTPS servers on loopback with certificates of the local test CA
    NODE_EXTRA_CA_CERTS: directory.caFile,
    Outbound__AllowedTargets: '127.0.0.1/32',
    Hosting__PublicOrigin: consoleWebUrl,
    Helpdesk__Enabled: 'true',
    Helpdesk__LapsIdentityUpn: directory.technicalAccounts.laps.upn,
    // the BitLocker account's UPN (display and its delegation export only; never its password)
    Helpdesk__BitlockerIdentityUpn: directory.technicalAccounts.bitlocker.upn,
    // the copy of the data taken before database migrations (docs/operations.md, Upgrades)
    Database__BackupFolder: backupFolder,
    // sign-in through the access platform: the dev issuer the fleet plane also trusts
    ...consoleAccessConfig(opts.profile),
    ...stores.console,
  };
  log(`serverless-offline: password service (its own process) on Lambda ${passwordServiceEndpoint}`);
  const service = startProcess(
    `${opts.profile}-password-service`,
    path.join(ROOT, 'node_modules/.bin/serverless'),
    ['offline', 'start', '--config', 'serverless.password-service.yml', '--stage', stage, '--lambdaPort', String(ports.passwordService)],
    serviceEnv,
  );
  log(`serverless-offline: console API on ${consoleUrl}`);
  const consoleProcess = startProcess(
    `${opts.profile}-offline`,
    path.join(ROOT, 'node_modules/.bin/serverless'),
    ['offline', 'start', '--stage', stage, '--httpPort', String(ports.http), '--lambdaPort', String(ports.lambda)],
    env,
  );
  log(`web app on ${consoleWebUrl} (API under /api/* passed to ${consoleUrl})`);
  startProcess(`${opts.profile}-web`, process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'local/web-server.ts')], {
    ...withoutServiceSecrets(process.env),
    HDC_WEB_PORT: String(ports.web),
    HDC_WEB_API_URL: consoleUrl,
    HDC_WEB_DIST: WEB_DIST,
  });
  await waitFor('serverless-offline', async () => (await fetch(`${consoleUrl}/health/live`)).status === 200, 180000);
  await waitFor('web app', async () => (await fetch(`${consoleWebUrl}/health/live`)).status === 200, 30000);
  // a service with no HTTP event prints no "Server ready": its Lambda port answering is the sign
  await waitFor('password service', () => portOpen(ports.passwordService), 180000);

  const masterKey = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'base64');
  const accounts = await seedConsole(store, masterKey, consoleUrl, directory);
  // first use of the password service: pin it to the seeded domain (admin CLI: pin-password-service)
  const pin = await callPasswordService({ op: 'pin' }, { ...env, HDC_PASSWORD_SERVICE_FUNCTION: passwordServiceFunction });
  if (!pin.ok) throw new Error(`pinning the password service failed: ${pin.code}`);
  log('fleet plane (serverless.fleet.yml)');
  const fleet = await startFleet({ profile: opts.profile, storeEnv: stores.fleet, masterKeyFile: keyFile, extraCaFile: directory.caFile });
  // npm start: the fleet polls this console (the test profile keeps its fleet table to the tests)
  if (opts.profile === 'dev') fleet.consoles.push({ ...(await linkLocalConsole({ consoleUrl, consoleStore: store, caFile: directory.caFile, fleetStore: stores.fleet, masterKey })), clientCode: 'acme' });
  const info: StackInfo = {
    consoleUrl,
    consoleWebUrl,
    lambdaEndpoint: `http://127.0.0.1:${ports.lambda}`,
    passwordServiceEndpoint,
    pids: { console: consoleProcess.pid!, passwordService: service.pid! },
    storeKind,
    stores,
    ...(storeKind === 'dynamodb' ? { dynamodbEndpoint } : {}),
    masterKeyFile: keyFile,
    linkKeyFile: linkFile,
    passwordServiceFunction,
    backupFolder,
    accounts,
    access: {
      jwksUrl: consoleAccessConfig(opts.profile).Authentication__Access__JwksUrl,
      issuer: consoleAccessConfig(opts.profile).Authentication__Access__Issuer,
      audience: consoleAccessConfig(opts.profile).Authentication__Access__Audience,
      operators: ACCESS_OPERATORS,
    },
    directory,
    computers: directory.computers.map(({ name, guid, class: cls, laps }) => ({ name, guid, class: cls, laps })),
    fleetUrl: fleet.fleetUrl,
    fleetWebUrl: fleet.fleetWebUrl,
    fleetAdmin: fleet.fleetAdmin,
    fleetClients: fleet.fleetClients,
    fleet,
  };
  fs.writeFileSync(stackFile(opts.profile), JSON.stringify(info, null, 2), { mode: 0o600 });
  return info;
}

export async function stopStack(profile: 'dev' | 'test', opts: { directory?: boolean } = {}) {
  if (profile === 'dev') await stopConsoleLink();
  await stopFleet(profile);
  await stopRecorded(`${profile}-web`);
  await stopRecorded(`${profile}-offline`);
  await stopRecorded(`${profile}-password-service`);
  await stopRecorded(`${profile}-dynamodb`);
  if (opts.directory !== false) {
    try {
      execFileSync('bash', [path.join(ROOT, 'local/directory/dc.sh'), 'stop'], { stdio: 'inherit' });
    } catch {
      /* already stopped */
    }
  }
}
