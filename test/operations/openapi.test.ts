// GET /openapi.json (docs/operations.md "Health, metrics and the API document"): a valid OpenAPI 3.1 document generated from the
// route schemas, that typed clients can use as it is: every route the app serves, the token
// security scheme, an operationId and tags on every operation, named schemas in
// components.schemas referenced by `$ref`, the `:id` path parameter as an int64 from 1 up, and
// on every response the envelope with `const` status and message (an `anyOf` of envelopes where
// one status has two messages). The document does not depend on the store: SQLite only.
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { Messages } from '../../src/http/envelope.js';
import { VERSION } from '../../src/version.js';
import { useService } from '../helpers/service/start-service.js';

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  minimum?: number;
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  description?: string;
}
interface MediaType {
  schema?: JsonSchema;
}
interface ResponseObject {
  description?: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, { description?: string; schema?: JsonSchema }>;
}
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  responses?: Record<string, ResponseObject>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title?: string; description?: string; version?: string };
  tags?: Array<{ name: string; description?: string }>;
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, Record<string, unknown>>; schemas?: Record<string, JsonSchema> };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const SCHEMAS_PREFIX = '#/components/schemas/';
const MAX_INT64 = '9223372036854775807';

/** The book-service operations (the six of the interface, then the change feed and the batch), then the operability routes, as `METHOD /openapi/path`. */
const API_OPERATIONS = ['POST /token', 'POST /book', 'GET /books', 'GET /book/{id}', 'PUT /book/{id}', 'DELETE /book/{id}', 'GET /books/changes', 'POST /batch'];
const PROTECTED_OPERATIONS = API_OPERATIONS.filter((operation) => operation !== 'POST /token');
const OPERATIONS_ROUTES = ['GET /healthz', 'GET /readyz', 'GET /metrics'];
const ID_OPERATIONS = ['GET /book/{id}', 'PUT /book/{id}', 'DELETE /book/{id}'];
const WRITE_OPERATIONS = ['POST /book', 'PUT /book/{id}', 'DELETE /book/{id}'];

/** The operationId of every operation: what a generated client names its functions. */
const OPERATION_IDS: Record<string, string> = {
  'POST /token': 'createToken',
  'POST /book': 'createBook',
  'GET /books': 'listBooks',
  'GET /book/{id}': 'getBook',
  'PUT /book/{id}': 'updateBook',
  'DELETE /book/{id}': 'deleteBook',
  'GET /books/changes': 'followChanges',
  'POST /batch': 'applyBatch',
  'GET /healthz': 'getLiveness',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
};

/** Named schemas a typed client gets as types. */
const NAMED_SCHEMAS = [
  'Book',
  'CreateBookBody',
  'UpdateBookBody',
  'LoginBody',
  'TokenResult',
  'TokenGeneratedResponse',
  'BookCreatedResponse',
  'BookListResponse',
  'BookRetrievedResponse',
  'BookUpdatedResponse',
  'BookDeletedResponse',
  'InvalidLoginPayloadResponse',
  'InvalidInputResponse',
  'InvalidCredentialsResponse',
  'UnauthorizedResponse',
  'BookNotFoundResponse',
  'BodyTooLargeResponse',
  'TooManyRequestsResponse',
  'InternalErrorResponse',
  'ServiceUnavailableResponse',
  'BatchBody',
  'BatchOperation',
  'BatchAppliedResponse',
  'BatchNotAppliedResponse',
];

/** The request body schema of each operation that takes one. */
const REQUEST_BODIES: Record<string, string> = {
  'POST /token': 'LoginBody',
  'POST /book': 'CreateBookBody',
  'PUT /book/{id}': 'UpdateBookBody',
  'POST /batch': 'BatchBody',
};

/** Every JSON answer each operation can give: HTTP status → the messages it can carry. */
const store = { 500: [Messages.internalError], 503: [Messages.serviceUnavailable] };
const unauthorized = [Messages.tokenRequired, Messages.invalidToken];
/** The answers of a write that brings an Idempotency-Key. */
const keyed = { 409: [Messages.idempotencyKeyInProgress], 422: [Messages.idempotencyKeyReused] };

