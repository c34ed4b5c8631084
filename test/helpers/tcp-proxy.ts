// A TCP proxy in front of a database server: a second "host" for the same database, which a
// test can cut (every connection reset, the port closed, like a node that died) and restore
// on the same port. Failover tests use it where a real cluster is not needed.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from './process.js';

export interface TcpProxy {
  port: number;
  /** Resets every open connection and stops listening: connecting is refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /**
   * Stops passing bytes, both ways, on open and new connections, which stay open: a host that
   * hangs (frozen, or a network that drops packets).
   */
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let frozen = false;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const listening = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        if (frozen) return; // accepted, and never answered
        client.pipe(upstream).pipe(client);
      });
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        server = listening;
        resolve();
      });
    });

  const cut = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.resetAndDestroy();
    sockets.clear();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  const freeze = () => {
    frozen = true;
    for (const socket of sockets) {
      socket.unpipe();
      socket.pause();
    }
  };

  await listen();
  return { port, cut, restore: listen, freeze, close: cut };
}
