import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { LISTEN_BACKLOG, withBacklog } from '../../lib/gateway/listen';

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

function busyServer(): Promise<number> {
  const script = `
    const net = require('node:net');
    const { listen } = require(${JSON.stringify(path.join(ROOT, 'lib/gateway/listen.ts'))});
    const server = net.createServer((socket) => socket.on('error', () => {}));
    listen(server, 0, '127.0.0.1').then(() => {
      process.stdout.write(server.address().port + '\\n');
      const until = Date.now() + ${BUSY_MS};
      while (Date.now() < until); // the thread busy: nothing is accepted meanwhile
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

  it('hapi\'s listen (port, address, callback) is given the backlog; any other form is passed on', () => {
    const cb = () => undefined;
    expect(withBacklog([3000, '127.0.0.1', cb])).toEqual([{ port: 3000, host: '127.0.0.1', backlog: LISTEN_BACKLOG }, cb]);
    expect(withBacklog([3000, cb])).toEqual([3000, cb]);
    expect(withBacklog([{ port: 3000 }, cb])).toEqual([{ port: 3000 }, cb]);
    expect(LISTEN_BACKLOG).toBeGreaterThan(511);
  });
});
