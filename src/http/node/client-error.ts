// Finish answers on client error: on a client error after complete requests (garbage,
// pipelined or past a Content-Length; a FIN in the middle of the next request), the answers
// to the complete ones are still being produced. They all go out whole first (in order:
// waiting for the last is enough), then the connection is closed. A request still arriving
// (a slow upload that timed out) is not owed an answer: the fallback handler cuts it off.
//
// Switched off: the fallback handler (src/http/errors.ts, handleClientError) closes the
// connection at once; answers not written yet are lost.
import type { Socket } from 'node:net';
import { lastAnswerOwed } from './answers.js';

/** The shape of Fastify's `clientErrorHandler`. */
export type ClientErrorHandler = (error: Error & { code?: string }, socket: Socket) => void;

/**
 * `fallback`, unless answers are owed on the socket: then the connection is closed once they
 * are written (answers.ts must track them).
 */
export function finishAnswersFirst(fallback: ClientErrorHandler): ClientErrorHandler {
  return (error, socket) => {
    const owed = error.code === 'ECONNRESET' || socket.destroyed ? undefined : lastAnswerOwed(socket);
    if (owed === undefined) return fallback(error, socket);
    const close = () => socket.destroy();
    owed.once('finish', close);
    owed.once('close', close);
  };
}
