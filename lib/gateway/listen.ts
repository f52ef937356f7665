import type { Server } from 'node:net';

// How many connections the kernel completes for a server before the server accepts them (listen(2)'s
// backlog; the kernel caps it at net.core.somaxconn, 4096 by default since Linux 5.4). Node's
// default is 511. bench/load's overload opens hundreds of connections in the burst's first second,
// while the server's thread is busy with the requests already in: past 511 the kernel dropped the
// new connections' SYNs (TcpExtListenOverflows), and each client sent its SYN again only 1 s later,
// then 3 s. Those requests were answered 1 to 2 s past their read budget on both gateways,
// however fast the server served or refused them once they were in.
export const LISTEN_BACKLOG = 4096;

/** Listen on `port` and `host` with LISTEN_BACKLOG; resolves once listening, rejects on a listen error (port taken). */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * `server.listen` arguments as hapi passes them (serverless-offline's gateway: port, address,
 * callback) given LISTEN_BACKLOG; any other form is passed on as it is.
 */
export function withBacklog(args: unknown[]): unknown[] {
  const [port, host, callback] = args;
  if (args.length === 3 && typeof port === 'number' && typeof host === 'string' && typeof callback === 'function') return [{ port, host, backlog: LISTEN_BACKLOG }, callback];
  return args;
}
