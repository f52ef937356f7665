import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { readServiceMap } from '../lib/gateway/service-map';
import { loadRouteTables } from '../local/route-tables';

// `npm run images -- [tag] [image…]`: the three images of the self-hosted forms, built with podman
// FROM scratch (no registry is reachable; docs/containers.md):
//   hdc-console, hdc-password-service, hdc-fleet: Node (pinned, checksum verified) + one bundle each.
// No store image: each container keeps its own SQLite file (node:sqlite, inside Node) in its volume;
// no JVM, no DynamoDB Local (a test tool whose licence forbids shipping it).
// Each image runs as a non-root user; sizes are printed at the end.

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'dist/containers');
const NODE = JSON.parse(fs.readFileSync(path.join(__dirname, 'node.json'), 'utf8')) as { package: string; version: string; sha256: string };
const CACHE = path.join(ROOT, 'local/.cache');
// the console's and fleet's user; the password service has its own (containers/scripts/common.sh)
const APP_UID = 10001;
const SERVICE_UID = 10002;

const log = (m: string) => process.stdout.write(`[images] ${m}\n`);
const run = (cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

export function podmanEnv(): NodeJS.ProcessEnv {
  // crun fails on these machines (rlimits, hybrid cgroups): runc with explicit ulimits (TOOLCHAIN.md)
  const conf = path.join(CACHE, 'containers.conf');
  fs.mkdirSync(CACHE, { recursive: true });
  const hard = run('bash', ['-c', 'ulimit -Hn']).trim();
  fs.writeFileSync(conf, `[containers]\ndefault_ulimits = ["nofile=${hard}:${hard}", "nproc=32768:32768"]\n\n[engine]\nruntime = "runc"\n`);
  return { ...process.env, CONTAINERS_CONF: conf };
}

/** The Node binary of the images: the npm repackaging of the official build, checked against the pinned sha256. */
function nodeBinary(): string {
  const dir = path.join(CACHE, `node-${NODE.version}`);
  const bin = path.join(dir, 'package/bin/node');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    log(`fetching ${NODE.package}@${NODE.version}`);
    const tgz = run('npm', ['pack', `${NODE.package}@${NODE.version}`, '--silent', '--pack-destination', dir]).trim().split('\n').pop()!;
    run('tar', ['xzf', path.join(dir, tgz), '-C', dir, 'package/bin/node']);
    fs.rmSync(path.join(dir, tgz));
  }
  const sum = createHash('sha256').update(fs.readFileSync(bin)).digest('hex');
  if (sum !== NODE.sha256) throw new Error(`node binary checksum mismatch: ${sum} (expected ${NODE.sha256} from containers/node.json)`);
  return bin;
}

/** Copy a binary's shared libraries (ldd) and the dynamic loader into a rootfs. */
function copyLibraries(rootfs: string, binaries: string[]) {
  const libs = new Set<string>();
  for (const b of binaries) {
    for (const line of run('ldd', [b]).split('\n')) {
      const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
      if (m) libs.add(m[1]);
    }
  }
  for (const lib of libs) {
    const dest = path.join(rootfs, lib);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(fs.realpathSync(lib), dest);
  }
}

function baseRootfs(rootfs: string) {
  fs.rmSync(rootfs, { recursive: true, force: true });
  for (const d of ['etc', 'tmp', 'app', 'data']) fs.mkdirSync(path.join(rootfs, d), { recursive: true });
  fs.chmodSync(path.join(rootfs, 'tmp'), 0o1777);
  fs.writeFileSync(path.join(rootfs, 'etc/passwd'), `root:x:0:0:root:/root:/sbin/nologin\nhdc:x:${APP_UID}:${APP_UID}:hdc:/app:/sbin/nologin\nhdc-pwd:x:${SERVICE_UID}:${SERVICE_UID}:hdc password service:/app:/sbin/nologin\n`);
  fs.writeFileSync(path.join(rootfs, 'etc/group'), `root:x:0:\nhdc:x:${APP_UID}:\nhdc-pwd:x:${SERVICE_UID}:\n`);
  fs.writeFileSync(path.join(rootfs, 'etc/nsswitch.conf'), 'hosts: files dns\n');
  const ca = '/etc/ssl/certs/ca-certificates.crt';
  if (fs.existsSync(ca)) {
    fs.mkdirSync(path.join(rootfs, 'etc/ssl/certs'), { recursive: true });
    fs.copyFileSync(ca, path.join(rootfs, ca));
  }
}

