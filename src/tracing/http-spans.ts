// The server span of each request: one onRequest hook, registered before every other plugin,
// that continues the caller's trace (W3C `traceparent`, OTEL_PROPAGATORS), names the span
// after the route template (`GET /book/:id`; `GET` alone when no route matched), runs the rest
// of the request in its context (so the store's spans find it; Fastify carries the context over
// a body that arrives later), and ends it when the response is done or cut off. The request's
// log line carries its `trace_id` and `span_id`. A request whose trace is not sampled costs the
// sampler's decision and nothing more.
//
// Why not @fastify/otel: it records `url.path` as the raw URL (query string included), which
// cannot be taken back off a span; it ends the span when the response starts (before a
// streamed GET /books is sent); and it brings @opentelemetry/instrumentation and patches every
// hook the app adds to give each one a span of its own. The attributes below are the HTTP
// semantic conventions' for a server span, minus `url.path`: the route template says which
// operation it was, and the raw path (ids, whatever a client typed) stays in the log line.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type ContextManager, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';

/** Polled by machines every few seconds: traced, they would drown the requests that matter. */
const UNTRACED_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);
/** The methods the conventions name; any other is `_OTHER`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

export function httpSpans(tracer: Tracer, contexts: ContextManager, propagator: TextMapPropagator): FastifyPluginCallback {
  function startServerSpan(request: FastifyRequest, reply: FastifyReply, next: () => void) {
    const route = request.routeOptions.url;
    if (route !== undefined && UNTRACED_ROUTES.has(route)) {
      next();
      return;
    }
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, HEADERS);
    const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
    const span = tracer.startSpan(route === undefined ? method : `${method} ${route}`, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method } }, parent);
    // Not sampled: nothing is recorded. The request runs outside any trace, never in one it
    // could inherit from the callback that started it (a pipelined request may start from the
    // answer before it): usually it is outside one already, which costs nothing to keep.
    if (!span.isRecording()) {
      if (contexts.active() === ROOT_CONTEXT) next();
      else contexts.with(ROOT_CONTEXT, next);
      return;
    }
    const attributes: Attributes = {
      [ATTR_URL_SCHEME]: request.protocol,
      [ATTR_SERVER_ADDRESS]: request.hostname,
      [ATTR_CLIENT_ADDRESS]: request.ip,
      [ATTR_NETWORK_PROTOCOL_VERSION]: request.raw.httpVersion,
    };
    if (request.port !== null) attributes[ATTR_SERVER_PORT] = request.port;
    if (route !== undefined) attributes[ATTR_HTTP_ROUTE] = route;
    if (method === '_OTHER') attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = request.method;
    span.setAttributes(attributes);
    const { traceId, spanId } = span.spanContext();
    // Fastify's logger for this request (and its reply) is a pino child of its own: its bindings take the ids.
    (request.log as Logger).setBindings({ trace_id: traceId, span_id: spanId });
    let ended = false;
    const end = (streaming: boolean) => {
      if (ended) return;
      ended = true;
      endServerSpan(span, reply, streaming);
    };
    reply.raw.once('close', () => end(false));
    streamStarts.set(reply.raw, () => end(true));
    contexts.with(trace.setSpan(parent, span), next);
  }

  return fp(
    (app, _options, done) => {
      app.addHook('onRequest', startServerSpan);
      done();
    },
    { name: 'http-spans' },
  );
}

/** What ends the server span of a response that stays open (a change stream), by its response. */
const streamStarts = new WeakMap<FastifyReply['raw'], () => void>();

/**
 * A response that stays open (GET /books/changes) has started: its server span ends now, with
 * its status, rather than being held open for the stream's lifetime.
 */
export function endSpanAtStreamStart(reply: FastifyReply): void {
  streamStarts.get(reply.raw)?.();
}

/** When the response is done, or the connection cut before it was, or (a stream) it started. */
function endServerSpan(span: Span, reply: FastifyReply, streaming = false) {
  const status = reply.statusCode;
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else if (!streaming && !reply.raw.writableFinished) {
    span.setAttribute(ATTR_ERROR_TYPE, 'response_cut_off');
  }
  span.end();
}

/** Request headers as Node gives them: lower-case names, a list for a repeated header. */
const HEADERS = {
  keys: (headers: FastifyRequest['headers']) => Object.keys(headers),
  get: (headers: FastifyRequest['headers'], key: string) => headers[key],
};
