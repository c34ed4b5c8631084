// The HTTP server under Fastify (its `serverFactory`): Node's http.Server with Fastify's
// settings, and the requests that arrive in one turn of the event loop answered together.
//
// Why together. Node emits 'request' from inside each socket's read callback, so by default a
// request is routed, answered and written (a writev through the kernel's whole TCP path) before
// the next socket is even read: read, JavaScript, kernel send, read, JavaScript, kernel send...
// Queued instead and answered in the 'check' phase of the same turn (setImmediate), the reads
// of a turn run back to back, then the handlers, then, as their promises resolve, the writes:
// each kind of work stays hot in the CPU's caches. Measured on one pinned core under 64
// connections: a bare node:http server 17,500 → 31,500 req/s, the service's GET /book/:id on
// SQLite 5,900 → 11,500 req/s (docs/benchmarks-changes.md).
//
// Why a bounded batch. libuv accepts one new connection per turn of the loop. When every turn
// answers all 64 busy connections first, a burst of new connections (a load balancer opening
// its pool, clients reconnecting) is accepted one per ~8 ms: the 64th waited 0.3–0.45 s for
// its first answer. So a turn answers at most REQUESTS_PER_TURN requests, and only
// REQUESTS_PER_TURN_WHILE_ACCEPTING while connections are arriving (one was accepted in this
// turn): the loop then turns, and accepts, every few requests until the burst is over. The
// requests left over are answered in the next turns, first come, first served.
//
// Half-closed clients. A client may send its request and then shut down its sending side (TCP
// FIN: HTTP/1.0 clients, `nc -N`, some proxies). By default Node's server answers the FIN by
// ending the socket (Node 22+ also aborts the requests in flight): an answer that is not
// written by then is lost, though the request may well have run (a book stored, no 201). With
// answers given a turn later (above), and after store queries, that is most answers. So the
// server is told to keep answering: see answerHalfClosedClients below.
//
// Pipelined requests. Node reads and emits every request a client pipelined at once; here each
// one runs only once the answer before it is written, and not at all when that answer closed
// the connection (runAfter below). And on a client error after complete requests (garbage, a
// FIN in the middle of the next request), the answers owed to them go out before the close
// (lastAnswerOwed, used by src/http/errors.ts).
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Requests answered per turn of the event loop before it turns again (see above). */
export const REQUESTS_PER_TURN = 32;
/** The same while new connections are being accepted, so that the loop turns (and accepts) often. */
export const REQUESTS_PER_TURN_WHILE_ACCEPTING = 4;

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** The subset of Fastify's options its own HTTP/1 server is made with (fastify/lib/server.js). */
export interface HttpServerOptions {
  http?: http.ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
}

export interface HalfCloseOptions {
  /**
   * Answer every request a client sent before half-closing its connection, then close it
   * (default). False restores Node's default: the FIN ends our side too, answers still to
   * come are lost.
   */
  answerHalfClosedClients?: boolean;
}

/** Fastify's `serverFactory`: the server Fastify would make, with `handler` run in batches. */
export function createHttpServer(
  handler: RequestListener,
  options: HttpServerOptions,
  { answerHalfClosedClients = true }: HalfCloseOptions = {},
): Server {
  const turns = answerInTurns(handler);
  const server = http.createServer(options.http ?? {}, (request, response) => {
    const previous = noteAnswer(request.socket, response);
    if (previous === undefined || previous.writableFinished) turns.listener(request, response);
    else runAfter(previous, request, response, turns.listener);
  });
  server.on('connection', turns.connectionAccepted);
  server.keepAliveTimeout = options.keepAliveTimeout;
  server.requestTimeout = options.requestTimeout;
  server.setTimeout(options.connectionTimeout);
  if (answerHalfClosedClients) answerAfterHalfClose(server);
  return server;
}

/**
 * The one place this module reaches below Node's public API: `httpAllowHalfOpen`, an
 * undocumented property of http.Server (since Node 0.x; the same in Node 20, 22 and 24:
 * lib/_http_server.js, socketOnEnd). The sockets are already half-open capable (http.Server
 * is a net.Server with allowHalfOpen: true); this flag decides what the HTTP layer does on the
 * client's FIN:
 *  - false (Node's default): end our side at once (Node 22+ also aborts the requests in
 *    flight). Answers not yet written are lost.
 *  - true: mark the last pending response as the connection's last (`_last`); once it is
 *    written Node calls socket.destroySoon() (FIN after the answers, then close: the
 *    lingering-close plugin's patched destroySoon applies as for any closing answer), and
 *    answers queued behind it (pipelined requests) go out first. With nothing pending (an idle
 *    keep-alive connection) Node ends the socket at once, so none is left half-open.
 * A FIN in the middle of a request (headers or body cut off) is unchanged: Node's parser
 * reports it as a client error first (src/http/errors.ts, handleClientError).
 * If a Node version drops the property, setting it does nothing and the default comes back.
 */
