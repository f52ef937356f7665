import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PREVIOUS_COMMIT, previousCommitAvailable, previousRelease, type PreviousRelease } from '../../containers/previous-images';
import { execFileSync } from 'node:child_process';
import { AuditChain } from '../../lib/audit';
import { packZip, wrapperScript, type UpgradePack } from '../../lib/fleet/upgrades/pack';
import { isServiceItem, SERVICE_CHAIN } from '../../lib/password-service/link/service-chain';
import { PIN_KEY } from '../../lib/password-service/service-side/context';
import { createStore, type Store } from '../../lib/store';
import { getRecord } from '../../lib/store/records';
import { ConsoleClient } from '../../local/console-client';
import { seedConsole } from '../../local/seed-app';
import { ensureDirectory } from '../../local/stack';
import { allItems, describeWithPodman, ensureImages, names, nextCode, podman, removeContainers, sh, SCRIPTS, TAG_A } from './support';

// An instance installed from the previous images (the last release with DynamoDB Local as its
// store, built from that commit: containers/previous-images.ts) and its own scripts, used (setup,
// roles, a LAPS reveal: both audit chains written), then upgraded in place by this release's
// upgrade.sh, as a fleet upgrade pack runs it (the pack's wrapper, which finds the instance's own
// script from before the embedded store and runs the pack's instead): the console's JSON-lines copy
// of the shared table is cut in two and loaded into the console's and the password service's
// SQLite files; DynamoDB Local stops, its data left in place.

const NAME = 'hdcup';
const PORT = 18643;

async function chainRows(store: Store, chain: string) {
  const rows = [];
  for await (const r of new AuditChain(store, chain).rows()) rows.push(r);
  return rows;
}

