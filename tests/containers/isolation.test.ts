import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createStore, type Store } from '../../lib/store';
import { ConsoleClient } from '../../local/console-client';
import { seedConsole } from '../../local/seed-app';
import { ensureDirectory } from '../../local/stack';
import net from 'node:net';
import { describeWithPodman, ensureImages, forwarder, httpProbe, nextCode, podman, probeVerdict, removeContainers, removeNetworks, SCRIPTS, SERVICE_PROBE_REQUEST, sh, TAG_A } from './support';

// The networks of a console instance, as install.sh makes them (docs/containers.md, "Networks"):
//   <name>-internal  --internal, no route out: the console and its password service
//   <name>-egress    the password service's way to the DCs; nothing published
//   <name>-edge      the console's published port and its own way out (the DCs for its read and
//                    write accounts, channels, the access platform)
// The DCs answer on this host's loopback: the test reaches them through a forwarder it creates
// on the host's address of the egress network, a name (--add-host) for each container. It proves
// that the password service is reachable from the internal network only (it listens on its
// internal address alone; nothing on edge, on egress or the host reaches its port), that it
// reaches the DCs and a reveal through the console works, that neither container sits on the
// other's outer network, and that the service's secrets and store are not in the console's
// container (no mount of them, no file the console's processes can read holding a password). Negative cases show the checks fail on a service listening on all its
// addresses (what the previous scripts did) and on a console put on the egress network.
// The console itself must reach the DCs (directory sign-in, every decision re-read from the
// directory): no check here says it cannot (docs/decisions.md, issue 27).

const NAME = 'hdciso';
const PORT = 18743;
const DC_NAME = 'dc1.corp.example.test';
const SERVICE_IMAGE = `localhost/hdc-password-service:${TAG_A}`;

const inspectNetworks = (container: string): Record<string, string> => {
  const r = podman('inspect', container, '--format', '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}={{$v.IPAddress}} {{end}}');
  return Object.fromEntries(r.out.trim().split(/\s+/).filter(Boolean).map((kv) => kv.split('=') as [string, string]));
};

/** What is wrong with the instance's network layout (nothing: []). */
function layoutProblems(): string[] {
  const problems: string[] = [];
  const service = inspectNetworks(`${NAME}-password-service`);
  const console_ = inspectNetworks(`${NAME}-console`);
  if (Object.keys(service).sort().join() !== [`${NAME}-egress`, `${NAME}-internal`].join()) problems.push(`password service on ${Object.keys(service).sort().join(', ')}`);
  if (Object.keys(console_).sort().join() !== [`${NAME}-edge`, `${NAME}-internal`].join()) problems.push(`console on ${Object.keys(console_).sort().join(', ')}`);
  const published = podman('port', `${NAME}-password-service`).out.trim();
  if (published) problems.push(`password service publishes ${published}`);
  return problems;
}

/** From where the password service's invoke port (9000) answers, among the places that must not reach it: the edge and egress networks, the host. */
async function serviceAnswersFrom(container: string): Promise<string[]> {
  const ips = inspectNetworks(container);
  const reached: string[] = [];
  for (const [network, ip] of Object.entries(ips)) {
    for (const from of [`${NAME}-edge`, `${NAME}-egress`]) if (httpProbe(SERVICE_IMAGE, from, ip, 9000) === 'answered') reached.push(`${from} -> ${network} ${ip}`);
    if ((await hostHttpProbe(ip, 9000)) === 'answered') reached.push(`host -> ${network} ${ip}`);
  }
  return reached;
}

/** httpProbe from this host. */
function hostHttpProbe(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    const s = net.connect({ host, port, timeout: 3000 }, () => s.write(SERVICE_PROBE_REQUEST));
    s.on('data', (d) => (b += d));
    s.on('end', () => resolve(probeVerdict(b)));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    s.on('timeout', () => {
      s.destroy();
      resolve(b ? probeVerdict(b) : 'ETIMEDOUT');
    });
  });
}