const EXPECTED_ANSWERS: Record<string, Record<number, string[]>> = {
  'POST /token': {
    200: [Messages.tokenGenerated],
    400: [Messages.invalidLoginPayload],
    401: [Messages.invalidCredentials],
    413: [Messages.bodyTooLarge],
    429: [Messages.tooManyRequests],
    500: [Messages.tokenSigningFailed, Messages.internalError],
  },
  'POST /book': {
    201: [Messages.bookCreated],
    400: [Messages.invalidBook, Messages.invalidIdempotencyKey],
    401: unauthorized,
    ...keyed,
    413: [Messages.bodyTooLarge],
    ...store,
  },
  'GET /books': {
    200: [Messages.booksRetrieved],
    400: [Messages.invalidLimit, Messages.invalidSort, Messages.invalidSearch, Messages.cursorNotIssued, Messages.cursorForOtherList],
    401: unauthorized,
    ...store,
  },
  'GET /book/{id}': { 200: [Messages.bookRetrieved], 400: [Messages.invalidIfNoneMatch], 401: unauthorized, 404: [Messages.bookNotFound], ...store },
  'PUT /book/{id}': {
    200: [Messages.bookUpdated],
    400: [Messages.invalidBook, Messages.invalidIdempotencyKey, Messages.invalidIfMatch],
    401: unauthorized,
    404: [Messages.bookNotFound],
    ...keyed,
    412: [Messages.preconditionFailed],
    413: [Messages.bodyTooLarge],
    ...store,
  },
  'DELETE /book/{id}': {
    200: [Messages.bookDeleted],
    400: [Messages.invalidIdempotencyKey, Messages.invalidIfMatch],
    401: unauthorized,
    404: [Messages.bookNotFound],
    ...keyed,
    412: [Messages.preconditionFailed],
    413: [Messages.bodyTooLarge],
    ...store,
  },
  'GET /books/changes': {
    400: [Messages.changeCursorNotIssued],
    401: unauthorized,
    410: [Messages.changeCursorExpired],
    ...store,
  },
  'POST /batch': {
    200: [Messages.batchApplied],
    400: [Messages.invalidBatch, Messages.invalidBatchOperation, Messages.unknownBatchOperation, Messages.nestedBatch, Messages.invalidIdempotencyKey],
    401: unauthorized,
    ...keyed,
    422: [Messages.batchNotApplied, Messages.idempotencyKeyReused],
    413: [Messages.bodyTooLarge],
    ...store,
  },
  'GET /healthz': { 200: [Messages.alive] },
  'GET /readyz': { 200: [Messages.ready], 503: [Messages.serviceUnavailable] },
  'GET /metrics': { 500: [Messages.internalError] },
};

/** docs/api.md "Validation" and "Errors": every fixed error message, with the operations and status that carry it. */
const DOCUMENTED_ERRORS: Array<{ status: string; message: string; operations: string[] }> = [
  { status: '400', message: 'Invalid input', operations: ['POST /book', 'PUT /book/{id}'] },
  { status: '400', message: 'Invalid request payload', operations: ['POST /token'] },
  { status: '401', message: 'Authorization token required', operations: PROTECTED_OPERATIONS },
  { status: '401', message: 'Invalid token', operations: PROTECTED_OPERATIONS },
  { status: '401', message: 'Invalid credentials', operations: ['POST /token'] },
  { status: '404', message: 'Book not found', operations: ID_OPERATIONS },
  { status: '400', message: 'Invalid Idempotency-Key header', operations: WRITE_OPERATIONS },
  { status: '409', message: 'A request with this Idempotency-Key is still being processed', operations: WRITE_OPERATIONS },
  { status: '412', message: 'Precondition failed: the book has changed', operations: ['PUT /book/{id}', 'DELETE /book/{id}'] },
  { status: '422', message: 'Idempotency-Key already used for a different request', operations: WRITE_OPERATIONS },
  { status: '413', message: 'Request body too large', operations: ['POST /token', 'POST /book', 'PUT /book/{id}'] },
  { status: '429', message: 'Too many requests', operations: ['POST /token'] },
  { status: '500', message: 'Could not generate token', operations: ['POST /token'] },
  { status: '500', message: 'Internal server error', operations: ['POST /token', ...PROTECTED_OPERATIONS] },
  { status: '503', message: 'Service unavailable', operations: [...PROTECTED_OPERATIONS, 'GET /readyz'] },
];

