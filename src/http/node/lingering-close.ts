// Lingering close: an answer given while the client is still sending its body (413 for a body
// over the limit, or any answer sent before the body was read: 401 on POST /book, 429 on
// POST /token, 401/404 on an undecodable /book/ URL, ...) ends the connection without losing
// that answer to a TCP reset.
//
// What happens without it: Fastify answers a body over the limit (by Content-Length at once,
// chunked once past the limit) with `Connection: close`, and Node's HTTP server then ends the
// connection with socket.destroySoon(): FIN after the response, then close() at once. Bytes of
// the body still unread in the kernel, or still arriving, make the kernel answer with RST, and
// a client still sending loses the answer it has not read yet (EPIPE / ECONNRESET instead of
// the 413). An early answer to a big body without `Connection: close` (401, 429) keeps the
// connection and reads the whole body first (Node's req._dump()), and Node's own client, which
// keeps writing, can stall mid-body until REQUEST_TIMEOUT.
//
// So, as Go's net/http and nginx do: an answer given while a large body (chunked, or declared
// over SMALL_BODY_BYTES) is still arriving goes out with `Connection: close`; our side is
// half-closed after it; what the client still sends is read and discarded (never parsed as a
// further request); and the socket is destroyed once the client has closed its side, or after
// LINGER_MS, or after LINGER_MAX_BYTES more bytes, whichever comes first (LINGER_WHILE_CLOSING_MS
// once the server is closing). A small body still arriving is left to Node: it reads the rest
// and keeps the connection, as before. Requests without a body, or whose body was read, are
// untouched.
//
// Switched off: Node's default, described above.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a socket may linger after its answer. */
export const LINGER_MS = 5_000;
/** How much a client may still send while its socket lingers. */
export const LINGER_MAX_BYTES = 16 * 1024 * 1024;
/** Once the server is closing, a lingering socket is kept at most this much longer. */
const LINGER_WHILE_CLOSING_MS = 1_000;
/** Up to this declared size, the rest of a body is read and the connection kept (Node's way). */
const SMALL_BODY_BYTES = 64 * 1024;

interface Lingering {
  /** Destroy the socket within `ms` at the latest. */
  shorten(ms: number): void;
}

/**
 * Watches the answers `server` gives to requests that announce a body (Node level, so that
 * answers given outside Fastify's hooks, such as frameworkErrors, are covered too).
 * `serverClosing()` cuts lingering short: lingering sockets already have their answer, they
 * must not hold up a graceful shutdown.
 */
export function lingerAfterEarlyAnswers(server: Server): { serverClosing(): void } {
  const lingering = new Set<Lingering>();
  let closing = false;

  // Before the server's other 'request' listeners: Fastify's may answer synchronously (an
  // onRequest hook's 401).
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (announcesBody(request)) watchAnswer(request, response);
  });

  /** When the answer starts while the body is still arriving, close after it, lingering. */
  function watchAnswer(request: IncomingMessage, response: ServerResponse) {
    const writeHead = response.writeHead;
    response.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      response.writeHead = writeHead;
      if (bodyStillArriving(request)) {
        if (!isSmall(request)) response.setHeader('connection', 'close');
        const socket = request.socket;
        // Node's HTTP server calls destroySoon() once an answer that closes the connection has
        // been written (ours, or a `Connection: close` set by anyone else).
        socket.destroySoon = function () {
          delete (socket as Partial<Socket>).destroySoon;
          if (bodyStillArriving(request)) linger(socket);
          else socket.destroySoon();
        };
      }
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
  }

  function linger(socket: Socket) {
    if (socket.destroyed) return;
    const destroy = () => socket.destroy();
    let endsAt = Date.now() + (closing ? LINGER_WHILE_CLOSING_MS : LINGER_MS);
    let timer = setTimeout(destroy, endsAt - Date.now()).unref();
    const entry: Lingering = {
      shorten(ms) {
        if (Date.now() + ms >= endsAt) return;
        endsAt = Date.now() + ms;
        clearTimeout(timer);
        timer = setTimeout(destroy, ms).unref();
      },
    };
    lingering.add(entry);
    socket.once('close', () => {
      clearTimeout(timer);
      lingering.delete(entry);
    });

    socket.end(); // FIN after the answer
    // The client has closed its side: nothing more will arrive; close once our side is flushed.
    const clientDone = () => (socket.writableFinished ? destroy() : socket.once('finish', destroy));
    if (socket.readableEnded) clientDone();
    else socket.once('end', clientDone);
    // From now on the bytes are the rest of a refused body: count and drop them. Adding a
    // 'data' listener also makes Node's HTTP parser stop reading the socket directly; removing
    // its listener means nothing more is parsed (no request is served after this answer).
    let received = 0;
    const discard = (chunk: Buffer) => {
      received += chunk.length;
      if (received > LINGER_MAX_BYTES) destroy();
    };
    socket.on('data', discard);
    for (const listener of socket.listeners('data')) {
      if (listener !== discard) socket.removeListener('data', listener as (...args: unknown[]) => void);
    }
    socket.resume();
    keepReading(socket);
  }

  return {
    serverClosing() {
      closing = true;
      for (const entry of lingering) entry.shorten(LINGER_WHILE_CLOSING_MS);
    },
  };
}

function announcesBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The request announced a body that has not fully arrived. */
function bodyStillArriving(request: IncomingMessage): boolean {
  return !request.complete && announcesBody(request);
}

function isSmall(request: IncomingMessage): boolean {
  const declared = Number(request.headers['content-length']);
  return request.headers['transfer-encoding'] === undefined && declared <= SMALL_BODY_BYTES;
}

/**
 * While Node's HTTP parser read the socket itself, it may have stopped the socket's handle
 * (backpressure from a body nobody read) behind the stream's back: the stream then believes a
 * read is pending, and resume() does not restart it. Restart it as Node's HTTP server does.
 */
function keepReading(socket: Socket) {
  const handle = (socket as Socket & { _handle?: { reading?: boolean; readStart?: () => number } | null })._handle;
  if (handle && handle.reading === false && typeof handle.readStart === 'function') {
    handle.reading = true;
    handle.readStart();
  }
}
