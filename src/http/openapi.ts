// The OpenAPI 3.1 document, generated from the same route schemas that validate and
// serialize (no hand-written copy), at GET /openapi.json; and the interactive reference
// page at GET /docs, served from the swagger-ui package's own files (no CDN).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { App } from './types.js';

export const DOCS_PREFIX = '/docs';
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

/** Register before the routes: the document is built from every route registered after it. */
export async function registerOpenApi(app: App, version: string) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Book collection service',
        version,
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
            description: 'The token from POST /token, raw (as the spec says) or as `Bearer <token>`.',
          },
        },
      },
    },
  });

  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => reply.send(app.swagger()));

  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: true,
    // The plugin's default policy adds `upgrade-insecure-requests`, which breaks the page over
    // plain HTTP on any host but localhost, and allows any https: style source. Ours: self only.
    transformStaticCSP: () => DOCS_CSP,
    uiConfig: { deepLinking: false, persistAuthorization: false, tryItOutEnabled: true },
  });
}