function answerAfterHalfClose(server: Server) {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}

/**
 * The last two answers started on each connection. Requests on a connection are answered in
 * order, and only the last one read can still be arriving (its body), so these tell which
 * answer is the last one owed to a request that arrived whole.
 */
const latestAnswers = new WeakMap<Socket, { previous: ServerResponse | undefined; last: ServerResponse }>();

/** Notes the answer just started on `socket`; the one started before it, if any. */
function noteAnswer(socket: Socket, response: ServerResponse): ServerResponse | undefined {
  const latest = latestAnswers.get(socket);
  if (latest === undefined) {
    latestAnswers.set(socket, { previous: undefined, last: response });
    return undefined;
  }
  latest.previous = latest.last;
  latest.last = response;
  return latest.previous;
}

/**
 * A request pipelined behind one whose answer is not written yet runs once that answer is,
 * and only if the connection stays open: an answer with `Connection: close` (a 413, a body
 * that is not JSON) ends the connection, and the requests behind it must not run (RFC 9112
 * §9.6), or a book could be stored that no 201 ever reports (the client sends it again).
 * Node itself reads and emits every pipelined request at once.
 */
function runAfter(previous: ServerResponse, request: IncomingMessage, response: ServerResponse, run: RequestListener) {
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    // Node has ended or destroyed the socket after an answer that closes the connection.
    if (previous.writableFinished && request.socket.writable && !request.socket.destroyed) run(request, response);
  };
  previous.once('finish', settle);
  previous.once('close', settle);
}

/**
 * The last answer on `socket` not yet written to a request that arrived whole (pipelined
 * requests included): before closing a connection on a client error (garbage after complete
 * requests, a FIN in the middle of the next one), every such answer goes out first.
 */
export function lastAnswerOwed(socket: Socket): ServerResponse | undefined {
  const latest = latestAnswers.get(socket);
  for (const response of [latest?.last, latest?.previous]) {
    if (response !== undefined && !response.writableFinished && !response.destroyed && response.req.complete) return response;
  }
  return undefined;
}

export interface BatchSizes {
  perTurn: number;
  perTurnWhileAccepting: number;
}

/**
 * A 'request' listener that queues each request and runs `handler` on the queue in the same
 * turn's check phase, first come first served, at most `perTurn` per turn, or
 * `perTurnWhileAccepting` in a turn that accepted a connection (told by `connectionAccepted`).
 */
export function answerInTurns(
  handler: RequestListener,
  sizes: BatchSizes = { perTurn: REQUESTS_PER_TURN, perTurnWhileAccepting: REQUESTS_PER_TURN_WHILE_ACCEPTING },
) {
  // Request and response alternate in one flat array, oldest first.
  const waiting: (IncomingMessage | ServerResponse)[] = [];
  let scheduled = false;
  let accepted = false;

  function answerSome() {
    const size = accepted ? sizes.perTurnWhileAccepting : sizes.perTurn;
    accepted = false;
    const batch = waiting.splice(0, 2 * size);
    let index = 0;
    try {
      while (index < batch.length) {
        const request = batch[index] as IncomingMessage;
        const response = batch[index + 1] as ServerResponse;
        index += 2;
        handler(request, response);
      }
    } finally {
      // Even if a handler threw (Fastify's does not), the others are still answered.
      if (index < batch.length) waiting.unshift(...batch.slice(index));
      if (waiting.length > 0) setImmediate(answerSome);
      else scheduled = false;
    }
  }

  return {
    listener(request: IncomingMessage, response: ServerResponse) {
      waiting.push(request, response);
      if (!scheduled) {
        scheduled = true;
        setImmediate(answerSome);
      }
    },
    /** A 'connection' listener: this turn accepted a connection, more may be waiting. */
    connectionAccepted() {
      accepted = true;
    },
  };
}