// the previous release is built from its commit: a clone without that history (shallow, no origin
// to fetch it from) cannot build it, and says so here rather than failing for a reason not the product's
const historyAvailable = previousCommitAvailable();
if (!historyAvailable) console.warn(`[previous images] commit ${PREVIOUS_COMMIT} is not in this clone (shallow?) and could not be fetched: the upgrade from the previous images is SKIPPED`);
(historyAvailable ? describeWithPodman : describe.skip)('an instance on the previous images (DynamoDB Local) upgraded to the embedded store', () => {
  const seed = ensureDirectory();
  const t = seed.technicalAccounts;
  let prev: PreviousRelease;
  let dir: string;
  let secretsIn: string;
  const consoleUrl = `http://127.0.0.1:${PORT}`;
  let accounts: Awaited<ReturnType<typeof seedConsole>>;
  let before: { consoleRows: number; serviceRows: number; items: number };

  const reveal = async () => {
    const a = accounts.find((x) => x.username === 'op-helpdesk')!;
    const c = new ConsoleClient(consoleUrl);
    expect((await c.login(a.username, a.password, await nextCode(a.username, a.totpSecret!))).status).toBe(200);
    expect((await c.post('/api/auth/reauth', { code: await nextCode(a.username, a.totpSecret!) })).status).toBe(200);
    const pc = seed.computers.find((x) => x.name === 'WS-STD-01') as { guid: string; lapsPassword?: string };
    const r = await c.post(`/api/computers/${pc.guid}/laps`, { confirm: true, ticket: 'INC-7002' });
    expect([r.status, r.body?.password]).toEqual([200, pc.lapsPassword]);
  };

  beforeAll(() => {
    Object.assign(process.env, { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
    ensureImages();
    // the previous release's images, from its commit (reused when already built)
    const started = Date.now();
    prev = previousRelease(undefined, (l) => console.log(`[previous images] ${l}`));
    console.log(`[previous images] ${prev.tag} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-instance-prev-'));
    secretsIn = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-install-secrets-'));
    fs.writeFileSync(path.join(secretsIn, 'laps'), t.laps.password, { mode: 0o600 });
    fs.writeFileSync(path.join(secretsIn, 'reset'), t.reset.password, { mode: 0o600 });
    removeContainers(NAME, 'console', 'password-service', 'db');
  }, 900_000);
  afterAll(() => {
    for (const c of ['console', 'password-service']) console.log(`--- podman logs ${NAME}-${c}\n${podman('logs', '--tail', '15', `${NAME}-${c}`).out}`);
    if (process.env.HDC_KEEP_INSTANCE === '1') return;
    removeContainers(NAME, 'console', 'password-service', 'db');
    fs.rmSync(secretsIn, { recursive: true, force: true });
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs on the previous images with their own scripts: a store container, the data in DynamoDB Local', async () => {
    const r = sh('bash', [
      path.join(prev.scripts, 'install.sh'),
      '--instance', dir, '--version', prev.tag, '--name', NAME, '--port', String(PORT), '--network', 'host', '--bind', '127.0.0.1',
      '--domain', seed.domain, '--laps-upn', t.laps.upn, '--laps-password-file', path.join(secretsIn, 'laps'),
      '--reset-upn', t.reset.upn, '--reset-password-file', path.join(secretsIn, 'reset'), '--read-upn', t.read.upn, '--write-upn', t.write.upn,
    ]);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('console healthy')]);
    expect(names(NAME)).toEqual([`${NAME}-console`, `${NAME}-db`, `${NAME}-password-service`]);
    expect(fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8')).not.toContain('HDC_STORE');
    // its table, through DynamoDB Local's port (the previous layout: PORT + 2 on a host-network lab)
    const table = createStore({ endpoint: `http://127.0.0.1:${PORT + 2}`, tableName: 'hdc' });
    const masterKey = Buffer.from(fs.readFileSync(path.join(dir, 'secrets/console/master.key'), 'utf8').trim(), 'base64');
    accounts = await seedConsole(table, masterKey, consoleUrl, seed);
    expect(podman('exec', `${NAME}-console`, '/usr/local/bin/node', '/app/main.js', 'admin', 'pin-password-service').out).toContain('pinned');
    await reveal();
    let items = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await table.scan({ ExclusiveStartKey: start });
      items += page.Items.length;
      start = page.LastEvaluatedKey;
    } while (start);
    before = { consoleRows: (await chainRows(table, 'console')).length, serviceRows: (await chainRows(table, SERVICE_CHAIN)).length, items };
    expect(before.serviceRows).toBeGreaterThan(0);
    expect(await getRecord(table, PIN_KEY.pk, PIN_KEY.sk)).toBeDefined();
    table.close();
  }, 300_000);

  it("a fleet upgrade pack's wrapper runs this release's upgrade.sh: the data moved into the two SQLite files, the pin and both chains kept; DynamoDB Local stops", async () => {
    // the pack as the fleet plane makes it (zip), unpacked on the console's host
    const image = `localhost:${TAG_A}`;
    const generatedAt = new Date().toISOString();
    const host = `127.0.0.1-${PORT}`;
    const pack: UpgradePack = {
      target: { tag: TAG_A, repository: 'localhost', image },
      generatedAt,
      leftOut: [],
      clients: [{ code: 'acme', name: 'Acme', consoles: [{ id: 'i1', url: `https://127.0.0.1:${PORT}`, host, from: null, to: TAG_A, drift: 'unknown', plannedAt: '', newlyPlanned: true, commands: [], script: wrapperScript({ url: `https://127.0.0.1:${PORT}`, host, clientCode: 'acme', from: null, to: TAG_A, image }, generatedAt) }] }],
    };
    const unpacked = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-pack-'));
    fs.writeFileSync(path.join(unpacked, 'pack.zip'), packZip(pack));
    execFileSync('unzip', ['-q', path.join(unpacked, 'pack.zip'), '-d', unpacked]);
    expect(fs.readFileSync(path.join(dir, 'upgrade.sh'), 'utf8')).not.toContain('HDC_STORE'); // the previous release's own script
    const r = sh('bash', [path.join(unpacked, 'acme', `upgrade-${host}.sh`), dir]);
    expect(r.out).toContain(`[hdc] ${dir}: this pack's upgrade.sh runs`);
    expect(r.out).toContain('moving the data from DynamoDB Local');
    expect(r.out).toContain(`upgraded to localhost:${TAG_A}`);
    expect(r.code).toBe(0);
    expect(names(NAME)).toEqual([`${NAME}-console`, `${NAME}-password-service`]);
    const env = fs.readFileSync(path.join(dir, 'hdc.env'), 'utf8');
    expect(env).toContain(`HDC_IMAGE_TAG=${TAG_A}`);
    expect(env).toContain('HDC_STORE=sqlite');
    // this release's scripts in the instance, the previous ones kept aside for a rollback
    expect(fs.readFileSync(path.join(dir, 'upgrade.sh'), 'utf8')).toBe(fs.readFileSync(path.join(SCRIPTS, 'upgrade.sh'), 'utf8'));
    expect(fs.readdirSync(path.join(dir, 'archives')).some((f) => /^before-upgrade-.+\.tar\.gz$/.test(f))).toBe(true);
    // the previous store's files stay where they were
    expect(fs.readdirSync(path.join(dir, 'data/db')).length).toBeGreaterThan(0);

    // what each store holds now: a copy of each, taken by its own container (SQLite's online backup)
    const copyOf = (container: string, command: string[], folder: string) => {
      const r = podman('exec', container, '/usr/local/bin/node', '/app/main.js', ...command);
      expect(r.code).toBe(0);
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-moved-'));
      fs.copyFileSync(path.join(dir, folder, path.basename(r.stdout.trim())), path.join(scratch, 'copy.sqlite'));
      return createStore({ sqliteFile: path.join(scratch, 'copy.sqlite') });
    };
    const consoleStore = copyOf(`${NAME}-console`, ['admin', 'backup'], 'backups');
    const serviceStore = copyOf(`${NAME}-password-service`, ['backup'], 'service-backups');
    try {
      const consoleItems = await allItems(consoleStore);
      const serviceItems = await allItems(serviceStore);
      expect(consoleItems.filter((it) => isServiceItem(it.pk))).toEqual([]);
      expect(serviceItems.filter((it) => !isServiceItem(it.pk) && !String(it.pk).startsWith('SCHEDULE#'))).toEqual([]);
      expect(consoleItems.length + serviceItems.length).toBeGreaterThanOrEqual(before.items);
      // both chains carried whole (the console's grew by the restore's and the copy's own rows), and still verify
      expect((await chainRows(consoleStore, 'console')).length).toBeGreaterThan(before.consoleRows);
      expect((await chainRows(serviceStore, SERVICE_CHAIN)).length).toBe(before.serviceRows);
      expect((await new AuditChain(serviceStore, SERVICE_CHAIN).verify()).ok).toBe(true);
      expect(await getRecord(serviceStore, PIN_KEY.pk, PIN_KEY.sk)).toBeDefined();
    } finally {
      consoleStore.close();
      serviceStore.close();
    }
    const verify = podman('exec', `${NAME}-console`, '/usr/local/bin/node', '/app/main.js', 'admin', 'verify-audit');
    expect([verify.code, verify.out]).toEqual([0, expect.stringContaining('"ok":true')]);
    // the same operators sign in, and the pinned service reveals (no new pin)
    http.globalAgent.destroy();
    await reveal();
  }, 300_000);
});
