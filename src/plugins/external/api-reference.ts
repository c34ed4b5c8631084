// The OpenAPI 3.1 document (@fastify/swagger) and the interactive reference page at /docs
// (@fastify/swagger-ui, served from the package's own files, no CDN), made by a Fastify instance
// of their own, built the first time either is asked for (src/plugins/external/openapi.ts):
// the two plugins, their YAML library and their static-file server are about a sixth of the
// service's startup and a few MiB of its memory, and most processes never serve /docs.
//
// The document is generated from the same route schemas that validate and serialize (no
// hand-written copy): the service's routes are registered here again, as they were registered
// in the service, with a handler that is never called.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { Messages, errorEnvelope } from '../../http/envelope.js';
import { handleError } from '../../http/errors.js';
import { BookIdParams, DocumentedBookHeaders, DocumentedBookIdParams } from '../../schemas/book.js';
import { SHARED_SCHEMAS } from '../../schemas/shared.js';
import { VERSION } from '../../version.js';

/** The reference page's title (the browser tab and the top bar). */
export const DOCS_TITLE = 'Book collection service API';
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'", // Swagger UI sets inline styles
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The top bar's logo in place of the plugin's: a book and the service's name (an inline data: image). */
export const DOCS_LOGO_SVG = [
  '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40" viewBox="0 0 320 40">',
  '<title>Book collection service</title>',
  '<path d="M6 8h11a5 5 0 0 1 5 5v21a4 4 0 0 0-4-4H6z" fill="#fff" stroke="#fff" stroke-width="2" stroke-linejoin="round"/>',
  '<path d="M38 8H27a5 5 0 0 0-5 5v21a4 4 0 0 1 4-4h12z" fill="#fff" stroke="#fff" stroke-width="2" stroke-linejoin="round"/>',
  '<text x="50" y="27" fill="#fff" font-family="sans-serif" font-size="18" font-weight="bold">Book collection service</text>',
  '</svg>',
].join('');

/** The same book as the browser tab's icon, in place of the plugin's. */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 44 44">' +
  '<rect width="44" height="44" rx="8" fill="#1b1b1b"/>' +
  '<path d="M6 10h11a5 5 0 0 1 5 5v19a4 4 0 0 0-4-4H6zM38 10H27a5 5 0 0 0-5 5v19a4 4 0 0 1 4-4h12z" fill="#fff"/>' +
  '</svg>';

/** What the service's routes become here: only what the document is made of. */
function documentedRoute(route: RouteOptions): RouteOptions {
  return { method: route.method, url: route.url, schema: route.schema, config: route.config, handler: neverCalled };
}

function neverCalled(): never {
  throw new Error('the API reference app only describes the routes; the service serves them');
}

/**
 * The document and the page for `routes` (every route the service registered after the
 * openapi plugin, HEAD routes included) under `prefix`. The named schemas (src/schemas/shared.ts)
 * are listed under `components.schemas` by their `$id`.
 */
export async function buildApiReference(routes: readonly RouteOptions[], prefix: string): Promise<FastifyInstance> {
  // The HEAD routes are among `routes`, as the service registered them; none made twice.
  const app = Fastify({ logger: false, exposeHeadRoutes: false });
  // Nothing is validated or serialized here: no schema is compiled.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Failures answered as the service answers them (a path the static files refuse: 403 envelope).
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorEnvelope(404, Messages.routeNotFound)));
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Book collection service',
        version: VERSION,
        description:
          'Stores book records and protects them with signed, time-limited tokens. Every response, ' +
          'success or failure, is the envelope `{status, message, data}` with the HTTP status equal to `status`. ' +
          'Obtain a token from `POST /token` and send it in the `Authorization` header.',
      },
      tags: [
        { name: 'token', description: 'Authentication' },
        { name: 'books', description: 'The book collection (token required)' },
        { name: 'operations', description: 'Health, readiness and metrics' },
      ],
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The token from POST /token, raw or as `Bearer <token>`.',
          },
        },
      },
    },
    // Components named by their `$id` (`Book`, not the plugin's `def-0`).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
    },
    // OpenAPI 3.1 has `const`: keep it (status and message are constants of each envelope).
    convertConstToEnum: false,
    // The `:id` path parameter is validated as a plain string, because parseBookId must see
    // whatever the client sent and answer an invalid id with the same 404 as a missing book
    // (Ajv runs without type coercion: an integer schema would turn `abc` into a 400). The
    // document shows what a valid id is instead, an int64 from 1 up: only the schema handed
    // to the document changes, never the one the route validates with.
    // The book operations' headers (Idempotency-Key, If-Match, If-None-Match, ETag,
    // Idempotent-Replayed) are read by the routes themselves; the document lists them.
    transform: ({ schema, url }) => {
      if (!schema) return { url, schema };
      const documented = { ...schema } as typeof schema & { operationId?: string; response?: Record<number, object> };
      if (schema.params === BookIdParams) documented.params = DocumentedBookIdParams;
      const headers = documented.operationId === undefined ? undefined : DocumentedBookHeaders[documented.operationId];
      if (headers?.request) documented.headers = headers.request;
      if (headers?.answers && documented.response) {
        const response = { ...documented.response };
        for (const [status, answerHeaders] of Object.entries(headers.answers)) {
          response[Number(status)] = { ...response[Number(status)], headers: answerHeaders };
        }
        documented.response = response;
      }
      return { url, schema: documented };
    },
  });

  await app.register(swaggerUi, {
    routePrefix: prefix,
    staticCSP: true,
    // The plugin's default policy adds `upgrade-insecure-requests`, which breaks the page over
    // plain HTTP on any host but localhost, and allows any https: style source. Ours: self only.
    transformStaticCSP: () => DOCS_CSP,
    uiConfig: { deepLinking: false, persistAuthorization: false, tryItOutEnabled: true },
    logo: { type: 'image/svg+xml', content: DOCS_LOGO_SVG },
    theme: {
      title: DOCS_TITLE,
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: FAVICON_SVG }],
    },
  });
  for (const route of routes) app.route(documentedRoute(route));
  await app.ready();
  return app;
}