function copyTree(from: string, to: string) {
  fs.cpSync(from, to, { recursive: true, dereference: true, filter: (src) => fs.existsSync(src) });
}

interface NodeImage {
  name: string;
  role: 'console' | 'password-service' | 'fleet';
  serviceFile: string;
  webDist?: string;
  /** also bundled: the admin command line (console) */
  admin?: boolean;
}

const IMAGES: NodeImage[] = [
  { name: 'hdc-console', role: 'console', serviceFile: 'serverless.yml', webDist: 'web/console/dist', admin: true },
  { name: 'hdc-password-service', role: 'password-service', serviceFile: 'serverless.password-service.yml' },
  { name: 'hdc-fleet', role: 'fleet', serviceFile: 'serverless.fleet.yml', webDist: 'web/fleet/dist' },
];

/** The image's entry: every handler module of its service file, loaded on its first request (a cold start, as on Lambda). */
function entrySource(img: NodeImage, entryDir: string, root: string, webDir?: string): string {
  const map = readServiceMap(path.join(ROOT, img.serviceFile), () => 'rate(1 day)');
  const rel = (p: string) => path.relative(entryDir, path.join(ROOT, p)).split(path.sep).join('/');
  const modules = [...new Set(map.functions.map((f) => f.module))];
  const role = JSON.stringify(img.role);
  // the commands of each image beside starting it (docs/containers.md)
  const commands: Record<NodeImage['role'], string[]> = {
    console: [
      `if (command === 'admin') done(import(${JSON.stringify(rel('functions/admin/cli'))}).then((m) => m.runAdminCommand(args, process.env)));`,
      `if (command === 'check-copy' || command === 'split-copy') done(import(${JSON.stringify(rel('containers/store-copies'))}).then((m) => m.runStoreCommand(${role}, [command, ...args])));`,
      // the console's own DNS-01 certificate: the fleet plane's code (one installer step for both)
      `if (command === 'install-tls') done(import(${JSON.stringify(rel('functions/fleet/install-tls'))}).then(async (m) => ({ code: await m.main(args), out: '' })));`,
    ],
    'password-service': [`if (command === 'backup' || command === 'restore' || command === 'check-copy') done(import(${JSON.stringify(rel('containers/store-copies'))}).then((m) => m.runStoreCommand(${role}, [command, ...args])));`],
    fleet: [
      `if (command === 'backup' || command === 'restore' || command === 'check-copy') done(import(${JSON.stringify(rel('containers/store-copies'))}).then((m) => m.runStoreCommand(${role}, [command, ...args])));`,
      `if (command === 'set-admin-password' || command === 'identity-role' || command === 'install-tls') done(import(${JSON.stringify(rel('containers/fleet-commands'))}).then((m) => m.runFleetInstanceCommand([command, ...args])));`,
    ],
  };
  return `// generated by containers/build.ts
import { healthcheck, startContainer } from ${JSON.stringify(rel('containers/main'))};
const modules: Record<string, () => any> = {
${modules.map((m) => `  ${JSON.stringify(m)}: () => require(${JSON.stringify(rel(m))}),`).join('\n')}
};
const [command, ...args] = process.argv.slice(2);
function done(p: Promise<{ code: number; out: string }>) {
  p.then(({ code, out }) => { if (out) (code === 0 ? console.log : console.error)(out); process.exit(code); }, (e) => { console.error('error: ' + (e as Error).message); process.exit(1); });
}
if (command === 'healthcheck') healthcheck(process.env, ${JSON.stringify(img.role === 'fleet' ? '/health/live' : '/health/ready')}).then((c) => process.exit(c));
else ${commands[img.role].join('\nelse ')}
else startContainer({
  role: ${role},
  root: ${JSON.stringify(root)},
  serviceFile: ${JSON.stringify(path.basename(img.serviceFile))},
  ${webDir ? `webDist: ${JSON.stringify(webDir)},` : ''}
  ${img.role === 'console' ? `readBudgetRouteKeys: ${JSON.stringify(loadRouteTables().readBudgetRouteKeys())},` : ''}
  load: async (module, exportName) => modules[module]()[exportName],
}).catch((e) => { console.error('container failed to start: ' + (e as Error).message); process.exit(1); });
`;
}

