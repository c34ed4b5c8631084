// Pipeline in order: Node reads and emits every request a client pipelined at once; here each
// one runs only once the answer before it is written, and not at all when that answer closed
// the connection.
//
// Why: an answer with `Connection: close` (a 413, a body that is not JSON) ends the
// connection, and the requests behind it must not run (RFC 9112 §9.6), or a book could be
// stored that no 201 ever reports (the client sends it again).
//
// Switched off: Node's default, every pipelined request runs as soon as it is read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerBefore } from './answers.js';
import type { RequestListener } from '../../seams.js';

/**
 * `run`, for each request once the answer before it on its connection is written (answers.ts
 * must track the server's answers).
 */
export function inPipelineOrder(run: RequestListener): RequestListener {
  return (request, response) => {
    const previous = answerBefore(request.socket, response);
    if (previous === undefined || previous.writableFinished) run(request, response);
    else runAfter(previous, request, response, run);
  };
}

/** Runs the request once `previous` is written, and only if the connection stays open. */
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
