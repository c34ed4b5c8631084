// The OpenAPI document (GET /openapi.json, src/routes/openapi.ts) and the reference page under
// /docs, made on first use: at startup this plugin only notes the routes registered after it;
// the first request for either builds the reference app (./api-reference.ts, @fastify/swagger
// and @fastify/swagger-ui), and /docs requests are answered by it through `inject`, so they go
// through this app's hooks (headers, log line, metrics) like any other request.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { SHARED_SCHEMAS } from '../../schemas/shared.js';

const DOCS_PREFIX = '/docs';

/**
 * The paths @fastify/swagger-ui serves under the prefix, registered here so that a wrong method
 * on them answers 405 and any other path 404, as if the plugin itself were registered.
 */
const DOCS_PATHS = ['', '/', '/json', '/yaml', '/static/index.html', '/static/swagger-initializer.js', '/static/*'];

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

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of every route registered after the openapi plugin. */
    openapiDocument(): Promise<unknown>;
  }
}

async function openapi(app: FastifyInstance) {
  // The routes' `$ref`s to named schemas resolve for validation and serialization.
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  let reference: Promise<FastifyInstance> | undefined;
  /** Built once, by the first request that needs it; a failed build is tried again next time. */
  function apiReference(): Promise<FastifyInstance> {
    reference ??= import('./api-reference.js')
      .then(({ buildApiReference }) => buildApiReference(routes, DOCS_PREFIX))
      .catch((error: unknown) => {
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

export default fp(openapi, { name: 'openapi' });