/**
 * The process of an image as one bundle (the deployment's esbuild options, with the AWS SDK inside:
 * no Lambda runtime provides it here). `root` holds the serverless file and `webDir` (relative to
 * it) the web app: '/app' and 'web' in the image; the source tree and no web app for bench/laps.ts,
 * which runs the same process on the host.
 */
export async function bundleProcess(name: string, entryDir: string, outfile: string, root: string, webDir?: string): Promise<void> {
  const img = IMAGES.find((i) => i.name === name);
  if (!img) throw new Error(`no image ${name}`);
  fs.mkdirSync(entryDir, { recursive: true });
  const entry = path.join(entryDir, 'entry.ts');
  fs.writeFileSync(entry, entrySource(img, entryDir, root, webDir));
  const { buildOptions } = require(path.join(ROOT, 'esbuild.config.cjs'));
  // BENCH_CPU_PROFILE=1 (bench/laps): readable code, so a CPU profile names functions and lines
  const readable = process.env.BENCH_CPU_PROFILE === '1' ? { minify: false } : {};
  await build({ ...buildOptions, ...readable, external: [], entryPoints: [entry], outfile, logLevel: 'warning' });
}

async function buildNodeImage(img: NodeImage, tag: string, node: string, env: NodeJS.ProcessEnv) {
  const dir = path.join(OUT, img.name);
  const rootfs = path.join(dir, 'rootfs');
  baseRootfs(rootfs);
  fs.mkdirSync(path.join(rootfs, 'usr/local/bin'), { recursive: true });
  fs.copyFileSync(node, path.join(rootfs, 'usr/local/bin/node'));
  fs.chmodSync(path.join(rootfs, 'usr/local/bin/node'), 0o755);
  copyLibraries(rootfs, [node]);
  await bundleProcess(img.name, path.join(dir, 'src'), path.join(rootfs, 'app/main.js'), '/app', img.webDist && 'web');
  fs.copyFileSync(path.join(ROOT, img.serviceFile), path.join(rootfs, 'app', path.basename(img.serviceFile)));
  if (img.webDist) copyTree(path.join(ROOT, img.webDist), path.join(rootfs, 'app/web'));
  // the fleet plane's cluster role, read beside the bundle (lib/fleet/identity-role.ts: `identity-role`)
  if (img.role === 'fleet') fs.copyFileSync(path.join(ROOT, 'lib/fleet/identity-role.yaml'), path.join(rootfs, 'app/identity-role.yaml'));
  fs.writeFileSync(
    path.join(dir, 'Containerfile'),
    `FROM scratch
COPY rootfs/ /
ENV NODE_ENV=production HDC_ENVIRONMENT=Production
USER ${img.role === 'password-service' ? SERVICE_UID : APP_UID}:${img.role === 'password-service' ? SERVICE_UID : APP_UID}
WORKDIR /app
EXPOSE ${img.role === 'password-service' ? 9000 : 8080}
ENTRYPOINT ["/usr/local/bin/node", "/app/main.js"]
LABEL org.opencontainers.image.title="${img.name}" org.opencontainers.image.version="${tag}"
`,
  );
  run('podman', ['build', '-q', '--layers=false', '-t', `${img.name}:${tag}`, dir], { env });
}

export async function buildImages(tag: string, only: string[] = []) {
  const wanted = (name: string) => !only.length || only.includes(name);
  const env = podmanEnv();
  for (const app of ['web/console/dist', 'web/fleet/dist']) {
    if (!fs.existsSync(path.join(ROOT, app, 'index.html'))) {
      log('building the web apps');
      run(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'local/web.ts')], { cwd: ROOT });
      break;
    }
  }
  const node = nodeBinary();
  for (const img of IMAGES.filter((i) => wanted(i.name))) {
    const t = Date.now();
    await buildNodeImage(img, tag, node, env);
    log(`${img.name}:${tag} built in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  const sizes = run('podman', ['images', '--format', '{{.Repository}}:{{.Tag}} {{.Size}}', '--filter', `reference=*hdc-*:${tag}`], { env });
  log(`sizes:\n${sizes}`);
}

if (require.main === module) {
  const tag = process.argv[2] ?? JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) throw new Error(`invalid image tag ${tag}`);
  buildImages(tag, process.argv.slice(3)).catch((e) => {
    console.error(`[images] failed: ${(e as Error).message}`);
    process.exit(1);
  });
}
