// The app's one onRequest hook, first in line for every request: the headers every answer
// carries, an HTTP/1.1 request without Host refused, and the request's Content-Type made JSON
// for the body parser (json-body.ts).
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { Messages, errorEnvelope } from '../../http/envelope.js';
import { SECURITY_HEADERS } from '../../http/security-headers.js';

const SECURITY_HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

/** The request id (Fastify's genReqId, app.ts) and the security policy. */
export function setAnswerHeaders(request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  for (const [name, value] of SECURITY_HEADER_ENTRIES) reply.header(name, value);
}

function requestHeaders(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
  setAnswerHeaders(request, reply);
  // HTTP/1.1 requires Host (RFC 9112 §3.2: answer 400). Node would refuse it with a bare 400 of
  // its own; told not to (app.ts, requireHostHeader), the service answers it with the envelope.
  if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
    reply.code(400).header('connection', 'close').send(errorEnvelope(400, Messages.badRequest));
    return;
  }
  // Bodies are JSON whatever the Content-Type (json-body.ts); an unparsable one (`;;;`, empty)
  // would make Fastify answer 415 before any parser runs, even the catch-all '*' of the plain
  // parser. Done here, not in a hook of its own, so that a request passes one onRequest hook of the app's.
  if (request.headers['content-type'] !== undefined) request.headers['content-type'] = 'application/json';
  done();
}

export default fp(
  async function requestHeadersPlugin(app) {
    app.addHook('onRequest', requestHeaders);
  },
  { name: 'request-headers' },
);
