// What stands between Node's HTTP server and Fastify's handler: the handler's shape, and what
// a layer in front of it (the speed path answer-in-turns, src/seams.ts) gives the server.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** A layer in front of the handler: its 'request' listener, and a 'connection' listener if it wants one. */
export interface ListenerLayer {
  /** The 'request' listener, standing in for the handler. */
  listener: RequestListener;
  /** Told of every accepted connection. */
  connectionAccepted?(): void;
}
