// Answer in turns: the requests that arrive in one turn of the event loop are answered
// together, in bounded batches.
//
// Why together. Node emits 'request' from inside each socket's read callback, so by default a
// request is routed, answered and written (a writev through the kernel's whole TCP path) before
// the next socket is even read: read, JavaScript, kernel send, read, JavaScript, kernel send...
// Queued instead and answered in the 'check' phase of the same turn (setImmediate), the reads
// of a turn run back to back, then the handlers, then, as their promises resolve, the writes:
// each kind of work stays hot in the CPU's caches: close to half the CPU per request
// (measured: docs/benchmarks-changes.md).
//
// Why a bounded batch. libuv accepts one new connection per turn of the loop. When every turn
// answers all 64 busy connections first, a burst of new connections (a load balancer opening
// its pool, clients reconnecting) is accepted one per turn, each behind a full turn of
// answers: the last new connection waited long for its first answer (docs/benchmarks-changes.md,
// "The tail at 64 connections"). So a turn answers at most REQUESTS_PER_TURN requests, and only
// REQUESTS_PER_TURN_WHILE_ACCEPTING while connections are arriving (one was accepted in this
// turn): the loop then turns, and accepts, every few requests until the burst is over. The
// requests left over are answered in the next turns, first come, first served.
//
// Switched off (FAST_PATHS without answer-in-turns): Node's default, each request answered
// inside its socket's read callback. Plugged in through FastPaths.requestListener (src/seams.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ListenerLayer, RequestListener } from '../http/node/listener.js';

/** Requests answered per turn of the event loop before it turns again (see above). */
export const REQUESTS_PER_TURN = 32;
/** The same while new connections are being accepted, so that the loop turns (and accepts) often. */
export const REQUESTS_PER_TURN_WHILE_ACCEPTING = 4;

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
): Required<ListenerLayer> {
  // Request and response alternate in one flat array, oldest first.
  const waiting: (IncomingMessage | ServerResponse)[] = [];
  let scheduled = false;
  let accepted = false;
  let forgetting = false;

  /** The end of a turn that accepted a connection but has no request to answer: it is over. */
  function forgetAccepted() {
    forgetting = false;
    if (!scheduled) accepted = false;
  }

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
      // Counted only for this turn's batch: without one, forgotten at the turn's end.
      if (!scheduled && !forgetting) {
        forgetting = true;
        setImmediate(forgetAccepted);
      }
    },
  };
}
