// The OpenAPI document and the /docs page made on first use (the speed path lazy-api-reference).
// At startup this plugin only notes the routes registered after it; the first request for
// GET /openapi.json or /docs builds a second Fastify instance with @fastify/swagger and
// @fastify/swagger-ui (the options of src/plugins/external/api-reference.ts), where the
// service's routes are registered again with a handler that is never called, and /docs
// requests are answered by it through `inject`, so they go through this app's hooks (headers,
// log line, metrics) like any other request.
//
// Why: the two plugins, their YAML library and their static-file server were about a sixth of
// the service's startup (about 50 ms of a start's 280 ms of CPU samples) and a few MiB of its
// memory, and most processes never serve /docs. CPU time to the first answer 300 -> 240 ms, RSS
// 78.2 -> 76.6 MiB; the document byte for byte the same (docs/benchmarks-changes.md, "Startup:
// the API reference and the schema compilers on first use"). The first /openapi.json or /docs
// of a process takes about 0.2 s more.
//
// Stands in for src/plugins/external/openapi.ts (the two plugins registered in the app at
// startup), through FastPaths.apiReference (src/seams.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { Messages, errorEnvelope } from '../http/envelope.js';
import { handleError } from '../http/errors.js';
import { DOCS_PREFIX, DOCUMENT_OPTIONS, PAGE_OPTIONS } from '../plugins/external/api-reference.js';

/**
 * The paths @fastify/swagger-ui serves under the prefix, registered here so that a wrong method
 * on them answers 405 and any other path 404, as when the plugin itself is registered.
 */
const DOCS_PATHS = [
  '',
  '/',
  '/json',
  '/yaml',
  '/static/index.html',
  '/static/swagger-initializer.js',
  ...(PAGE_OPTIONS.theme?.favicon ?? []).map(({ filename }) => `/static/theme/${filename}`),
  '/static/*',
];

/** Request headers a reference answer depends on (conditional and range requests of its files). */
const FORWARDED_REQUEST_HEADERS = ['if-none-match', 'if-modified-since', 'range', 'if-range'] as const;
/** What the reference app's answers say that this app's hooks do not (its own Content-Security-Policy). */
const FORWARDED_ANSWER_HEADERS = [
  'content-type',
  'content-security-policy',
  'location',
  'cache-control',
  'last-modified',
  'etag',
  'accept-ranges',
  'content-range',
] as const;

async function lazyApiReference(app: FastifyInstance) {
  let reference: Promise<FastifyInstance> | undefined;
  /** Built once, by the first request that needs it; a failed build is tried again next time. */
  function apiReference(): Promise<FastifyInstance> {
    reference ??= buildApiReference(app, routes).catch((error: unknown) => {
      reference = undefined;
      throw error;
    });
    return reference;
  }

  app.decorate('openapiDocument', async () => (await apiReference()).swagger());

  async function answerFromReference(request: FastifyRequest, reply: FastifyReply) {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    // HEAD is answered from GET's answer by Fastify, without the body.
    const answer = await (await apiReference()).inject({ method: 'GET', url: request.url, headers });
    if (answer.statusCode >= 500) throw new Error(`the API reference answered ${answer.statusCode}: ${answer.body}`);
    reply.code(answer.statusCode);
    for (const name of FORWARDED_ANSWER_HEADERS) {
      const value = answer.headers[name];
      if (value !== undefined) reply.header(name, value);
    }
    // An empty Buffer would be labelled application/octet-stream (a redirect, a 304).
    return answer.rawPayload.length === 0 ? reply.send() : reply.send(answer.rawPayload);
  }
  for (const path of DOCS_PATHS) {
    app.get(`${DOCS_PREFIX}${path}`, { schema: { hide: true } }, answerFromReference);
  }

  // Noted after the routes above: the reference app registers its own.
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
}

/** What the service's routes become there: only what the document is made of. */
function documentedRoute(route: RouteOptions): RouteOptions {
  return { method: route.method, url: route.url, schema: route.schema, config: route.config, handler: neverCalled };
}

function neverCalled(): never {
  throw new Error('the API reference app only describes the routes; the service serves them');
}

/**
 * The document and the page for `routes` (every route the service registered after this
 * plugin, HEAD routes included), with the service's named schemas (`service.getSchemas()`).
 */
async function buildApiReference(service: FastifyInstance, routes: readonly RouteOptions[]): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  // The HEAD routes are among `routes`, as the service registered them; none made twice.
  const app = Fastify({ logger: false, exposeHeadRoutes: false });
  // Nothing is validated or serialized here: no schema is compiled.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Failures answered as the service answers them (a path the static files refuse: 403 envelope).
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorEnvelope(404, Messages.routeNotFound)));
  for (const schema of Object.values(service.getSchemas())) app.addSchema(schema);

  await app.register(swagger, DOCUMENT_OPTIONS);
  await app.register(swaggerUi, PAGE_OPTIONS);
  for (const route of routes) app.route(documentedRoute(route));
  await app.ready();
  return app;
}

export default fp(lazyApiReference, { name: 'openapi' });