/** Every `METHOD /path` the document describes. */
function documentedOperations(document: OpenApiDocument): string[] {
  const found: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item)) if (HTTP_METHODS.includes(method)) found.push(`${method.toUpperCase()} ${path}`);
  }
  return found.sort();
}

function operation(document: OpenApiDocument, key: string): Operation {
  const [method = '', path = ''] = key.split(' ');
  const found = document.paths[path]?.[method.toLowerCase()];
  if (!found) throw new Error(`${key} is not in the document`);
  return found;
}

/** The component a `#/components/schemas/Name` reference names. */
function component(document: OpenApiDocument, ref: string): JsonSchema {
  expect(ref.startsWith(SCHEMAS_PREFIX), `${ref} is not a reference to components.schemas`).toBe(true);
  const found = document.components?.schemas?.[ref.slice(SCHEMAS_PREFIX.length)];
  if (!found) throw new Error(`${ref} names no component`);
  return found;
}

/** The schema itself, following `$ref`s. */
function resolve(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; current.$ref !== undefined; hops++) {
    if (hops > 10) throw new Error(`reference loop at ${current.$ref}`);
    current = component(document, current.$ref);
  }
  return current;
}

/** The envelopes a response schema allows: itself, or each member of its anyOf/oneOf. */
function envelopes(document: OpenApiDocument, schema: JsonSchema): JsonSchema[] {
  const resolved = resolve(document, schema);
  const members = resolved.anyOf ?? resolved.oneOf;
  return members ? members.flatMap((member) => envelopes(document, member)) : [resolved];
}

/** Every `$ref` anywhere in `value`. */
function references(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) references(item, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.push(item);
      else references(item, found);
    }
  }
  return found;
}

/** The JSON schema of one response (undefined when it has no application/json content). */
function jsonSchemaOf(response: ResponseObject | undefined): JsonSchema | undefined {
  return response?.content?.['application/json']?.schema;
}

/**
 * Every (method, path) in the app's router, read from `printRoutes({ commonPrefix: false })`,
 * whose tree lines look like `│   └── /:id (GET, HEAD, PUT)`: a child's label continues its
 * parent's path.
 */
function routerRoutes(tree: string): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  const parents: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (!match) continue;
    const depth = [...(match[1] ?? '')].length / 4;
    const path = (parents[depth - 1] ?? '') + (match[2] ?? '');
    parents[depth] = path;
    parents.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').map((name) => name.trim()).filter(Boolean)) routes.push({ method, path });
  }
  return routes;
}

