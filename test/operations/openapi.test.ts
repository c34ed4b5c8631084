// GET /openapi.json (README "Operations"): a valid OpenAPI 3.1 document generated from the
// route schemas, describing every route the app serves, the token security scheme and every
// fixed error message of the spec. The document does not depend on the store: SQLite only.
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { useService } from '../helpers/service.js';

interface Operation {
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  responses?: Record<string, unknown>;
}
interface OpenApiDocument {
  openapi: string;
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, Record<string, unknown>> };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The spec's six operations, then the operability routes, as `METHOD /openapi/path`. */
const API_OPERATIONS = ['POST /token', 'POST /book', 'GET /books', 'GET /book/{id}', 'PUT /book/{id}', 'DELETE /book/{id}'];
const PROTECTED_OPERATIONS = API_OPERATIONS.filter((operation) => operation !== 'POST /token');
const OPERATIONS_ROUTES = ['GET /healthz', 'GET /readyz', 'GET /metrics'];

/** Spec "Errors": every fixed error message, with the operations and status that carry it. */
const SPEC_ERRORS: Array<{ status: string; message: string; operations: string[] }> = [
  { status: '400', message: 'Invalid input', operations: ['POST /book', 'PUT /book/{id}'] },
  { status: '400', message: 'Invalid request payload', operations: ['POST /token'] },
  { status: '401', message: 'Authorization token required', operations: PROTECTED_OPERATIONS },
  { status: '401', message: 'Invalid token', operations: PROTECTED_OPERATIONS },
  { status: '401', message: 'Invalid credentials', operations: ['POST /token'] },
  { status: '404', message: 'Book not found', operations: ['GET /book/{id}', 'PUT /book/{id}', 'DELETE /book/{id}'] },
  { status: '500', message: 'Could not generate token', operations: ['POST /token'] },
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

  it("lists the spec's six operations and /healthz, /readyz, /metrics, and nothing else", async () => {
    const document = await fetchDocument();
    expect(documentedOperations(document)).toEqual([...API_OPERATIONS, ...OPERATIONS_ROUTES].sort());
    for (const key of ['GET /book/{id}', 'PUT /book/{id}', 'DELETE /book/{id}']) {
      expect(operation(document, key).parameters, key).toContainEqual(expect.objectContaining({ in: 'path', name: 'id', required: true }));
    }
  });

  it('describes every route the app serves, except the 405 answers, HEAD, /docs and /openapi.json', async () => {
    const document = await fetchDocument();
    const documented = documentedOperations(document);
    const routes = routerRoutes(service.current.app.printRoutes({ commonPrefix: false }));
    expect(routes.length, 'the router tree could not be read').toBeGreaterThan(10);
    const served: string[] = [];
    for (const { method, path } of routes) {
      if (method === 'HEAD' || path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/')) continue;
      // A method that answers 405 "Method not allowed" is the app's wrong-method answer, not an operation.
      const response = await fetch(service.current.baseUrl + path.replace(/:(\w+)/g, '1'), { method });
      const text = await response.text();
      if (response.status === 405 && text.includes('Method not allowed')) continue;
      served.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    }
    expect(served.length).toBeGreaterThanOrEqual(9);
    expect([...new Set(served)].sort()).toEqual(documented);
  });

  it('the five protected operations declare the `token` scheme: apiKey in the Authorization header', async () => {
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

  it('every fixed error message of the spec appears in the document', async () => {
    const text = JSON.stringify(await fetchDocument());
    for (const { message } of SPEC_ERRORS) expect(text, message).toContain(JSON.stringify(message));
  });

  it.each(SPEC_ERRORS)('$status "$message" is documented on the operations that answer it', async ({ status, message, operations }) => {
    const document = await fetchDocument();
    for (const key of operations) {
      const response = operation(document, key).responses?.[status];
      expect(response, `${key} documents no ${status} response`).toBeDefined();
      expect(JSON.stringify(response), `${key} ${status}`).toContain(JSON.stringify(message));
    }
  });
});
