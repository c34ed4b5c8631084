// A TCP proxy in front of a database server: a second "host" for the same database, which a
// test can cut (every connection reset, the port closed, like a node that died) and restore
// on the same port. Failover tests use it where a real cluster is not needed.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from './free-port.js';

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
  /**
   * The first time a client sends bytes containing `text`, they are not passed on and every
   * connection is reset (the port stays open): a connection lost at a chosen moment.
   */
  cutOnceAt(text: string): void;
  /**
   * The first time a client sends bytes containing `text`, that connection stops passing what
   * its client sends for `ms`, then passes it all on (the server stays up): a statement held
   * up on its way (a stalled network, a cluster pausing), which the server still runs later.
   */
  stallOnceAt(text: string, ms: number): void;
  /**
   * The first time a client sends bytes containing `text`, they are passed on, and that
   * connection is reset as soon as the answer starts to come back: a request the server
   * carried out whose answer the client never got.
   */
  cutAnswerOnceAfter(text: string): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let frozen = false;
  let cutAt: Buffer | undefined;
  let stallAt: { text: Buffer; ms: number } | undefined;
  let cutAnswerAfter: Buffer | undefined;

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
        /** Set once this connection carried the request whose answer is to be cut. */
        let cutAnswer = false;
        upstream.on('data', () => {
          if (!cutAnswer) return;
          client.resetAndDestroy();
          upstream.resetAndDestroy();
        });
        upstream.pipe(client);
        /** While stalled: what the client sent, to pass on afterwards (the end too). */
        let held: (Buffer | 'end')[] | undefined;
        client.on('data', (chunk: Buffer) => {
          if (cutAnswerAfter !== undefined && chunk.includes(cutAnswerAfter)) {
            cutAnswerAfter = undefined;
            cutAnswer = true;
          }
          if (cutAt !== undefined && chunk.includes(cutAt)) {
            cutAt = undefined;
            for (const socket of sockets) socket.resetAndDestroy();
            return;
          }
          if (held === undefined && stallAt !== undefined && chunk.includes(stallAt.text)) {
            const stalled: (Buffer | 'end')[] = [];
            held = stalled;
            setTimeout(() => {
              held = undefined;
              for (const part of stalled) {
                if (part === 'end') upstream.end();
                else upstream.write(part);
              }
            }, stallAt.ms);
            stallAt = undefined;
          }
          if (held !== undefined) {
            held.push(chunk);
            return;
          }
          if (!upstream.write(chunk)) client.pause();
        });
        upstream.on('drain', () => client.resume());
        client.on('end', () => (held !== undefined ? held.push('end') : upstream.end()));
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
      socket.removeAllListeners('data');
      socket.pause();
    }
  };

  await listen();
  const cutOnceAt = (text: string) => {
    cutAt = Buffer.from(text);
  };

  const stallOnceAt = (text: string, ms: number) => {
    stallAt = { text: Buffer.from(text), ms };
  };

  const cutAnswerOnceAfter = (text: string) => {
    cutAnswerAfter = Buffer.from(text);
  };

  return { port, cut, restore: listen, freeze, cutOnceAt, stallOnceAt, cutAnswerOnceAfter, close: cut };
}
