// buildApp(config, store): the Fastify application with its parsers, hooks, routes and
// the mapping of every outcome onto the envelope. It does not listen; main.ts does.
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import type { Logger } from 'pino';
import { createAuthGuard, authenticationFailure } from './auth/guard.js';
import { createLoginLimiter, type LoginLimiter } from './auth/login-limiter.js';
import { registerTokenRoute } from './auth/routes.js';
import { createCredentialsChecker, createTokenService } from './auth/tokens.js';
import { registerBookRoutes } from './books/routes.js';
import type { Config } from './config.js';
import { Messages, errorEnvelope } from './http/envelope.js';
import { SECURITY_HEADERS, bodyProblemOf, handleClientError, handleError } from './http/errors.js';
import { registerLingeringClose } from './http/lingering-close.js';
import { recordRoutes, registerMethodNotAllowed } from './http/method-not-allowed.js';
import type { App, ResponseObserver } from './http/types.js';
import { registerHealthRoutes } from './http/health.js';
import { registerMetrics } from './http/metrics.js';
import { registerOpenApi } from './http/openapi.js';
import type { BookStore } from './store/book-store.js';
import { VERSION } from './version.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const MAX_HEADER_BYTES = 128 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export interface AppDependencies {
  config: Readonly<Config>;
  store: BookStore;
  logger: Logger;
  /** The failed-login limiter; one for this process unless given (cluster workers share one). */
  loginLimiter?: LoginLimiter;
}

export async function buildApp({ config, store, logger, loginLimiter }: AppDependencies): Promise<App> {
  const tokens = createTokenService(config.auth.secret);

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }), // one line per request, written below
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: config.http.requestTimeoutMs, // whole request, so a slow upload cannot hold a socket
    connectionTimeout: 60_000, // socket inactivity
    keepAliveTimeout: 65_000, // longer than common load balancer idle timeouts
    http: {
      // Node's 16 KiB would cut off an oversized token with a bare connection reset; at 128 KiB
      // it reaches verification and gets its 401 envelope. Past it: 431 or a clean close.
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: Math.min(20_000, config.http.requestTimeoutMs),
      connectionsCheckingInterval: 1_000, // how often Node enforces the two timeouts above
    },
    // The failed-login limit counts per client, not per load balancer. A number is a hop count.
    trustProxy:
      typeof config.http.trustProxy === 'number'
        ? (_address: string, hop: number) => hop < (config.http.trustProxy as number)
        : config.http.trustProxy,
    return503OnClosing: false, // requests that arrive while draining are still served
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Bodies must match their schema exactly: `"1999"` is not a year.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, useDefaults: false } },
    clientErrorHandler: handleClientError,
    frameworkErrors: (error, request, reply) => handleUndecodableUrl(error, request, reply),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // An `Expect` other than 100-continue: Node would answer a bare 417 before any hook runs.
  // RFC 9110 lets a server ignore it, so the request is served as usual (auth first, envelope).
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));

  // JSON whatever the Content-Type (clients that forget the header still work), through the
  // secure parser that refuses `__proto__` and `constructor.prototype` keys.
  // Routes that take no body (GET, DELETE) ignore whatever a client sends along.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (request.routeOptions.config.invalidBodyMessage === undefined) return done(null, undefined);
    return parseJson(request, body as string, done);
  });

  app.addHook('onRequest', (request, reply, done) => {
    setResponseHeaders(request, reply);
    // Bodies are JSON whatever the Content-Type; an unparsable one (`;;;`, empty) would make
    // Fastify answer 415 before any parser runs.
    if (request.headers['content-type'] !== undefined) request.headers['content-type'] = 'application/json';
    done();
  });
  const observers: ResponseObserver[] = [logFinishedRequest];
  app.addHook('onResponse', (request, reply, done) => {
    for (const observe of observers) observe(request, reply);
    done();
  });

  registerLingeringClose(app); // answers that leave a body unread close without a reset
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorEnvelope(404, Messages.routeNotFound)));

  const routeTable = recordRoutes(app);
  if (config.http.corsOrigins) {
    await app.register(cors, {
      origin: config.http.corsOrigins === '*' ? '*' : config.http.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id', 'Retry-After'],
      maxAge: 600,
      strictPreflight: false, // a bare OPTIONS gets the same 204, not a text/plain 400
    });
  }
  await registerOpenApi(app, VERSION);
  if (config.http.metrics) observers.push(registerMetrics(app, store));
  registerHealthRoutes(app, store);
  registerTokenRoute(app, {
    tokens,
    credentials: createCredentialsChecker(config.auth.username, config.auth.password),
    limiter: loginLimiter ?? createLoginLimiter(config.auth.loginRateLimit),
  });
  registerBookRoutes(app, { store, requireToken: createAuthGuard(tokens) });
  await app.after();
  registerMethodNotAllowed(app, routeTable);

  /**
   * A URL whose `:id` cannot be decoded (`/book/%zz`) or is absurdly long never reaches a
   * route. Under /book/ it is still a protected path: authenticate first, then 404.
   */
  function handleUndecodableUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    // Fastify skips the hooks for these: set the headers and observe the answer here.
    setResponseHeaders(request, reply);
    reply.raw.once('finish', () => {
      for (const observe of observers) observe(request, reply);
    });
    if (request.url.startsWith('/book/')) {
      const failure = authenticationFailure(request.headers.authorization, tokens);
      if (failure) return reply.code(401).send(errorEnvelope(401, failure));
      return reply.code(404).send(errorEnvelope(404, Messages.bookNotFound));
    }
    request.log.debug({ code: error.code }, 'undecodable URL');
    return reply.code(400).send(errorEnvelope(400, Messages.badRequest));
  }

  return app;
}

const SECURITY_HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

/** Headers on every answer: the request id, and a policy that suits a JSON API. */
function setResponseHeaders(request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  for (const [name, value] of SECURITY_HEADER_ENTRIES) reply.header(name, value);
}

/** One log line per finished request. */
function logFinishedRequest(request: FastifyRequest, reply: FastifyReply) {
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
