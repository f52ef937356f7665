import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { loadConfig } from '../lib/config';
import { startScheduler, type ScheduledJob } from '../lib/gateway/scheduler';
import { listen } from '../lib/gateway/listen';
import { gatewayListener, invokeFunction, type HandlerLoader } from '../lib/gateway/server';
import { readServiceMap } from '../lib/gateway/service-map';
import { staticApp } from '../lib/gateway/static-files';
import { securityHeaders } from '../lib/http/browser';
import { prepareConsoleOverload, recordConsoleOverload } from '../lib/http/console-overload';
import { readWorkMs } from '../lib/http/middlewares/admission';
import { logger } from '../lib/log';
import { purgeServiceAudit } from '../lib/password-service/link/service-chain';
import { storeOfEnvironment } from '../lib/store';
import { scheduleRates } from '../functions/scheduled/schedules';

// The process of every image (docs/containers.md): the same handlers as the Lambda deployment behind
// the gateway, by role:
//   console           HTTP API routes + the console app + the scheduled functions (approval expiry, retention, verify)
//   password-service  Lambda's invoke API only, for the console on the internal network, and the
//                     daily retention of its own audit chain (its own SQLite file)
//   fleet             HTTP API routes + the dashboard + the 60-second poll
// Each container owns its store (HDC_SQLITE_FILE, one file in its own volume; or a DynamoDB table).
// `admin <command>` runs the admin command line in the console image; containers/store-copies.ts
// the copies of a container's own store.

export type Role = 'console' | 'password-service' | 'fleet';

export interface ContainerImage {
  role: Role;
  /** the image's folder: serverless file, web app, bundles */
  root: string;
  serviceFile: string;
  webDist?: string;
  load: HandlerLoader;
  /** the console's reads bounded by Concurrency:ReadBudget, by route key (written in at build) */
  readBudgetRouteKeys?: string[];
}

