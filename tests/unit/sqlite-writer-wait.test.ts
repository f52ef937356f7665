import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppendPastDeadline, AuditChain } from '../../lib/audit';
import { createSession, loadSession, type SessionPolicy } from '../../lib/auth/sessions';
import { sha256Hex } from '../../lib/crypto/seal';
import { inRequestScope, setRequestDeadline } from '../../lib/request-scope';
import { isWriterBusy } from '../../lib/store';
import { createSqliteStore } from '../../lib/store/sqlite';

// Issue 28: node:sqlite waits for the writer's lock synchronously, holding the worker thread (and
// every request of that thread). A write given `waitUntil` waits at most until then; a read's
// decision row and its session refresh use it. The lock is held here by another process, as a
// busy worker of the stack would hold it (another thread's wait cannot be shown in one thread:
// the holder would be blocked too).

let dir: string;
let holder: ChildProcess | undefined;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-writer-wait-'));
});
afterEach(() => {
  holder?.kill('SIGKILL');
  holder = undefined;
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Another process takes the writer's lock of `file` and keeps it `holdMs` (resolves once it has it). */
function holdWriterLock(file: string, holdMs: number): Promise<void> {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); process.stdout.write('released\\n'); }, ${holdMs});
    setTimeout(() => process.exit(0), ${holdMs} + 50);`;
  holder = spawn(process.execPath, ['--no-warnings', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    holder!.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    holder!.on('exit', (code) => reject(new Error(`lock holder exited (${code}) before taking the lock`)));
  });
}

const fresh = (name: string) => {
  const file = path.join(dir, `${name}.sqlite`);
  const store = createSqliteStore(file);
  return { file, store };
};

describe('SQLite: a write waits for the writer lock until its waitUntil at most (issue 28)', () => {
  it('lock held past waitUntil: WriterBusy after about the wait, nothing written; the next write without one waits as before', async () => {
    const { file, store } = fresh('store');
    await holdWriterLock(file, 900);
    const started = Date.now();
    const err = await store.put({ Item: { pk: 'p', sk: 'a', v: 1 } }, { waitUntil: started + 200 }).catch((e) => e);
    const waited = Date.now() - started;
    expect(isWriterBusy(err)).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(150);
    expect(waited).toBeLessThan(700); // not the lock holder's 900 ms, nor busy_timeout's 10 s
    // busy_timeout is restored: a write without waitUntil waits for the holder and is made
    await store.put({ Item: { pk: 'p', sk: 'b', v: 2 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(850);
    expect((await store.get({ Key: { pk: 'p', sk: 'a' } })).Item).toBeUndefined();
    expect((await store.get({ Key: { pk: 'p', sk: 'b' } })).Item).toMatchObject({ v: 2 });
    store.close();
  });

  it('lock free: a write with a waitUntil already past is still made (the wait bounds waiting, not writing)', async () => {
    const { store } = fresh('free');
    await store.transactWrite([{ Put: { TableName: store.tableName, Item: { pk: 'p', sk: 'a', v: 1 } } }], { waitUntil: Date.now() - 1000 });
    expect((await store.get({ Key: { pk: 'p', sk: 'a' } })).Item).toMatchObject({ v: 1 });
    store.close();
  });
});

describe("a read's own writes under a held writer lock (issue 28)", () => {
  it("a decision row with a deadline: AppendPastDeadline at the deadline, not after the lock's holder; no row written", async () => {
    const { file, store } = fresh('audit');
    const chain = new AuditChain(store, 'console');
    const first = await chain.append({ event: 'authz.decision', outcome: 'success', reason: 'r0', actor: { id: 'op', name: 'op', provider: 'local', ip: '127.0.0.1' }, correlationId: 'c0' });
    await holdWriterLock(file, 1500);
    const started = Date.now();
    const deadline = { at: started + 250, retryAfterSeconds: 2 };
    const err = await chain.append({ event: 'authz.decision', outcome: 'success', reason: 'r1', actor: { id: 'op', name: 'op', provider: 'local', ip: '127.0.0.1' }, correlationId: 'c1' }, { deadline }).catch((e) => e);
    expect(err).toBeInstanceOf(AppendPastDeadline);
    expect(Date.now() - started).toBeLessThan(250 + 400);
    holder!.kill('SIGKILL'); // the holder's lock goes with it
    await new Promise((r) => holder!.once('exit', r));
    expect((await chain.extent()).headSeq).toBe(first.seq);
    expect(await chain.row(first.seq + 1)).toBeUndefined();
    expect((await chain.verify()).ok).toBe(true);
    store.close();
  });

  it("a read's session refresh gives way after about 100 ms (the session still answers, lastSeenAt unchanged); a change's refresh waits and writes", async () => {
    const { file, store } = fresh('session');
    const policy = { idleSeconds: 900, absoluteSeconds: 8 * 3600 } as SessionPolicy;
    const session = await createSession(store, policy, { guid: '6f1c3a52-0d7e-4d8a-9e1b-2c3d4e5f6a7b', username: 'op', provider: 'ad' } as never);
    // last seen 60 s ago: due for its refresh, well within half the idle limit
    const stale = { ...session, lastSeenAt: session.lastSeenAt - 60 };
    const { id: _id, version: _v, ...data } = stale;
    expect((await loadStored(store, session.id)).lastSeenAt).toBe(session.lastSeenAt); // the key planted over below
    store.plant({ pk: `SESSION#${sha256Hex(session.id)}`, sk: 'SESSION', _et: 'Record', data, version: 2, ttl: data.expiresAt });

    await holdWriterLock(file, 1200);
    const started = Date.now();
    const read = await inRequestScope(() => {
      setRequestDeadline({ at: started + 2000, retryAfterSeconds: 2 });
      return loadSession(store, session.id, policy);
    });
    expect(Date.now() - started).toBeLessThan(600); // not until the holder lets go (1.2 s)
    expect(read?.id).toBe(session.id);
    expect(read?.lastSeenAt).toBe(stale.lastSeenAt);
    expect((await loadStored(store, session.id)).lastSeenAt).toBe(stale.lastSeenAt);

    // no deadline (a change): waits for the holder, then writes the refresh
    const changed = await inRequestScope(() => loadSession(store, session.id, policy));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
    expect(changed?.id).toBe(session.id);
    expect((await loadStored(store, session.id)).lastSeenAt).toBeGreaterThan(stale.lastSeenAt);
    store.close();
  });
});

async function loadStored(store: ReturnType<typeof createSqliteStore>, id: string) {
  return (await store.get({ Key: { pk: `SESSION#${sha256Hex(id)}`, sk: 'SESSION' } })).Item!.data as { lastSeenAt: number };
}
