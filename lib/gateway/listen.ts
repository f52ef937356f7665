import net, { type Server } from 'node:net';

// How a gateway takes in a burst of new connections while its thread is busy (issue 28, bench/load's
// overload, which opens hundreds of connections in the burst's first seconds).
//
// The backlog: how many connections the kernel completes for a server before the server accepts
// them (listen(2); the kernel caps it at net.core.somaxconn, 4096 by default since Linux 5.4).
// Node's default is 511: past it the kernel dropped the new connections' SYNs
// (TcpExtListenOverflows), and each client sent its SYN again only 1 s later, then 3 s.
//
// The acceptors: libuv accepts one connection per turn of the event loop and listening socket
// (libuv#3696). With the thread busy, turns of 20 ms took in 50 connections a second while 926
// arrived: up to 1,291 waited in the kernel's queue, for as long as 21 s, where the gateway could
// neither serve nor refuse them. On Linux the gateway therefore listens on ACCEPTORS sockets bound
// to the same port (SO_REUSEPORT: the kernel spreads new connections over them), each handing its
// connections to the one server: as many accepts per turn.
export const LISTEN_BACKLOG = 4096;
export const ACCEPTORS = 16;

/** SO_REUSEPORT as Node offers it (Node 22.12+, Linux 3.9+; elsewhere one socket, as before). */
const [major, minor] = process.versions.node.split('.').map(Number);
const reusePort = process.platform === 'linux' && (major > 22 || (major === 22 && minor >= 12));

export interface Listening {
  /** stop accepting on every socket (then close the server itself) */
  close(): void;
}

/**
 * Listen on `port` and `host` with LISTEN_BACKLOG and, on Linux, ACCEPTORS sockets; resolves once
 * all listen, rejects on a listen error (port taken).
 */
export async function listen(server: Server, port: number, host: string): Promise<Listening> {
  // SO_REUSEPORT would let a second instance of the same user bind the port too, and the kernel
  // would split the connections between the two: a port anyone listens on already (another
  // gateway included) is refused first with EADDRINUSE, as a plain listen would be
  if (reusePort && port !== 0) await refuseIfTaken(port, host);
  await listenOnce(server, { port, host, backlog: LISTEN_BACKLOG, reusePort });
  const acceptors = reusePort ? await addAcceptors(server, (server.address() as net.AddressInfo).port, host) : [];
  return {
    close: () => {
      for (const a of acceptors) a.close();
    },
  };
}

/** The extra sockets (ACCEPTORS - 1) on a port `server` listens on with reusePort: each hands what it accepts to `server`. */
export async function addAcceptors(server: Server, port: number, host: string): Promise<Server[]> {
  const acceptors: Server[] = [];
  for (let i = 1; i < ACCEPTORS; i++) {
    // the server's own connection handling (HTTP's parser, TLS's handshake) takes the socket over
    const acceptor = net.createServer((socket) => server.emit('connection', socket));
    await listenOnce(acceptor, { port, host, backlog: LISTEN_BACKLOG, reusePort: true });
    acceptors.push(acceptor);
  }
  return acceptors;
}

/** Listen on the port without SO_REUSEPORT for a moment: rejects (EADDRINUSE) when anyone listens on it. */
async function refuseIfTaken(port: number, host: string): Promise<void> {
  const probe = net.createServer();
  await listenOnce(probe, { port, host });
  await new Promise((resolve) => probe.close(resolve));
}

function listenOnce(server: Server, options: net.ListenOptions & { reusePort?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * `server.listen` arguments as hapi passes them (serverless-offline's gateway: port, address,
 * callback) rewritten to listen as `listen` does: LISTEN_BACKLOG and reusePort, the acceptors added
 * before the callback; any other form is passed on as it is. No EADDRINUSE check here: `npm start`
 * refuses a stack port anyone listens on before it starts (local/stack.ts).
 */
export function gatewayListenArgs(server: Server, args: unknown[]): unknown[] {
  const [port, host, callback] = args;
  if (args.length !== 3 || typeof port !== 'number' || typeof host !== 'string' || typeof callback !== 'function') return args;
  const listening = () => {
    if (!reusePort) return callback();
    addAcceptors(server, (server.address() as net.AddressInfo).port, host).then(() => callback(), (e: unknown) => server.emit('error', e));
  };
  return [{ port, host, backlog: LISTEN_BACKLOG, reusePort }, listening];
}
