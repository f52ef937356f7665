import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { ACCEPTORS, LISTEN_BACKLOG, listen, gatewayListenArgs } from '../../lib/gateway/listen';
import { makeTestCa } from '../support/test-ca';

// A burst of new connections while the server's thread is busy (bench/load's overload: hundreds of
// connections opened in the burst's first second). The kernel completes the handshakes and holds
// the connections until the server accepts them, up to the listen backlog; past it, it drops the
// SYN and the client sends it again only 1 s later. The server listens in its own process (as a
// gateway does), then keeps its thread busy for 1.5 s: every connection of the burst must be
// established at once, none after a SYN sent again (Node's default backlog, 511, fails this).

const ROOT = path.resolve(__dirname, '../..');
/** more than Node's default backlog (511), fewer than a default limit of open files (1024) */
const BURST = 600;
const BUSY_MS = 1500;

let server: ChildProcess | undefined;
afterEach(() => server?.kill());

/**
 * A server in its own process that, once listening, keeps its thread busy for BUSY_MS: `blocked`,
 * in one piece (nothing accepted meanwhile); `turns`, in turns of 20 ms, then prints how many
 * connections it accepted meanwhile.
 */
function busyServer(mode: 'blocked' | 'turns' = 'blocked'): Promise<number> {
  const script = `
    const net = require('node:net');
    const { listen } = require(${JSON.stringify(path.join(ROOT, 'lib/gateway/listen.ts'))});
    let accepted = 0;
    const server = net.createServer((socket) => { accepted++; socket.on('error', () => {}); });
    listen(server, 0, '127.0.0.1').then(() => {
      process.stdout.write(server.address().port + '\\n');
      const until = Date.now() + ${BUSY_MS};
      if (${JSON.stringify(mode)} === 'blocked') {
        while (Date.now() < until); // the thread busy: nothing is accepted meanwhile
        return;
      }
      const turn = () => {
        const end = Date.now() + 20;
        while (Date.now() < end);
        if (Date.now() < until) setImmediate(turn);
        else process.stdout.write(accepted + '\\n');
      };
      setImmediate(turn);
    });`;
  server = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    server!.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    server!.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

describe('the gateways listen with a backlog for a burst of connections', () => {
  it(`${BURST} connections opened at once while the server is busy for ${BUSY_MS} ms: all established within 700 ms`, async () => {
    const port = await busyServer();
    const start = Date.now();
    const sockets: net.Socket[] = [];
    const times = await Promise.all(
      Array.from(
        { length: BURST },
        () =>
          new Promise<number>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => resolve(Date.now() - start));
            s.on('error', () => resolve(Infinity));
            sockets.push(s);
          }),
      ),
    );
    for (const s of sockets) s.destroy();
    const late = times.filter((ms) => ms > 700);
    expect({ late: late.length, worst: Math.max(...times) < 700 }).toEqual({ late: 0, worst: true });
  });

  it(`${BURST} connections while the server's thread turns every 20 ms for ${BUSY_MS} ms: at least 500 accepted meanwhile (libuv accepts one per turn and socket: one socket took in about 75)`, async () => {
    const port = await busyServer('turns');
    const sockets = Array.from({ length: BURST }, () => net.connect(port, '127.0.0.1').on('error', () => undefined));
    const accepted = await new Promise<number>((resolve) => server!.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    for (const s of sockets) s.destroy();
    expect(accepted).toBeGreaterThanOrEqual(500);
  });

  it('HTTP and HTTPS served over every socket: 64 new connections, each answered by the one server', async () => {
    const ca = makeTestCa('listen');
    const pair = ca.issue('gateway');
    for (const [scheme, server, get] of [
      ['http', http.createServer((_q, r) => r.end('ok')), http.get],
      ['https', https.createServer(pair, (_q, r) => r.end('ok')), https.get],
    ] as const) {
      const listening = await listen(server, 0, '127.0.0.1');
      const port = (server.address() as net.AddressInfo).port;
      const bodies = await Promise.all(
        Array.from(
          { length: 64 },
          () =>
            new Promise<string>((resolve, reject) => {
              const agent = scheme === 'https' ? new https.Agent({ ca: ca.caPem, keepAlive: false }) : new http.Agent({ keepAlive: false });
              (get as typeof http.get)(`${scheme}://127.0.0.1:${port}/`, { agent }, (res) => {
                let b = '';
                res.on('data', (c) => (b += c));
                res.on('end', () => resolve(b));
              }).on('error', reject);
            }),
        ),
      );
      expect([scheme, bodies.filter((b) => b === 'ok').length]).toEqual([scheme, 64]);
      listening.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('a port another gateway (or anything else) listens on is refused with EADDRINUSE, not shared through SO_REUSEPORT', async () => {
    const first = http.createServer((_q, r) => r.end('first'));
    const listening = await listen(first, 0, '127.0.0.1');
    const port = (first.address() as net.AddressInfo).port;
    const second = http.createServer((_q, r) => r.end('second'));
    await expect(listen(second, port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(second.listening).toBe(false);
    listening.close();
    await new Promise((r) => first.close(r));
  });

  it("hapi's listen (port, address, callback) is given the backlog and the acceptors; any other form is passed on", () => {
    const cb = () => undefined;
    const server = net.createServer();
    const [options, listening] = gatewayListenArgs(server, [3000, '127.0.0.1', cb]);
    expect(options).toEqual({ port: 3000, host: '127.0.0.1', backlog: LISTEN_BACKLOG, reusePort: process.platform === 'linux' });
    expect(listening).toBeInstanceOf(Function);
    expect(gatewayListenArgs(server, [3000, cb])).toEqual([3000, cb]);
    expect(gatewayListenArgs(server, [{ port: 3000 }, cb])).toEqual([{ port: 3000 }, cb]);
    expect(LISTEN_BACKLOG).toBeGreaterThan(511);
    expect(ACCEPTORS).toBeGreaterThan(1);
  });
});
