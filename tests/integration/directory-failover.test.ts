import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Attribute, Change } from 'ldapts';
import { DirectoryInvalidCredentials, DirectoryPool, type DcEndpoint } from '../../lib/directory';
import { ApiError } from '../../lib/errors';
import { ROOT } from '../../local/processes';
import { account, nextCode, newClient, seedUser, stack } from '../support/stack';

// Against the two real Samba DCs: DC1's process is stopped and started again by PID.
const dcSh = (...args: string[]) => execFileSync('bash', [path.join(ROOT, 'local/directory/dc.sh'), ...args], { stdio: 'pipe' });
const caPem = fs.readFileSync(stack.directory.caFile, 'utf8');
const dcs: DcEndpoint[] = stack.directory.dcs.map((d) => ({ name: d.name, url: d.url }));
const read = { user: stack.directory.technicalAccounts.read.upn, password: stack.directory.technicalAccounts.read.password };

function pool(now: () => number, extra: Partial<ConstructorParameters<typeof DirectoryPool>[1]> = {}, endpoints = dcs) {
  return new DirectoryPool(endpoints, { caPem, connectTimeoutMs: 3000, operationTimeoutMs: 10000, cooldownMs: 60_000, probeIntervalMs: 0, pageSize: 500, searchMaxResults: 5000, now, ...extra });
}
const connects = (p: DirectoryPool) => Object.fromEntries(p.dcState().map((d) => [d.name, d.connects]));
const whoAnswers = (p: DirectoryPool) => p.run(read, 'read', async (_c, dc) => dc.name);

