// A TCP proxy (on 127.0.0.1 unless told otherwise) that tests can cut and heal: a network partition between one client
// and one server, or one stable address in front of servers that come and go. Bytes pass through
// untouched, so TLS is end to end.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /**
   * Drops every open connection; new ones are held, unanswered, until `heal()` (as over a network
   * that loses packets), so that a client's retries wait instead of failing again and again.
   */
  partition(): void;
  /** Connects the held connections and lets new ones through again. */
  heal(): void;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

/**
 * `target()` picks the backend for each new connection (undefined: none, the connection is
 * dropped), so that a test can route around a backend that is going away, as a Service does.
 */
export async function startTcpProxy(target: () => number | undefined, options: { host?: string } = {}): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const held: Socket[] = [];
  let partitioned = false;
  let accepted = 0;
  const track = (socket: Socket): void => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    // A reset on either side only ends that connection.
    socket.on('error', () => socket.destroy());
  };
  const forward = (client: Socket): void => {
    const port = target();
    if (port === undefined || client.destroyed) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port });
    if (!open.has(client)) track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  const server: Server = createServer((client) => {
    accepted += 1;
    if (!partitioned) {
      forward(client);
      return;
    }
    track(client);
    client.pause();
    held.push(client);
  });
  // `host`: another address of this machine (a node's end of its link), for clients that cannot reach its loopback.
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('proxy has no port');
  const dropAll = (): void => {
    for (const socket of open) socket.destroy();
  };
  return {
    port: address.port,
    partition: () => {
      partitioned = true;
      dropAll();
    },
    heal: () => {
      partitioned = false;
      for (const client of held.splice(0)) forward(client);
    },
    accepted: () => accepted,
    close: async () => {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
