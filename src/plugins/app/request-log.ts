// One log line per finished request (an onResponse hook); Fastify's own request logging is
// off (app.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { bodyProblemOf } from '../../http/errors.js';

/** The request's log line. */
export function logFinishedRequest(request: FastifyRequest, reply: FastifyReply) {
  request.log.info(
    {
      method: request.method,
      route: request.routeOptions.url,
      url: request.url.length > 256 ? `${request.url.slice(0, 256)}…` : request.url,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      invalid: bodyProblemOf(request), // a refused body: which field and why (pino omits undefined)
    },
    'request completed',
  );
}

export default fp(
  async function requestLog(app) {
    app.addHook('onResponse', (request, reply, next) => {
      logFinishedRequest(request, reply);
      next();
    });
  },
  { name: 'request-log' },
);
