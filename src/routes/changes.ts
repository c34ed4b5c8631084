// GET /books/changes: the change feed as server-sent events (docs/api.md "GET /books/changes";
// the feed itself: src/changes/change-feed.ts). Protected by the token like every book route; a
// stream ends when its token expires (the client reconnects with a new one and its last cursor).
// The answer is written to the connection itself (reply.hijack): Fastify's serializer has nothing
// to do with a stream that lasts, and the stream's log line is written when it ends.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { ChangeSink } from '../changes/change-feed.js';
import { Messages, errorEnvelope } from '../http/envelope.js';
import { ChangeCursorExpiredResponse, ChangeCursorNotIssuedResponse, ChangeStream, ChangesQuery } from '../schemas/changes.js';
import type { Tracing } from '../tracing/tracing.js';
import { refTo, tokenAndStoreFailures } from '../schemas/shared.js';

/** How long a client waits before it reconnects (the SSE `retry:` field). */
const RECONNECT_MS = 1_000;

const changeRoutes: FastifyPluginAsyncTypebox<{ tracing: Tracing }> = async (app, { tracing }) => {
  const { changeFeed, requireToken } = app;

  app.get(
    '/books/changes',
    {
      onRequest: requireToken,
      schema: {
        tags: ['books'],
        security: [{ token: [] }],
        operationId: 'followChanges',
        summary: 'Follow every change of the books as server-sent events, from a cursor or from now on',
        querystring: ChangesQuery,
        response: {
          200: { description: 'The stream of changes', content: { 'text/event-stream': { schema: ChangeStream } } },
          400: refTo(ChangeCursorNotIssuedResponse),
          410: refTo(ChangeCursorExpiredResponse),
          ...tokenAndStoreFailures,
        },
      },
    },
    async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const after = request.query.after;
      const cursor = typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : after;
      const start = await changeFeed.start(cursor);
      if (start.kind === 'not-issued') return reply.code(400).send(errorEnvelope(400, Messages.changeCursorNotIssued));
      if (start.kind === 'expired') return reply.code(410).send(errorEnvelope(410, Messages.changeCursorExpired));
      // CHANGES_MAX_STREAMS open already: another instance, or this one in a moment, may have room.
      if (start.kind === 'full') return reply.code(503).header('retry-after', '1').send(errorEnvelope(503, Messages.serviceUnavailable));

      reply.hijack();
      const response = reply.raw;
      // What the hooks set (the security headers, CORS, X-Request-Id), then the stream's own.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no', // nginx: pass each event on at once
      });
      // Its trace holds the stream's start, not a span open for as long as the stream lasts.
      tracing.streamStarted(reply);
      if (request.method === 'HEAD') {
        response.end();
        return reply;
      }
      response.write(`retry: ${RECONNECT_MS}\n\n`);
      const sink: ChangeSink = {
        write: (bytes) => void response.write(bytes),
        buffered: () => response.writableLength,
        onceTaken: (taken) => void response.once('drain', taken),
        end: () => response.end(),
        cut: () => response.destroy(),
      };
      const following = changeFeed.follow(start.position, sink);
      const expiresInMs = tokenExpiryMs(request.headers.authorization) - Date.now();
      const expiry = setTimeout(() => {
        following.stop();
        response.end();
      }, Math.max(0, Math.min(expiresInMs, 2 ** 31 - 1)));
      expiry.unref();
      // A client that shuts down its side (FIN) has gone: with half-closed clients answered
      // (src/http/node/half-close.ts) Node would otherwise keep this answer, which never ends, open.
      const socket = request.raw.socket;
      const clientGone = () => {
        following.stop();
        response.end();
      };
      socket.once('end', clientGone);
      response.on('close', () => {
        clearTimeout(expiry);
        socket.off('end', clientGone);
        following.stop();
      });
      return reply;
    },
  );
};

/** The `exp` of the bearer token requireToken has verified, in milliseconds. */
function tokenExpiryMs(authorization: string | undefined): number {
  const payload = authorization?.split('.')[1] ?? '';
  const { exp } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp: number };
  return exp * 1000;
}

export default fp(changeRoutes, { name: 'change-routes', dependencies: ['change-feed', 'auth'] });
