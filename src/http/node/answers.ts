// The answers started on each connection, for the two parts that must know which answers a
// connection still owes: pipeline-in-order (pipeline.ts) and finish-answers-on-client-error
// (client-error.ts). Not a part of its own: it is installed with either of them.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The last two answers started on each connection. Requests on a connection are answered in
 * order, and only the last one read can still be arriving (its body), so these tell which
 * answer is the last one owed to a request that arrived whole.
 */
const latestAnswers = new WeakMap<Socket, { previous: ServerResponse | undefined; last: ServerResponse }>();
const tracked = new WeakSet<Server>();

/** Notes every answer `server` starts, before any other 'request' listener runs (once per server). */
export function trackAnswers(server: Server) {
  if (tracked.has(server)) return;
  tracked.add(server);
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => noteAnswer(request.socket, response));
}

function noteAnswer(socket: Socket, response: ServerResponse) {
  const latest = latestAnswers.get(socket);
  if (latest === undefined) {
    latestAnswers.set(socket, { previous: undefined, last: response });
    return;
  }
  latest.previous = latest.last;
  latest.last = response;
}

/** The answer started on `socket` just before `response`, if any. */
export function answerBefore(socket: Socket, response: ServerResponse): ServerResponse | undefined {
  const latest = latestAnswers.get(socket);
  return latest?.last === response ? latest.previous : undefined;
}

/**
 * The last answer on `socket` not yet written to a request that arrived whole (pipelined
 * requests included), if any.
 */
export function lastAnswerOwed(socket: Socket): ServerResponse | undefined {
  const latest = latestAnswers.get(socket);
  for (const response of [latest?.last, latest?.previous]) {
    if (response !== undefined && !response.writableFinished && !response.destroyed && response.req.complete) return response;
  }
  return undefined;
}

/**
 * Whether the last request read on `socket` arrived whole (true too when none was read): bytes
 * after it are the start of another request.
 */
export function lastRequestArrived(socket: Socket): boolean {
  return latestAnswers.get(socket)?.last.req.complete ?? true;
}
