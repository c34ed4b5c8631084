// Finish answers on client error: on a client error after complete requests (garbage,
// pipelined or past a Content-Length; a FIN in the middle of the next request; a malformed or
// oversized next request on a keep-alive connection), the answers to the complete ones are
// still being produced, or already out. They all go out whole first (in order: waiting for the
// last is enough), then the error is answered (400, 431, 408: the bytes that caused it are a
// request of their own) and the connection closed. A request still arriving when the error
// comes (a slow upload that timed out, a broken chunked body) is not answered: the fallback
// handler cuts it off.
//
// Switched off: the fallback handler (src/http/errors.ts, handleClientError) answers only on a
// connection where nothing was written yet, as Node does, and closes at once; answers not
// written yet are lost, and a bad request after a first one is closed without an answer (a
// reverse proxy counts that as a failed instance).
import type { Socket } from 'node:net';
import { lastAnswerOwed, lastRequestArrived } from './answers.js';

/**
 * The shape of Fastify's `clientErrorHandler`, with a third argument for the fallback: true when
 * every request before the error was answered in full, so the error may be answered too.
 */
export type ClientErrorHandler = (error: Error & { code?: string }, socket: Socket, afterAnswers?: boolean) => void;

/**
 * `fallback`, told whether it may answer; when answers are owed on the socket, it runs once
 * they are written (answers.ts must track them).
 */
export function finishAnswersFirst(fallback: ClientErrorHandler): ClientErrorHandler {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return fallback(error, socket);
    // The bytes in error are a request of their own only if the one before them arrived whole.
    const ownRequest = lastRequestArrived(socket);
    const owed = lastAnswerOwed(socket);
    if (owed === undefined) return fallback(error, socket, ownRequest);
    const answer = () => (socket.destroyed ? undefined : fallback(error, socket, ownRequest));
    owed.once('finish', answer);
    owed.once('close', () => {
      if (!owed.writableFinished) socket.destroy();
    });
  };
}
