// buildApp(): the Fastify application. The server's options and the Node HTTP layer under
// them (src/http/node), the answers given outside the routes, then the plugins in tiers: the
// app's own (src/plugins/app), third-party ones with our options (src/plugins/external), the
// routes (src/routes), and the 405 answers once every route is known. It does not listen;
// src/server.ts does.
//
// Each of these plugins is fastify-plugin'd, so they all share the root context, as if written
// here: a hook applies to every route once, and every request is of one Request class.
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { LoginLimiter } from './auth/login-limiter.js';
import type { Config } from './config.js';
import { Messages, errorEnvelope } from './http/envelope.js';
import { handleClientError, handleError } from './http/errors.js';
import { nodeHttpLayer, type ServerSettings } from './http/node/index.js';
import { answerRefusedUrl } from './plugins/app/refused-url.js';
import type { App } from './http/types.js';
import auth from './plugins/app/auth.js';
import changeFeed from './plugins/app/change-feed.js';
import jsonBody from './plugins/app/json-body.js';
import { methodNotAllowed, routeTable } from './plugins/app/method-not-allowed.js';
import metrics from './plugins/app/metrics.js';
import requestHeaders from './plugins/app/request-headers.js';
import requestLog from './plugins/app/request-log.js';
import storePlugin from './plugins/app/store.js';
import { SHARED_SCHEMAS } from './plugins/external/api-reference.js';
import cors from './plugins/external/cors.js';
import bookRoutes from './routes/books.js';
import changeRoutes from './routes/changes.js';
import healthRoutes from './routes/health.js';
import metricsRoute from './routes/metrics.js';
import openapiRoute from './routes/openapi.js';
import tokenRoute from './routes/token.js';
import webUi from './routes/web-ui.js';
import { NO_FAST_PATHS, type FastPaths } from './seams.js';
import type { BookStore } from './store/book-store.js';
import { NO_TRACING, type Tracing } from './tracing/tracing.js';

const BODY_LIMIT_BYTES = 1024 * 1024;
const MAX_HEADER_BYTES = 128 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

interface AppDependencies {
  config: Readonly<Config>;
  store: BookStore;
  logger: Logger;
  /** The failed-login limiter; one for this process unless given (cluster workers share one). */
  loginLimiter?: LoginLimiter;
  /** OpenTelemetry tracing when the OTEL_* variables turn it on (src/tracing/). */
  tracing?: Tracing;
  /** The speed paths that are on (src/seams.ts; their layers are in src/fast/). */
  fastPaths?: FastPaths;
}

export async function buildApp({
  config,
  store,
  logger,
  loginLimiter,
  tracing = NO_TRACING,
  fastPaths = NO_FAST_PATHS,
}: AppDependencies): Promise<App> {
  const serverSettings: ServerSettings = {
    requestTimeout: config.http.requestTimeoutMs, // whole request, so a slow upload cannot hold a socket
    connectionTimeout: 60_000, // socket inactivity
    keepAliveTimeout: 65_000, // longer than common load balancer idle timeouts
    http: {
      // Node's 16 KiB would cut off an oversized token with a bare connection reset; at 128 KiB
      // it reaches verification and gets its 401 envelope. Past it: 431 or a clean close.
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: Math.min(20_000, config.http.requestTimeoutMs),
      connectionsCheckingInterval: 1_000, // how often Node enforces the two timeouts above
      requireHostHeader: false, // a request without Host gets the 400 envelope (plugins/app/request-headers.ts), not Node's bare 400
    },
  };
  // What reaches below Fastify's and Node's public behaviour (src/http/node), as NODE_HTTP_PARTS
  // sets it, with the speed path that answers in turns between Node and Fastify if it is on.
  const nodeHttp = nodeHttpLayer(serverSettings, config.http.nodeHttpParts, fastPaths.requestListener);
  // Fastify compiles the routes' schemas at startup, unless a speed path has them made already.
  const schemaCompilers = fastPaths.schemaCompilers?.();
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }), // one line per request: plugins/app/request-log.ts
    bodyLimit: BODY_LIMIT_BYTES,
    ...serverSettings,
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
    ...(schemaCompilers && { schemaController: { compilersFactory: schemaCompilers } }),
    // Before a request exists: malformed, too large, too slow.
    clientErrorHandler: nodeHttp.clientErrorHandler(handleClientError),
    serverFactory: nodeHttp.serverFactory,
    frameworkErrors: answerRefusedUrl, // URLs the router refuses (`/book/%zz`)
  }).withTypeProvider<TypeBoxTypeProvider>();
  nodeHttp.install(app);

  app.setErrorHandler(handleError);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorEnvelope(404, Messages.routeNotFound)));

  // The app's own plugins first: every route registered after routeTable gets its 405 answers
  // (the /docs pages' too), and the answer's headers are set before CORS may answer a preflight.
  // With tracing on, its onRequest hook comes before every other: the request's span covers
  // them all, and they run in its context.
  if (tracing.httpSpans) app.register(tracing.httpSpans);
  app.register(routeTable);
  app.register(requestHeaders);
  app.register(jsonBody, { jsonBodyParser: fastPaths.jsonBodyParser });
  app.register(requestLog);
  app.register(storePlugin, { store, bookLists: fastPaths.bookLists?.(store, tracing) });
  app.register(changeFeed, { settings: config.changes, tracing });
  app.register(metrics, { enabled: config.http.metrics, tracing, requestMetrics: fastPaths.requestMetrics });
  app.register(auth, { settings: config.auth, loginLimiter, tracing, verifiedTokens: fastPaths.verifiedTokens });

  // The named schemas the routes refer to by `$ref`; the OpenAPI document lists them too.
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // Third-party plugins with our options; the OpenAPI document describes the routes after it.
  // The API reference's plugin is imported only here, so that a speed path standing in for it
  // leaves @fastify/swagger and @fastify/swagger-ui unloaded.
  app.register(cors, { origins: config.http.corsOrigins });
  app.register(fastPaths.apiReference ?? import('./plugins/external/openapi.js'));

  app.register(openapiRoute);
  app.register(metricsRoute);
  app.register(healthRoutes);
  app.register(tokenRoute);
  app.register(bookRoutes, { secret: config.auth.secret });
  app.register(changeRoutes, { tracing });

  app.register(methodNotAllowed);
  // The web page after the 405 answers: other methods on its paths stay 404 (routes/web-ui.ts).
  if (config.http.webUi) app.register(webUi);
  await app.after();
  return app;
}
