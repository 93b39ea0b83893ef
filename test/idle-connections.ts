// Raw TCP connections to a listener of ours that never send a byte (loopback only, a bounded
// count), for the tests of what the admission server does with them.
import { connect, type Socket } from 'node:net';

/** `count` connections to 127.0.0.1:`port`; `closed` resolves with when each was closed, in ms from now. */
export function idleConnections(port: number, count: number): { sockets: Socket[]; closed: Promise<number[]> } {
  const started = Date.now();
  const sockets = Array.from({ length: count }, () => connect(port, '127.0.0.1'));
  const closed = Promise.all(
    sockets.map(
      (socket) =>
        new Promise<number>((resolve) => {
          socket.on('error', () => undefined);
          // Read whatever comes (a 408): a paused socket would never report its close.
          socket.resume();
          socket.on('close', () => resolve(Date.now() - started));
        }),
    ),
  );
  return { sockets, closed };
}
