// The HTTP server under Fastify (its `serverFactory`), made only when something must stand
// between Node and Fastify's handler: Node's http.Server with the settings Fastify would give
// its own (fastify/lib/server.js), and the server-level parts that are on.
import http from 'node:http';
import type { Server } from 'node:http';
import type { ListenerLayer, RequestListener } from '../../seams.js';
import { trackAnswers } from './answers.js';
import { answerHalfClosedClients } from './half-close.js';
import { inPipelineOrder } from './pipeline.js';

export type { RequestListener };

/** The settings Fastify makes its own HTTP/1 server with (its options of the same names). */
export interface ServerSettings {
  http?: http.ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
}

/** The parts made here, each on unless false (index.ts describes them), and a layer between Node and Fastify. */
export interface ServerParts {
  pipelineInOrder?: boolean;
  answerHalfClosedClients?: boolean;
  /** Stands in for Fastify's handler (a speed path: FastPaths.requestListener, src/seams.ts). */
  listenerLayer?: (handler: RequestListener) => ListenerLayer;
}

/** The server Fastify would make, with `handler` behind the parts that are on. */
export function createHttpServer(handler: RequestListener, settings: ServerSettings, parts: ServerParts = {}): Server {
  const layer = parts.listenerLayer?.(handler);
  const answer = layer?.listener ?? handler;
  const server = http.createServer(settings.http ?? {}, parts.pipelineInOrder === false ? answer : inPipelineOrder(answer));
  if (parts.pipelineInOrder !== false) trackAnswers(server);
  if (layer?.connectionAccepted !== undefined) server.on('connection', layer.connectionAccepted);
  server.keepAliveTimeout = settings.keepAliveTimeout;
  server.requestTimeout = settings.requestTimeout;
  server.setTimeout(settings.connectionTimeout);
  if (parts.answerHalfClosedClients !== false) answerHalfClosedClients(server);
  return server;
}
