// The Node HTTP layer: the protocol fixes that reach below Fastify's and Node's public
// behaviour, in one place, so that a Node or Fastify upgrade can be tried without them. None
// of them is for speed (answering in turns, which is, lives in src/fast/ and plugs into the
// server made here through `listenerLayer`). This file is the one way in; each part is
// described once, in its own file:
//
//   pipelineInOrder            pipeline.ts        a pipelined request runs once the answer before it is written, never after a close
//   answerHalfClosedClients    half-close.ts      a client that half-closes still gets its answers (httpAllowHalfOpen)
//   lingeringClose             lingering-close.ts an answer given while a body still arrives is not lost to a TCP reset
//   ignoreUnknownExpect        expect.ts          an unknown `Expect` is served as usual, not refused with a bare 417
//   finishAnswersOnClientError client-error.ts    a client error after complete requests closes once their answers are out
//
// (server.ts makes the server the first two need; answers.ts tracks each connection's answers
// for pipelineInOrder and finishAnswersOnClientError.)
//
// The switch: every part is on unless its option is false. The NODE_HTTP_PARTS setting
// (src/config.ts) sets them all: `on` (default), `off`, or a comma-separated list of the parts
// to keep on, by their setting names (`pipeline-in-order`, ...: settingName). A part switched
// off leaves Node's or Fastify's own behaviour; with every part off and no listener layer
// Fastify makes its own server and nothing here touches a listener, socket or response.
import type { App } from '../types.js';
import { trackAnswers } from './answers.js';
import { finishAnswersFirst, type ClientErrorHandler } from './client-error.js';
import { ignoreUnknownExpect } from './expect.js';
import { lingerAfterEarlyAnswers } from './lingering-close.js';
import type { ListenerLayer, RequestListener } from './listener.js';
import { createHttpServer, type ServerSettings } from './server.js';

export type { ServerSettings } from './server.js';

export const NODE_HTTP_PARTS = [
  'pipelineInOrder',
  'answerHalfClosedClients',
  'lingeringClose',
  'ignoreUnknownExpect',
  'finishAnswersOnClientError',
] as const;

export type NodeHttpPart = (typeof NODE_HTTP_PARTS)[number];

/** Which parts are on. */
export type NodeHttpParts = Record<NodeHttpPart, boolean>;

/** A part's name in the NODE_HTTP_PARTS setting: `pipelineInOrder` → `pipeline-in-order`. */
export function settingName(part: NodeHttpPart): string {
  return part.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

export interface NodeHttpLayer {
  /** Fastify's `serverFactory`; undefined when Fastify's own server will do (no part needs ours). */
  serverFactory: ((handler: RequestListener) => ReturnType<typeof createHttpServer>) | undefined;
  /** Fastify's `clientErrorHandler`: `fallback`, behind the parts that are on. */
  clientErrorHandler(fallback: ClientErrorHandler): ClientErrorHandler;
  /** Installs the other parts that are on on the app's server, once Fastify has made it. */
  install(app: App): void;
}

/**
 * The parts that are on (all, unless false in `parts`), for a server with `settings`;
 * `listenerLayer`, if given, stands between Node and Fastify's handler.
 */
export function nodeHttpLayer(
  settings: ServerSettings,
  parts: Partial<NodeHttpParts> = {},
  listenerLayer?: (handler: RequestListener) => ListenerLayer,
): NodeHttpLayer {
  const on = (part: NodeHttpPart) => parts[part] !== false;
  const ownServer = listenerLayer !== undefined || on('pipelineInOrder') || on('answerHalfClosedClients');
  return {
    serverFactory: ownServer
      ? (handler) =>
          createHttpServer(handler, settings, {
            listenerLayer,
            pipelineInOrder: on('pipelineInOrder'),
            answerHalfClosedClients: on('answerHalfClosedClients'),
          })
      : undefined,
    clientErrorHandler: (fallback) => (on('finishAnswersOnClientError') ? finishAnswersFirst(fallback) : fallback),
    install(app) {
      if (on('finishAnswersOnClientError')) trackAnswers(app.server);
      if (on('ignoreUnknownExpect')) ignoreUnknownExpect(app.server);
      if (on('lingeringClose')) {
        const lingering = lingerAfterEarlyAnswers(app.server);
        app.addHook('preClose', (done) => {
          lingering.serverClosing();
          done();
        });
      }
    },
  };
}
