// The answer to a URL the router refuses: an undecodable percent-escape (`/book/%zz`, `/%zz`)
// or a path segment over the router's 100 characters (`/book/<200 digits>`).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { setAnswerHeaders } from './request-headers.js';
import { logFinishedRequest } from './request-log.js';
import { Messages, errorEnvelope } from '../../http/envelope.js';

/**
 * Fastify's `frameworkErrors` handler (app.ts). Under /book/ such a URL still names a
 * protected path: authenticate first, then 404 "Book not found". Elsewhere: 400 "Bad request".
 *
 * Fastify calls it outside the request lifecycle, so none of the app's hooks runs for these
 * requests; and they cannot be handed back to the lifecycle without changing what clients
 * see: routed again internally, they would need a route of their own (listed in the router,
 * callable as such) or a not-found handler (which CORS's catch-all `OPTIONS *` route would
 * take the OPTIONS requests from). So this function does itself what the app's hooks do for
 * every other request: the onRequest hook's headers (request-headers.ts), and once the answer
 * has gone out the onResponse hooks' log line (request-log.ts) and metrics sample (metrics.ts).
 */
export function answerRefusedUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const app = request.server;
  setAnswerHeaders(request, reply);
  reply.raw.once('finish', () => {
    logFinishedRequest(request, reply);
    app.metrics?.observe(request, reply);
  });
  if (request.url.startsWith('/book/')) {
    app.requireToken(request, reply, () => reply.code(404).send(errorEnvelope(404, Messages.bookNotFound)));
    return;
  }
  request.log.debug({ code: error.code }, 'undecodable URL');
  reply.code(400).send(errorEnvelope(400, Messages.badRequest));
}