describeWithPodman('network isolation of the password service (bridge networks)', () => {
  const seed = ensureDirectory();
  const t = seed.technicalAccounts;
  let dir: string;
  let secretsIn: string;
  let store: Store;
  let egressGateway: string;
  let dc: Awaited<ReturnType<typeof forwarder>> | undefined;
  const consoleUrl = `http://127.0.0.1:${PORT}`;

  beforeAll(async () => {
    ensureImages();
    removeContainers(NAME, 'console', 'password-service', 'exposed');
    removeNetworks(NAME);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-instance-iso-'));
    secretsIn = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-install-secrets-'));
    fs.writeFileSync(path.join(secretsIn, 'laps'), t.laps.password, { mode: 0o600 });
    fs.writeFileSync(path.join(secretsIn, 'reset'), t.reset.password, { mode: 0o600 });
    const install = (...extra: string[]) =>
      sh('bash', [
        path.join(SCRIPTS, 'install.sh'),
        '--instance', dir, '--version', TAG_A, '--name', NAME, '--port', String(PORT), '--network', 'bridge', '--bind', '127.0.0.1',
        '--domain', seed.domain, '--laps-upn', t.laps.upn, '--laps-password-file', path.join(secretsIn, 'laps'),
        '--reset-upn', t.reset.upn, '--reset-password-file', path.join(secretsIn, 'reset'), '--read-upn', t.read.upn, '--write-upn', t.write.upn,
        ...extra,
      ]);
    // the first run makes the instance's networks; the second names the DC by the host's address
    // on the egress network (where the forwarder listens) for both containers
    let r = install();
    if (r.code !== 0) throw new Error(`install failed:\n${r.out}`);
    egressGateway = podman('network', 'inspect', `${NAME}-egress`, '--format', '{{range .Subnets}}{{.Gateway}}{{end}}').out.trim();
    expect(egressGateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    r = install('--add-host', `${DC_NAME}:${egressGateway}`);
    if (r.code !== 0) throw new Error(`install failed:\n${r.out}`);
    // the egress bridge is up now (the service is on it): the DC behind the host's address on it
    dc = await forwarder({ host: egressGateway, port: 636 }, { host: seed.dcs[0].host, port: 636 });
    store = createStore({ sqliteFile: path.join(dir, 'data/console/console.sqlite') });
    fs.chmodSync(path.join(dir, 'data/console/console.sqlite'), 0o640);
  }, 600_000);
  afterAll(async () => {
    for (const c of ['console', 'password-service']) console.log(`--- podman logs ${NAME}-${c}\n${podman('logs', '--tail', '15', `${NAME}-${c}`).out}`);
    store?.close();
    await dc?.close();
    removeContainers(NAME, 'console', 'password-service', 'exposed');
    removeNetworks(NAME);
    for (const d of [dir, secretsIn]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it('puts each container on its own outer network, the password service publishing nothing', () => {
    expect(layoutProblems()).toEqual([]);
    expect(podman('port', `${NAME}-console`).out.trim()).toBe(`8080/tcp -> 127.0.0.1:${PORT}`);
  });

  it('the password service answers on the internal network only: not from edge, egress or the host', async () => {
    const service = inspectNetworks(`${NAME}-password-service`);
    // the console's way: a container on the internal network reaches it
    expect(httpProbe(SERVICE_IMAGE, `${NAME}-internal`, service[`${NAME}-internal`], 9000)).toBe('answered');
    expect(await serviceAnswersFrom(`${NAME}-password-service`)).toEqual([]);
  }, 120_000);

  it('the checks fail on a service listening on all its addresses (the previous scripts) and on a console on the egress network', async () => {
    // a password service as the previous scripts ran it: no listen address, so every interface
    expect(podman('run', '-d', '--name', `${NAME}-exposed`, '--network', `${NAME}-internal`, '--network', `${NAME}-egress`, '-e', 'HDC_LISTEN=0.0.0.0', '-e', 'HDC_SQLITE_FILE=/tmp/exposed.sqlite', SERVICE_IMAGE).code).toBe(0);
    try {
      const exposedIp = inspectNetworks(`${NAME}-exposed`)[`${NAME}-egress`];
      for (let i = 0; i < 40 && (await hostHttpProbe(exposedIp, 9000)) !== 'answered'; i++) await new Promise((r) => setTimeout(r, 250));
      expect(await serviceAnswersFrom(`${NAME}-exposed`)).toEqual(expect.arrayContaining([`${NAME}-edge -> ${NAME}-egress ${exposedIp}`, `host -> ${NAME}-egress ${exposedIp}`]));
    } finally {
      removeContainers(NAME, 'exposed');
    }
    expect(podman('network', 'connect', `${NAME}-egress`, `${NAME}-console`).code).toBe(0);
    try {
      expect(layoutProblems()).toEqual([`console on ${NAME}-edge, ${NAME}-egress, ${NAME}-internal`]);
    } finally {
      expect(podman('network', 'disconnect', `${NAME}-egress`, `${NAME}-console`).code).toBe(0);
    }
    expect(layoutProblems()).toEqual([]);
  }, 120_000);

  it("the password service's secrets and store are not in the console's container", () => {
    // nothing of the service's folders is mounted into the console (its store, copies, secrets)
    const mounts = podman('inspect', `${NAME}-console`, '--format', '{{range .Mounts}}{{.Source}}={{.Destination}} {{end}}').out.trim().split(/\s+/);
    expect(mounts.length).toBeGreaterThan(0);
    expect(mounts.filter((m) => /password-service|service-backups/.test(m))).toEqual([]);
    const secrets = podman('exec', `${NAME}-console`, '/usr/local/bin/node', '-e', "console.log(require('fs').readdirSync('/run/secrets').sort().join(' '))");
    expect(secrets.stdout.trim()).toBe('link.key master.key');
    // neither container's definition shows a technical account's password (files only, never the environment)
    for (const c of ['console', 'password-service']) {
      const definition = podman('inspect', `${NAME}-${c}`).out;
      expect(definition).toContain(`${NAME}-${c}`);
      for (const secret of [t.laps.password, t.reset.password]) expect(definition.includes(secret)).toBe(false);
    }
    // no file the console's processes can read holds the LAPS or the reset account's password
    // (its whole file system, /proc and /sys aside; the passwords given on standard input, never a command line)
    const scan =
      "const fs=require('fs'),p=require('path');const s=fs.readFileSync(0,'utf8').split('\\n').filter(Boolean).map((x)=>Buffer.from(x));let files=0;const hits=[];" +
      "const walk=(d)=>{let es;try{es=fs.readdirSync(d,{withFileTypes:true})}catch{return}for(const e of es){const f=p.join(d,e.name);if(['/proc','/sys','/dev'].includes(f))continue;" +
      "if(e.isDirectory())walk(f);else if(e.isFile()){let b;try{b=fs.readFileSync(f)}catch{continue}files++;if(s.some((x)=>b.includes(x)))hits.push(f)}}};walk('/');console.log(JSON.stringify({files,hits}))";
    const r = sh('podman', ['exec', '-i', `${NAME}-console`, '/usr/local/bin/node', '-e', scan], { input: `${t.laps.password}\n${t.reset.password}\n` });
    const found = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { files: number; hits: string[] };
    expect(found.files).toBeGreaterThan(10);
    expect(found.hits).toEqual([]);
    // the same scan in the service's container finds them: the scan works
    const own = sh('podman', ['exec', '-i', `${NAME}-password-service`, '/usr/local/bin/node', '-e', scan], { input: `${t.laps.password}\n${t.reset.password}\n` });
    expect((JSON.parse(own.stdout.trim().split('\n').pop() ?? '{}') as { hits: string[] }).hits).toEqual(expect.arrayContaining(['/run/secrets/laps.password', '/run/secrets/reset.password']));
  }, 120_000);

  it('the password service reaches the DCs through egress and a reveal through the console works', async () => {
    const masterKey = Buffer.from(fs.readFileSync(path.join(dir, 'secrets/console/master.key'), 'utf8').trim(), 'base64');
    const accounts = await seedConsole(store, masterKey, consoleUrl, seed, { dcs: [{ name: 'dc1', url: `ldaps://${DC_NAME}:636` }] });
    const before = dc!.connections;
    const pin = podman('exec', `${NAME}-console`, '/usr/local/bin/node', '/app/main.js', 'admin', 'pin-password-service');
    expect(pin.out).toContain('pinned');
    const a = accounts.find((x) => x.username === 'op-helpdesk')!;
    const c = new ConsoleClient(consoleUrl);
    expect((await c.login(a.username, a.password, await nextCode(a.username, a.totpSecret!))).status).toBe(200);
    expect((await c.post('/api/auth/reauth', { code: await nextCode(a.username, a.totpSecret!) })).status).toBe(200);
    const pc = seed.computers.find((x) => x.name === 'WS-STD-01') as { guid: string; lapsPassword?: string };
    const r = await c.post(`/api/computers/${pc.guid}/laps`, { confirm: true, ticket: 'INC-7003' });
    expect([r.status, r.body?.password]).toEqual([200, pc.lapsPassword]);
    expect(dc!.connections).toBeGreaterThan(before);
    http.globalAgent.destroy();
  }, 180_000);
});
