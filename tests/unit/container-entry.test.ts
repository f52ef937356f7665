import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { reloadOnChange } from '../../containers/main';
import { runStoreCommand } from '../../containers/store-copies';
import { createSqliteStore } from '../../lib/store/sqlite';

// The image entry's commands on a container's own store (containers/store-copies.ts) and the
// certificate served as it is renewed (containers/main.ts). The container suite runs them in the
// images; here each refusal and each cut is shown on files.

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-entry-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function sqliteCopy(name: string, items: Array<Record<string, unknown>>): Promise<string> {
  const store = createSqliteStore(path.join(dir, `${name}-live.sqlite`));
  for (const Item of items) await store.put({ Item });
  const { location } = await store.snapshot({ folder: dir, name });
  store.close();
  return location;
}
const consoleItems = [
  { pk: 'INSTANCE', sk: 'SETTINGS', data: {} },
  { pk: 'AUDIT#console', sk: '000000000001', data: {} },
  { pk: 'DCHEALTH#console', sk: 'dc1', data: {} },
];
const serviceItems = [
  { pk: 'PWDSVC', sk: 'PIN', data: {} },
  { pk: 'AUDIT#password-service', sk: '000000000001', data: {} },
  { pk: 'WINDOW#pwdsvc-laps#x', sk: 'w', data: {} },
];

describe('check-copy: a copy of this container\'s own store, or exit 2', () => {
  it('accepts each service\'s own copy', async () => {
    expect(await runStoreCommand('console', ['check-copy', await sqliteCopy('console-backup', consoleItems)])).toMatchObject({ code: 0, out: expect.stringContaining("a copy of the console's store, 3 item(s)") });
    expect((await runStoreCommand('password-service', ['check-copy', await sqliteCopy('password-service-backup', serviceItems)])).code).toBe(0);
  });
  it.each([
    ['a text file', 'console', () => fs.writeFileSync(path.join(dir, 'x.sqlite'), 'not a database'), /not a database copy/],
    ['a file with the header only', 'console', () => fs.writeFileSync(path.join(dir, 'x.sqlite'), 'SQLite format 3\u0000'), /not a database copy/],
  ])('refuses %s', async (_n, role, make, message) => {
    make();
    const r = await runStoreCommand(role as 'console', ['check-copy', path.join(dir, 'x.sqlite')]);
    expect([r.code, r.out]).toEqual([2, expect.stringMatching(message)]);
  });
  it("refuses the service's copy in the console's place, the console's in the service's, either in the fleet's", async () => {
    const service = await sqliteCopy('svc', serviceItems);
    const console_ = await sqliteCopy('con', consoleItems);
    for (const [role, file] of [['console', service], ['password-service', console_], ['fleet', console_], ['fleet', service]] as const) {
      const r = await runStoreCommand(role, ['check-copy', file]);
      expect([role, r.code, r.out]).toEqual([role, 2, expect.stringContaining("a copy of another service's store")]);
    }
  });
  it('reads a WAL-mode copy in a folder it may not write (the index goes to a private copy)', async () => {
    const file = await sqliteCopy('console-backup', consoleItems);
    const ro = path.join(dir, 'ro');
    fs.mkdirSync(ro);
    fs.copyFileSync(file, path.join(ro, 'c.sqlite'));
    fs.chmodSync(ro, 0o555);
    expect((await runStoreCommand('console', ['check-copy', path.join(ro, 'c.sqlite')])).code).toBe(0);
    expect(fs.readdirSync(ro)).toEqual(['c.sqlite']);
  });
});

describe('split-copy: a copy of the shared table cut in two', () => {
  it("writes the service's partitions to one file and the rest to the other", async () => {
    const file = path.join(dir, 'hdc-backup-1.jsonl');
    fs.writeFileSync(file, [...consoleItems, ...serviceItems].map((it) => JSON.stringify(it)).join('\n') + '\n');
    const r = await runStoreCommand('console', ['split-copy', file]);
    expect(r.code).toBe(0);
    const read = (f: string) => fs.readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l).pk);
    expect(read(path.join(dir, 'hdc-backup-1.console.jsonl'))).toEqual(['INSTANCE', 'AUDIT#console', 'DCHEALTH#console']);
    expect(read(path.join(dir, 'hdc-backup-1.password-service.jsonl'))).toEqual(['PWDSVC', 'AUDIT#password-service', 'WINDOW#pwdsvc-laps#x']);
    expect((fs.statSync(path.join(dir, 'hdc-backup-1.password-service.jsonl')).mode & 0o777).toString(8)).toBe('600');
  });
  it('refuses anything but a JSON-lines copy, and any image but the console\'s', async () => {
    expect((await runStoreCommand('console', ['split-copy', await sqliteCopy('c', consoleItems)])).code).toBe(2);
    expect((await runStoreCommand('password-service', ['split-copy', path.join(dir, 'x.jsonl')])).code).toBe(2);
  });
});

describe('restore: the store made exactly its copy; the wrong copy changes nothing', () => {
  it('restores its own copy and refuses another\'s', async () => {
    const live = path.join(dir, 'password-service.sqlite');
    const store = createSqliteStore(live);
    await store.put({ Item: { pk: 'PWDSVC', sk: 'OTHER', data: {} } });
    const env = { HDC_SQLITE_FILE: live };
    const refused = await runStoreCommand('password-service', ['restore', await sqliteCopy('con', consoleItems), '--confirm'], env);
    expect([refused.code, refused.out]).toEqual([2, expect.stringContaining('nothing changed')]);
    expect(store.allItems().map((i) => i.sk)).toEqual(['OTHER']);
    const r = await runStoreCommand('password-service', ['restore', await sqliteCopy('svc', serviceItems), '--confirm'], env);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('3 item(s) written, 1 deleted')]);
    expect(store.allItems().map((i) => i.pk).sort()).toEqual(['AUDIT#password-service', 'PWDSVC', 'WINDOW#pwdsvc-laps#x']);
    store.close();
  });
});

describe('a renewed certificate is served without a restart', () => {
  const makePair = (name: string) => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', path.join(dir, `${name}.key`), '-out', path.join(dir, `${name}.pem`), '-days', '2', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  };
  const servedSubject = (port: number) =>
    new Promise<string>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port, path: '/', rejectUnauthorized: false, agent: false }, (res) => {
          resolve(String((res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN));
          res.resume();
        })
        .on('error', reject);
    });
  it('swaps to the new pair once both files changed, and keeps the old one while the pair does not match', async () => {
    makePair('first');
    makePair('second');
    const files = { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
    fs.copyFileSync(path.join(dir, 'first.pem'), files.cert);
    fs.copyFileSync(path.join(dir, 'first.key'), files.key);
    const server = https.createServer({ cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key) }, (_q, r) => r.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const stop = reloadOnChange(server, files, 50);
    try {
      expect(await servedSubject(port)).toBe('first');
      // half a renewal: the new certificate beside the old key is not served
      fs.copyFileSync(path.join(dir, 'second.pem'), files.cert);
      await new Promise((r) => setTimeout(r, 200));
      expect(await servedSubject(port)).toBe('first');
      fs.copyFileSync(path.join(dir, 'second.key'), files.key);
      await new Promise((r) => setTimeout(r, 200));
      expect(await servedSubject(port)).toBe('second');
    } finally {
      stop();
      server.close();
    }
  });
});
