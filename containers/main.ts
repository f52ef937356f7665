import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { loadConfig, loadFleetConfig } from '../lib/config';
import { startScheduler, type ScheduledJob } from '../lib/gateway/scheduler';
import { gatewayListener, invokeFunction, type HandlerLoader } from '../lib/gateway/server';
import { readServiceMap } from '../lib/gateway/service-map';
import { staticApp } from '../lib/gateway/static-files';
import { securityHeaders } from '../lib/http/browser';
import { logger } from '../lib/log';
import { createStore, ensureTable } from '../lib/store';
import { scheduleRates } from '../functions/scheduled/schedules';

// The process of every image (docs/containers.md): the same handlers as the Lambda deployment behind
// the gateway, by role:
//   console           HTTP API routes + the console app + the scheduled functions (approval expiry, retention, verify)
//   password-service  Lambda's invoke API only, for the console on the internal network
//   fleet             HTTP API routes + the dashboard + the 60-second poll
// `admin <command>` runs the admin command line in the console image.

export type Role = 'console' | 'password-service' | 'fleet';

export interface ContainerImage {
  role: Role;
  /** the image's folder: serverless file, web app, bundles */
  root: string;
  serviceFile: string;
  webDist?: string;
  load: HandlerLoader;
}

export async function startContainer(image: ContainerImage, env: NodeJS.ProcessEnv = process.env) {
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
  });

  // the fleet plane keeps its own table (FLEET_TABLE), the console and its password service theirs (HDC_TABLE)
  const tableName = image.role === 'fleet' ? loadFleetConfig(env).FLEET_TABLE : env.HDC_TABLE;
  const store = createStore({ endpoint: env.DYNAMODB_ENDPOINT || undefined, tableName });
  // a self-hosted instance owns its table (DynamoDB Local in its own container, or a table created for it)
  if (image.role !== 'password-service' && env.HDC_CREATE_TABLE !== 'false') await ensureTable(store);

  const tls = env.HDC_TLS_CERT_FILE && env.HDC_TLS_KEY_FILE ? { cert: fs.readFileSync(env.HDC_TLS_CERT_FILE), key: fs.readFileSync(env.HDC_TLS_KEY_FILE) } : undefined;
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  server.requestTimeout = 65_000;
  // an idle kept-alive connection is closed by the client first (Node's agents and proxies close
  // theirs within 5-60 s): a server closing at the same moment makes a client's reuse hang up
  server.keepAliveTimeout = 75_000;
  server.headersTimeout = 76_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  logger.info('container listening', { role: image.role, port, tls: Boolean(tls) });

  let stopScheduler = () => {};
  if (image.role !== 'password-service' && env.HDC_SCHEDULER !== 'off') {
    const jobs: ScheduledJob[] = map.functions
      .filter((f) => f.schedule)
      .map((f) => ({ name: `${map.service}-${f.name}`, rate: f.schedule!, run: () => invokeFunction({ map, load: image.load }, f, { source: 'aws.events', 'detail-type': 'Scheduled Event', time: new Date().toISOString() }) }));
    stopScheduler = startScheduler(store, jobs);
    logger.info('scheduler started', { jobs: jobs.map((j) => `${j.name} ${j.rate}`) });
  }

  const stop = () => {
    stopScheduler();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return server;
}

/** `<bundle> healthcheck`: the image's health check, against its own readiness route. */
export async function healthcheck(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const port = Number(env.HDC_PORT ?? 8080);
  const scheme = env.HDC_TLS_CERT_FILE ? 'https' : 'http';
  return new Promise((resolve) => {
    const get = scheme === 'https' ? https.get : http.get;
    const req = get(`${scheme}://127.0.0.1:${port}/health/ready`, { rejectUnauthorized: false, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? 0 : 1);
    });
    req.on('error', () => resolve(1));
    req.on('timeout', () => req.destroy());
  });
}