describe('GET /openapi.json', () => {
  const service = useService('sqlite');

  async function fetchDocument(): Promise<OpenApiDocument> {
    const response = await fetch(`${service.current.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    return (await response.json()) as OpenApiDocument;
  }

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const document = await fetchDocument();
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it("info: the service's title, a description and the package version", async () => {
    const { info } = await fetchDocument();
    expect(info.title).toBe('Book collection service');
    expect(info.description).toMatch(/envelope/);
    expect(info.description).toMatch(/POST \/token/);
    expect(info.version).toBe(VERSION);
  });

  it('lists the book-service operations and /healthz, /readyz, /metrics, and nothing else', async () => {
    const document = await fetchDocument();
    expect(documentedOperations(document)).toEqual([...API_OPERATIONS, ...OPERATIONS_ROUTES].sort());
    for (const key of ID_OPERATIONS) {
      expect(operation(document, key).parameters, key).toContainEqual(expect.objectContaining({ in: 'path', name: 'id', required: true }));
    }
  });

  it('describes every route the app serves, except the 405 answers, HEAD, /docs, /openapi.json and the web page', async () => {
    const document = await fetchDocument();
    const documented = documentedOperations(document);
    const routes = routerRoutes(service.current.app.printRoutes({ commonPrefix: false }));
    expect(routes.length, 'the router tree could not be read').toBeGreaterThan(10);
    const served: string[] = [];
    for (const { method, path } of routes) {
      if (method === 'HEAD' || path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/')) continue;
      if (path === '/' || path.startsWith('/ui/')) continue; // the web page (src/routes/web-ui.ts), not the API
      // A method that answers 405 "Method not allowed" is the app's wrong-method answer, not an operation.
      const response = await fetch(service.current.baseUrl + path.replace(/:(\w+)/g, '1'), { method });
      const text = await response.text();
      if (response.status === 405 && text.includes('Method not allowed')) continue;
      served.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    }
    expect(served.length).toBeGreaterThanOrEqual(9);
    expect([...new Set(served)].sort()).toEqual(documented);
  });

  it('every operation has its operationId, and no two operations share one', async () => {
    const document = await fetchDocument();
    const ids = documentedOperations(document).map((key) => operation(document, key).operationId);
    expect(new Set(ids).size, JSON.stringify(ids)).toBe(ids.length);
    for (const key of documentedOperations(document)) {
      expect(operation(document, key).operationId, key).toBe(OPERATION_IDS[key]);
      expect(operation(document, key).summary, key).toMatch(/\S/);
    }
  });

  it('every operation has tags, each declared at the top of the document', async () => {
    const document = await fetchDocument();
    const declared = (document.tags ?? []).map((tag) => tag.name);
    expect(declared).toEqual(expect.arrayContaining(['token', 'books', 'operations']));
    for (const tag of document.tags ?? []) expect(tag.description, tag.name).toMatch(/\S/);
    for (const key of documentedOperations(document)) {
      const tags = operation(document, key).tags ?? [];
      expect(tags.length, `${key} has no tag`).toBeGreaterThan(0);
      for (const tag of tags) expect(declared, `${key}: tag ${tag}`).toContain(tag);
    }
    expect(operation(document, 'POST /token').tags).toEqual(['token']);
    for (const key of PROTECTED_OPERATIONS) expect(operation(document, key).tags, key).toEqual(['books']);
    for (const key of OPERATIONS_ROUTES) expect(operation(document, key).tags, key).toEqual(['operations']);
  });

  it('the `id` path parameter is documented as an int64 from 1 to 9223372036854775807', async () => {
    const document = await fetchDocument();
    for (const key of ID_OPERATIONS) {
      const parameters = (operation(document, key).parameters ?? []).filter((parameter) => parameter.in === 'path');
      expect(parameters.map((parameter) => parameter.name), key).toEqual(['id']);
      const [id] = parameters;
      expect(id?.required, key).toBe(true);
      expect(id?.schema, key).toEqual({ type: 'integer', format: 'int64', minimum: 1 });
      expect(id?.description, key).toContain(`1 to ${MAX_INT64}`);
    }
    // The stored id in Book is the same int64.
    const book = resolve(document, { $ref: `${SCHEMAS_PREFIX}Book` });
    expect(book.properties?.id).toMatchObject({ type: 'integer', format: 'int64', minimum: 1 });
    expect(book.required).toEqual(expect.arrayContaining(['id', 'title', 'author', 'year']));
  });

  it('...while the service still takes any `:id` text and answers an invalid id 404 "Book not found"', async () => {
    // Only the document shows an integer: validation keeps the string, so the id parser decides.
    const token = await service.client.token();
    for (const id of ['abc', '0', '-1', '1.5', '9'.repeat(30), MAX_INT64]) {
      const response = await service.client.request('GET', `/book/${id}`, { token });
      expect([response.status, response.body.message], id).toEqual([404, Messages.bookNotFound]);
    }
    const unauthenticated = await service.client.request('DELETE', '/book/abc');
    expect([unauthenticated.status, unauthenticated.body.message]).toEqual([401, Messages.tokenRequired]);
  });

  it('the conditional-request and Idempotency-Key headers are documented: optional request headers, and the ETag and replay mark of the answers', async () => {
    const document = await fetchDocument();
    const requestHeaders = (key: string) =>
      (operation(document, key).parameters ?? []).filter((parameter) => parameter.in === 'header').map((parameter) => [parameter.name, parameter.required ?? false]);
    expect(requestHeaders('POST /book')).toEqual([['Idempotency-Key', false]]);
    expect(requestHeaders('PUT /book/{id}')).toEqual([['Idempotency-Key', false], ['If-Match', false]]);
    expect(requestHeaders('DELETE /book/{id}')).toEqual([['Idempotency-Key', false], ['If-Match', false]]);
    expect(requestHeaders('GET /book/{id}')).toEqual([['If-None-Match', false]]);
    const answerHeaders = (key: string, status: string) => Object.keys(operation(document, key).responses?.[status]?.headers ?? {});
    expect(answerHeaders('POST /book', '201')).toEqual(['ETag', 'Idempotent-Replayed']);
    expect(answerHeaders('GET /book/{id}', '200')).toEqual(['ETag']);
    expect(answerHeaders('GET /book/{id}', '304')).toEqual(['ETag']);
    expect(answerHeaders('PUT /book/{id}', '200')).toEqual(['ETag', 'Idempotent-Replayed']);
    expect(answerHeaders('DELETE /book/{id}', '200')).toEqual(['Idempotent-Replayed']);
    expect(answerHeaders('GET /books', '200')).toEqual(['Link', 'X-Total-Count', 'X-Total-Count-Estimate', 'Changes-Cursor']);
  });

  it('GET /books documents its parameters (limit, cursor, sort, q), all optional, so a generated client can page', async () => {
    const document = await fetchDocument();
    const query = (operation(document, 'GET /books').parameters ?? []).filter((parameter) => parameter.in === 'query');
    expect(query.map((parameter) => [parameter.name, parameter.required ?? false])).toEqual([
      ['limit', false],
      ['cursor', false],
      ['sort', false],
      ['q', false],
    ]);
    const schemaOf = (name: string) => query.find((parameter) => parameter.name === name)?.schema as Record<string, unknown>;
    expect(schemaOf('limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    expect(JSON.stringify(schemaOf('sort'))).toContain('-year');
    expect(schemaOf('q')).toMatchObject({ type: 'string', maxLength: 200 });
  });

  it('named schemas sit in components.schemas; bodies and JSON responses refer to them by $ref', async () => {
    const document = await fetchDocument();
    const schemas = document.components?.schemas ?? {};
    for (const name of NAMED_SCHEMAS) expect(Object.keys(schemas), name).toContain(name);
    expect(Object.keys(schemas).filter((name) => name.startsWith('def-')), 'unnamed components').toEqual([]);

    for (const key of documentedOperations(document)) {
      const { requestBody, responses = {} } = operation(document, key);
      const bodyName = REQUEST_BODIES[key];
      if (bodyName === undefined) {
        expect(requestBody, key).toBeUndefined();
      } else {
        expect(requestBody?.required, key).toBe(true);
        expect(requestBody?.content?.['application/json']?.schema, key).toEqual({ $ref: `${SCHEMAS_PREFIX}${bodyName}` });
      }
      for (const [status, response] of Object.entries(responses)) {
        const schema = jsonSchemaOf(response);
        if (schema === undefined) continue; // /metrics 200: text
        expect(Object.keys(schema), `${key} ${status}`).toEqual(['$ref']);
        expect(response.description, `${key} ${status}`).toMatch(/\S/);
      }
    }

    // Every reference resolves, and every named schema is used.
    const used = new Set(references(document));
    for (const ref of used) component(document, ref);
    for (const name of Object.keys(schemas)) expect(used.has(`${SCHEMAS_PREFIX}${name}`), `${name} is never referenced`).toBe(true);
    // Book is one schema, referenced from each envelope that carries books.
    for (const name of ['BookCreatedResponse', 'BookRetrievedResponse', 'BookUpdatedResponse']) {
      expect(resolve(document, { $ref: `${SCHEMAS_PREFIX}${name}` }).properties?.data, name).toEqual({ $ref: `${SCHEMAS_PREFIX}Book` });
    }
    expect(resolve(document, { $ref: `${SCHEMAS_PREFIX}BookListResponse` }).properties?.data).toEqual({
      type: 'array',
      items: { $ref: `${SCHEMAS_PREFIX}Book` },
    });
  });

  it('every JSON response of every operation is the envelope with const status (= the HTTP status) and const message', async () => {
    const document = await fetchDocument();
    const knownMessages: string[] = Object.values(Messages);
    for (const key of documentedOperations(document)) {
      const responses = operation(document, key).responses ?? {};
      const answers: Record<string, string[]> = {};
      for (const [status, response] of Object.entries(responses)) {
        expect(status, `${key}: only explicit statuses, no 4XX/5XX/default`).toMatch(/^[1-5]\d\d$/);
        const schema = jsonSchemaOf(response);
        if (schema === undefined && `${key} ${status}` === 'GET /book/{id} 304') {
          expect(response.content, 'a 304 has no body').toBeUndefined();
          continue;
        }
        if (schema === undefined) {
          // Text: the metrics, and the change feed's stream of server-sent events.
          const text = ({ 'GET /metrics 200': 'text/plain', 'GET /books/changes 200': 'text/event-stream' } as Record<string, string>)[`${key} ${status}`];
          expect(text, `${key} ${status}: only /metrics and /books/changes answer 200 with text`).toBeDefined();
          expect(Object.keys(response.content ?? {})).toEqual([text]);
          continue;
        }
        const variants = envelopes(document, schema);
        // Success answers are one envelope each (fast to serialize: no anyOf to try).
        if (status.startsWith('2')) expect(resolve(document, schema).anyOf ?? resolve(document, schema).oneOf, `${key} ${status}`).toBeUndefined();
        answers[status] = [];
        for (const envelope of variants) {
          const label = `${key} ${status} ${JSON.stringify(envelope)}`;
          expect(envelope.type, label).toBe('object');
          expect(envelope.required, label).toEqual(expect.arrayContaining(['status', 'message', 'data']));
          expect(envelope.properties?.status, label).toEqual({ type: 'integer', const: Number(status) });
          expect(envelope.properties?.message?.type, label).toBe('string');
          const message = envelope.properties?.message?.const;
          expect(typeof message, label).toBe('string');
          expect(knownMessages, label).toContain(message);
          answers[status].push(String(message));
          // Errors carry no data, but a batch's failure, which says which operation failed and why.
          if (!status.startsWith('2') && message !== Messages.batchNotApplied) expect(envelope.properties?.data, label).toEqual({ type: 'null' });
        }
      }
      const expected = Object.fromEntries(Object.entries(EXPECTED_ANSWERS[key] ?? {}).map(([status, messages]) => [status, [...messages].sort()]));
      const found = Object.fromEntries(Object.entries(answers).map(([status, messages]) => [status, messages.sort()]));
      expect(found, key).toEqual(expected);
    }
  });

  it('the protected operations declare the `token` scheme: apiKey in the Authorization header', async () => {
    const document = await fetchDocument();
    expect(document.components?.securitySchemes?.token).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    for (const key of PROTECTED_OPERATIONS) {
      const security = operation(document, key).security ?? document.security;
      expect(security, key).toContainEqual({ token: [] });
    }
  });

  it('public operations (POST /token, /healthz, /readyz, /metrics) require no token', async () => {
    const document = await fetchDocument();
    for (const key of ['POST /token', ...OPERATIONS_ROUTES]) {
      const security = operation(document, key).security ?? document.security ?? [];
      // `[]` or a list holding the empty requirement `{}` both mean "no authentication".
      expect(security.every((requirement) => Object.keys(requirement).length === 0), `${key}: ${JSON.stringify(security)}`).toBe(true);
    }
  });

  it('every fixed error message of docs/api.md appears in the document', async () => {
    const text = JSON.stringify(await fetchDocument());
    for (const { message } of DOCUMENTED_ERRORS) expect(text, message).toContain(JSON.stringify(message));
  });

  it.each(DOCUMENTED_ERRORS)('$status "$message" is documented on the operations that answer it', async ({ status, message, operations }) => {
    const document = await fetchDocument();
    for (const key of operations) {
      const schema = jsonSchemaOf(operation(document, key).responses?.[status]);
      expect(schema, `${key} documents no ${status} response`).toBeDefined();
      const messages = envelopes(document, schema ?? {}).map((envelope) => envelope.properties?.message?.const);
      expect(messages, `${key} ${status}`).toContain(message);
    }
  });
});