export async function startContainer(image: ContainerImage, env: NodeJS.ProcessEnv = process.env) {
  // the store's files (database, WAL, copies) and anything else written: the container user's only;
  // with HDC_SQLITE_GROUP_READ=1 (the console's, read by its password service) its group may read
  process.umask(env.HDC_SQLITE_GROUP_READ === '1' ? 0o027 : 0o077);
  // a secret the configuration takes as a variable is given to a container as a file (never in its
  // environment, which `podman inspect` shows): the fleet plane's channel key
  for (const name of ['SECRETS_ENCRYPTION_KEY']) {
    const file = env[`${name}_FILE`];
    if (file && !env[name]) env[name] = fs.readFileSync(file, 'utf8').trim();
  }
  const port = Number(env.HDC_PORT ?? (image.role === 'password-service' ? 9000 : 8080));
  const host = env.HDC_LISTEN ?? '0.0.0.0';
  const { config, warnings } = loadConfig(env);
  for (const w of warnings) logger.warn(w);
  const map = readServiceMap(path.join(image.root, image.serviceFile), (ref) => scheduleRates(config)[/schedules\.(\w+)/.exec(ref)?.[1] ?? '']);
  const publicOrigin = env.Hosting__PublicOrigin || undefined;
  const web = image.webDist ? staticApp(path.join(image.root, image.webDist), securityHeaders({ publicOrigin, hstsMaxAge: Number(env.Hosting__HstsMaxAge ?? 31536000) })) : undefined;
  const handler = gatewayListener({
    map,
    load: image.load,
    http: image.role !== 'password-service',
    invoke: image.role === 'password-service',
    staticApp: web,
    clientIpHeader: env.HDC_CLIENT_IP_HEADER?.toLowerCase() || undefined,
    readDeadline: image.readBudgetRouteKeys ? { ms: readWorkMs(config), routeKeys: new Set(image.readBudgetRouteKeys) } : undefined,
    // the console audits a refusal made in front of its functions once a minute per reason, as its
    // functions' own refusals are (the local gateway does the same)
    onOverload: image.role === 'console' ? recordConsoleOverload : undefined,
  });
  if (image.role === 'console') prepareConsoleOverload();

  // the store this container's environment names: its own SQLite file (self-hosted), or a table
  const store = storeOfEnvironment(env);
  // a self-hosted instance owns its store (a file made on first open; a table created for it); the
  // password service on DynamoDB shares the console's table, which the console creates
  if ((image.role !== 'password-service' || store.kind === 'sqlite') && env.HDC_CREATE_TABLE !== 'false') await store.ensure();

  const certFiles = env.HDC_TLS_CERT_FILE && env.HDC_TLS_KEY_FILE ? { cert: env.HDC_TLS_CERT_FILE, key: env.HDC_TLS_KEY_FILE } : undefined;
  const server = certFiles ? https.createServer(readKeyPair(certFiles), handler) : http.createServer(handler);
  // a renewed certificate (the fleet's DNS-01 renewal rewrites both files) is served without a restart
  const stopWatching = certFiles ? reloadOnChange(server as https.Server, certFiles, Number(env.HDC_TLS_RELOAD_MS ?? 60_000)) : () => {};
  server.requestTimeout = 65_000;
  // an idle kept-alive connection is closed by the client first (Node's agents and proxies close
  // theirs within 5-60 s): a server closing at the same moment makes a client's reuse hang up
  server.keepAliveTimeout = 75_000;
  server.headersTimeout = 76_000;
  const listening = await listen(server, port, host);
  logger.info('container listening', { role: image.role, port, tls: Boolean(certFiles) });

  let stopScheduler = () => {};
  if (env.HDC_SCHEDULER !== 'off') {
    const jobs: ScheduledJob[] =
      image.role === 'password-service'
        ? // its own chain, in its own file: nobody else can purge it (lib/password-service/link/service-chain.ts)
          store.kind === 'sqlite'
          ? [{ name: `${map.service}-auditRetention`, rate: 'rate(1 day)', run: () => purgeServiceAudit(store, config.Audit.RetentionDays) }]
          : []
        : map.functions
            .filter((f) => f.schedule)
            .map((f) => ({ name: `${map.service}-${f.name}`, rate: f.schedule!, run: () => invokeFunction({ map, load: image.load }, f, { source: 'aws.events', 'detail-type': 'Scheduled Event', time: new Date().toISOString() }) }));
    if (jobs.length) {
      stopScheduler = startScheduler(store, jobs);
      logger.info('scheduler started', { jobs: jobs.map((j) => `${j.name} ${j.rate}`) });
    }
  }

  const stop = () => {
    stopScheduler();
    stopWatching();
    listening.close();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return server;
}

function readKeyPair(files: { cert: string; key: string }) {
  return { cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key) };
}

/**
 * Serve the certificate files as they change: each poll compares their modification times, and a
 * new pair that forms a valid context replaces the served one for new connections (a pair caught
 * half-written is tried again at the next poll; the old one is served meanwhile).
 */
export function reloadOnChange(server: https.Server, files: { cert: string; key: string }, intervalMs: number): () => void {
  const stamp = () => [files.cert, files.key].map((f) => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0).join('/');
  let served = stamp();
  const timer = setInterval(() => {
    const now = stamp();
    if (now === served) return;
    try {
      const pair = readKeyPair(files);
      tls.createSecureContext(pair); // throws when the key does not match the certificate
      server.setSecureContext(pair);
      served = now;
      logger.info('certificate reloaded', { file: path.basename(files.cert) });
    } catch (e) {
      logger.warn('certificate change not served yet', { error: (e as Error).message.slice(0, 120) });
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** `<bundle> healthcheck`: the image's health check, against its own probe (the fleet plane has only /health/live). */
export async function healthcheck(env: NodeJS.ProcessEnv = process.env, probe = env.HDC_HEALTH_PATH ?? '/health/ready'): Promise<number> {
  const port = Number(env.HDC_PORT ?? 8080);
  const scheme = env.HDC_TLS_CERT_FILE ? 'https' : 'http';
  const host = env.HDC_LISTEN && env.HDC_LISTEN !== '0.0.0.0' ? env.HDC_LISTEN : '127.0.0.1';
  return new Promise((resolve) => {
    const get = scheme === 'https' ? https.get : http.get;
    const req = get(`${scheme}://${host}:${port}${probe}`, { rejectUnauthorized: false, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? 0 : 1);
    });
    req.on('error', () => resolve(1));
    req.on('timeout', () => req.destroy());
  });
}
