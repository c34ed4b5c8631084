// What the API reference is made of: the options of @fastify/swagger (the OpenAPI 3.1 document)
// and of @fastify/swagger-ui (the interactive page at /docs, served from the package's own
// files, no CDN), with the page's title, logo, icon and Content-Security-Policy. The plugin
// that registers them is ./openapi.ts; a speed path that builds them elsewhere (src/fast/) uses
// the same options. Only types are imported from the two packages: reading this loads neither.
// And the list of the named schemas, which the app adds and the document lists.
//
// The document is generated from the same route schemas that validate and serialize (no
// hand-written copy).
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { TSchema } from 'typebox';
import * as batch from '../../schemas/batch.js';
import * as book from '../../schemas/book.js';
import * as changes from '../../schemas/changes.js';
import * as health from '../../schemas/health.js';
import * as shared from '../../schemas/shared.js';
import * as token from '../../schemas/token.js';
import { VERSION } from '../../version.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of every route registered after the openapi plugin (GET /openapi.json). */
    openapiDocument(): Promise<unknown>;
  }
}

/**
 * Every named schema, for app.addSchema (src/app.ts). The document lists them under
 * `components.schemas` in this order; a schema comes after those it refers to.
 */
export const SHARED_SCHEMAS: readonly TSchema[] = [
  book.Book, book.CreateBookBody, book.UpdateBookBody, batch.BatchOperationSchema, batch.BatchBody, token.LoginBody, token.TokenResult, health.HealthResult,
  // Success envelopes.
  token.TokenGeneratedResponse,
  book.BookCreatedResponse, book.BookListResponse, book.BookRetrievedResponse, book.BookUpdatedResponse, book.BookDeletedResponse,
  batch.BatchAppliedResponse,
  health.AliveResponse, health.ReadyResponse,
  // Error envelopes, by status; the unions beside their members.
  shared.InvalidLoginPayloadResponse, shared.InvalidInputResponse, shared.InvalidIdempotencyKeyResponse, book.BadBookWriteResponse,
  shared.InvalidIfMatchResponse, shared.InvalidIfNoneMatchResponse, book.BadBookUpdateResponse, book.BadBookDeleteResponse,
  shared.InvalidCredentialsResponse, shared.TokenRequiredResponse, shared.InvalidTokenResponse, shared.UnauthorizedResponse,
  book.InvalidLimitResponse, book.InvalidSortResponse, book.InvalidSearchResponse, book.CursorNotIssuedResponse, book.CursorForOtherListResponse,
  book.BadListRequestResponse, changes.ChangeCursorNotIssuedResponse, changes.ChangeCursorExpiredResponse,
  batch.InvalidBatchResponse, batch.InvalidBatchOperationResponse, batch.UnknownBatchOperationResponse, batch.NestedBatchResponse, batch.BadBatchResponse,
  batch.BatchNotAppliedResponse, batch.BatchFailedResponse,
  shared.BookNotFoundResponse, shared.IdempotencyKeyInProgressResponse, shared.PreconditionFailedResponse, shared.IdempotencyKeyReusedResponse,
  shared.BodyTooLargeResponse, shared.TooManyRequestsResponse,
  shared.InternalErrorResponse, shared.TokenSigningFailedResponse, token.TokenServerErrorResponse, shared.ServiceUnavailableResponse,
];

/** Where the reference page is served. */
export const DOCS_PREFIX = '/docs';

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

/**
 * @fastify/swagger's options: the document's header, and each route's schema as documented.
 * The named schemas (the app's shared schemas, added before it) are listed under
 * `components.schemas` by their `$id`.
 */
export const DOCUMENT_OPTIONS: FastifyDynamicSwaggerOptions = {
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
  // Idempotent-Replayed) are read by the routes themselves; the document lists them. So are
  // GET /books's parameters (each bad value has a message of its own).
  transform: ({ schema, url }) => {
    if (!schema) return { url, schema };
    const documented = { ...schema } as typeof schema & { operationId?: string; response?: Record<number, object> };
    if (schema.params === book.BookIdParams) documented.params = book.DocumentedBookIdParams;
    if (documented.operationId === 'listBooks') documented.querystring = book.DocumentedListQuery;
    const headers = documented.operationId === undefined ? undefined : book.DocumentedBookHeaders[documented.operationId];
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
};

/** @fastify/swagger-ui's options: the page under DOCS_PREFIX, with the service's title, logo, icon and policy. */
export const PAGE_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: DOCS_PREFIX,
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
};