describe('LDAPS failover across the two DCs', () => {
  afterAll(() => {
    dcSh('start', 'dc1');
  });

  it('uses DC1 first while it answers', async () => {
    const p = pool(Date.now);
    expect(await whoAnswers(p)).toBe('dc1');
    expect(connects(p)).toEqual({ dc1: 1, dc2: 0 });
  });

  it('never fails over on a wrong password', async () => {
    const p = pool(Date.now);
    await expect(p.run({ user: read.user, password: 'wrong' }, 'read', async () => 1)).rejects.toBeInstanceOf(DirectoryInvalidCredentials);
    expect(connects(p)).toEqual({ dc1: 1, dc2: 0 });
    expect(p.dcState()[0].healthy).toBe(true);
  });

  it('fails over to DC2 when DC1 is stopped mid-run, keeps DC1 last for the cooldown, retries it once after, and restores the order when it is back', async () => {
    let now = Date.now();
    const p = pool(() => now);
    expect(await whoAnswers(p)).toBe('dc1');

    dcSh('stop', 'dc1');
    // a search on the seeded directory still succeeds, on DC2
    const page = await p.search(read, stack.directory.baseDn, { scope: 'sub', filter: '(sAMAccountName=alice)', attributes: ['sAMAccountName'] });
    expect(page.entries.map((e) => e.sAMAccountName)).toEqual(['alice']);
    expect(p.dcState().map((d) => [d.name, d.healthy])).toEqual([['dc1', false], ['dc2', true]]);
    expect(p.connectionOrder().map((d) => d.name)).toEqual(['dc2', 'dc1']);

    // during the cooldown DC1 is not even tried
    const before = connects(p).dc1;
    now += 30_000;
    expect(await whoAnswers(p)).toBe('dc2');
    expect(connects(p).dc1).toBe(before);

    // after the cooldown exactly one request retries DC1 (still down: it fails over again)
    now += 31_000;
    expect(await whoAnswers(p)).toBe('dc2');
    expect(connects(p).dc1).toBe(before + 1);
    expect(await whoAnswers(p)).toBe('dc2');
    expect(connects(p).dc1).toBe(before + 1);

    // DC1 back: the retry after the next cooldown finds it, and it is first again
    dcSh('start', 'dc1');
    now += 61_000;
    expect(await whoAnswers(p)).toBe('dc1');
    expect(p.connectionOrder().map((d) => d.name)).toEqual(['dc1', 'dc2']);
    expect(await whoAnswers(p)).toBe('dc1');
  });

  it('signs in through the console while DC1 is down', async () => {
    dcSh('stop', 'dc1');
    try {
      const a = account('op-approver');
      const r = await newClient().login(a.username, a.password, await nextCode(a.username));
      expect(r.status).toBe(200);
    } finally {
      dcSh('start', 'dc1');
    }
  });

  it('probes idle DCs on its own and marks a stopped one failed, a restarted one healthy', async () => {
    const p = pool(Date.now, { probeIntervalMs: 300 });
    const stop = p.startHealthProbe(async () => read);
    try {
      dcSh('stop', 'dc1');
      await waitUntil(() => p.dcState()[0].healthy === false, 10_000);
      dcSh('start', 'dc1');
      await waitUntil(() => p.dcState()[0].healthy === true, 20_000);
    } finally {
      stop();
    }
  });

  describe('a connection lost after the request was sent (a real TCP relay to DC1, cut mid-operation)', () => {
    let relay: net.Server;
    const sockets = new Set<net.Socket>();
    const relayPort = 16360;
    beforeAll(async () => {
      relay = net.createServer((client) => {
        const upstream = net.connect(636, '127.0.0.1');
        client.pipe(upstream).pipe(client);
        sockets.add(client).add(upstream);
        const close = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', close);
        upstream.on('error', close);
      });
      await new Promise<void>((r) => relay.listen(relayPort, '127.0.0.1', r));
    });
    afterAll(() => relay.close());
    const cut = () => sockets.forEach((s) => s.destroy());
    const endpoints: DcEndpoint[] = [{ name: 'relay-dc1', url: `ldaps://127.0.0.1:${relayPort}` }, dcs[1]];

    it('re-runs a read on a new connection (DC2)', async () => {
      const p = pool(Date.now, {}, endpoints);
      let calls = 0;
      const who = await p.run(read, 'read', async (client, dc) => {
        calls++;
        if (dc.name === 'relay-dc1') {
          cut();
          await client.search(stack.directory.baseDn, { scope: 'base' });
        }
        return dc.name;
      });
      expect(who).toBe(stack.directory.dcs[1].name);
      expect(calls).toBe(2);
    });

    it('never replays a change on another DC: the outcome is reported unknown', async () => {
      const p = pool(Date.now, {}, endpoints);
      const target = seedUser('bob');
      const marker = `failover-test-${Date.now()}`;
      const write = { user: stack.directory.technicalAccounts.write.upn, password: stack.directory.technicalAccounts.write.password };
      let dc2Used = false;
      const err = await p
        .run(write, 'write', async (client, dc) => {
          if (dc.name !== 'relay-dc1') dc2Used = true;
          cut();
          await client.modify(target.dn, new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: [marker] }) }));
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(502);
      expect((err as ApiError).code).toBe('directory_outcome_unknown');
      expect(dc2Used).toBe(false);
      // and DC2 has not received that change
      const p2 = pool(Date.now, {}, [dcs[1]]);
      const page = await p2.search(read, target.dn, { scope: 'base', attributes: ['description'] });
      expect(page.entries[0].description).not.toBe(marker);
    });
  });
});

async function waitUntil(cond: () => boolean, ms: number) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kept read connections', () => {
  it('reuses one bound connection for technical-account reads, never for a credential check', async () => {
    const p = pool(Date.now);
    for (let i = 0; i < 3; i++) await p.search(read, stack.directory.baseDn, { scope: 'base', attributes: ['dc'] });
    expect(p.dcState()[0].connects).toBe(1);
    for (let i = 0; i < 2; i++) expect(await p.verifyCredentials(read)).toBe(true);
    expect(p.dcState()[0].connects).toBe(3);
    expect(await p.verifyCredentials({ user: read.user, password: 'wrong' })).toBe(false);
    p.stop();
  });

  it('opens a new connection when the kept one went stale, without blaming the DC', async () => {
    const p = pool(Date.now);
    await p.search(read, stack.directory.baseDn, { scope: 'base', attributes: ['dc'] });
    dcSh('stop', 'dc1');
    dcSh('start', 'dc1');
    const page = await p.search(read, stack.directory.baseDn, { scope: 'base', attributes: ['dc'] });
    expect(page.entries.length).toBe(1);
    expect(p.dcState()[0]).toMatchObject({ name: 'dc1', healthy: true, connects: 2 });
    p.stop();
  });
});
