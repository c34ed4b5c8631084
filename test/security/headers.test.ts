// Security headers on every response: successes, every 4xx the service writes (including the
// ones written outside the routes: undecodable URLs, requests Node's parser refuses, request
// timeouts), 404 routes and 405s, and the operational routes (health, metrics, OpenAPI, docs). Every response has X-Content-Type-Options: nosniff, a
// Content-Security-Policy and no X-Powered-By; every POST /token response has
// Cache-Control: no-store (a token or a failed login must never be cached).
import { beforeAll, describe, expect, it } from 'vitest';
import { machinery } from '../helpers/node-http.js';
import { portOf, rawExchange, rawRequest, type RawRequest, type RawResponse } from '../helpers/client/raw-http.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

const MIB = 1024 * 1024;
const BOOK = JSON.stringify({ title: 'Headers', author: 'H. Eader', year: 2020 });
const LOGIN = JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD });

function expectSecurityHeaders(response: RawResponse, context: string, { json = true } = {}) {
  const where = `${context} → HTTP ${response.status} ${JSON.stringify(response.headers)}`;
  expect(response.headers['x-content-type-options'], `X-Content-Type-Options: ${where}`).toBe('nosniff');
  expect(response.headers['content-security-policy'] ?? '', `Content-Security-Policy: ${where}`).toMatch(/default-src/);
  expect(response.headers['x-powered-by'], `X-Powered-By: ${where}`).toBeUndefined();
  if (json) expect(response.headers['content-type'] ?? '', `Content-Type: ${where}`).toMatch(/^application\/json(;|$)/);
}

interface Case {
  name: string;
  /** The status, or the statuses a correct service may choose between. */
  status: number | number[];
  /** False for the answers that are not JSON (metrics, the docs page). */
  json?: boolean;
  request: (ids: { token: string; bookId: number }) => RawRequest;
}

const auth = (token: string): Array<[string, string]> => [['Authorization', token]];
const json: Array<[string, string]> = [['Content-Type', 'application/json']];

const CASES: Case[] = [
  { name: 'GET /books', status: 200, request: ({ token }) => ({ method: 'GET', path: '/books', headers: auth(token) }) },
  { name: 'HEAD /books', status: 200, request: ({ token }) => ({ method: 'HEAD', path: '/books', headers: auth(token) }) },
  { name: 'POST /book', status: 201, request: ({ token }) => ({ method: 'POST', path: '/book', headers: [...auth(token), ...json], body: BOOK }) },
  { name: 'GET /book/:id', status: 200, request: ({ token, bookId }) => ({ method: 'GET', path: `/book/${bookId}`, headers: auth(token) }) },
  { name: 'PUT /book/:id', status: 200, request: ({ token, bookId }) => ({ method: 'PUT', path: `/book/${bookId}`, headers: [...auth(token), ...json], body: '{"year":2021}' }) },
  { name: 'POST /token', status: 200, request: () => ({ method: 'POST', path: '/token', headers: json, body: LOGIN }) },
  { name: '401 no token', status: 401, request: () => ({ method: 'GET', path: '/books' }) },
  { name: '401 invalid token', status: 401, request: () => ({ method: 'GET', path: '/books', headers: auth('not.a.token') }) },
  { name: '400 Invalid input', status: 400, request: ({ token }) => ({ method: 'POST', path: '/book', headers: [...auth(token), ...json], body: '{"title":1}' }) },
  { name: '400 malformed JSON', status: 400, request: ({ token }) => ({ method: 'POST', path: '/book', headers: [...auth(token), ...json], body: '{"title":' }) },
  { name: '404 Book not found', status: 404, request: ({ token }) => ({ method: 'GET', path: '/book/8000000000000000000', headers: auth(token) }) },
  { name: '404 non-numeric id', status: 404, request: ({ token }) => ({ method: 'GET', path: '/book/abc', headers: auth(token) }) },
  { name: '404 Route not found', status: 404, request: () => ({ method: 'GET', path: '/nope' }) },
  { name: '404 Route not found (POST)', status: 404, request: () => ({ method: 'POST', path: '/nope', headers: json, body: '{}' }) },
  { name: '405 PATCH /book/:id', status: 405, request: ({ token }) => ({ method: 'PATCH', path: '/book/1', headers: auth(token) }) },
  { name: '405 GET /token', status: 405, request: () => ({ method: 'GET', path: '/token' }) },
  { name: '405 DELETE /books', status: 405, request: () => ({ method: 'DELETE', path: '/books' }) },
  { name: '413 body over 1 MiB', status: 413, request: ({ token }) => ({ method: 'POST', path: '/book', headers: [...auth(token), ...json], body: 'x'.repeat(MIB + 1) }) },
  { name: '415 unreadable Content-Type', status: [415, 201], request: ({ token }) => ({ method: 'POST', path: '/book', headers: [...auth(token), ['Content-Type', ';;;']], body: BOOK }) },
  // Answered outside the routes (frameworkErrors): undecodable or overlong :id, undecodable path.
  { name: '401 undecodable :id, no token (/book/%zz)', status: 401, request: () => ({ method: 'GET', path: '/book/%zz' }) },
  { name: '404 undecodable :id with a token (/book/%zz)', status: 404, request: ({ token }) => ({ method: 'GET', path: '/book/%zz', headers: auth(token) }) },
  { name: '404 :id over 100 characters with a token', status: 404, request: ({ token }) => ({ method: 'GET', path: `/book/${'1'.repeat(101)}`, headers: auth(token) }) },
  { name: '400 undecodable path (/%zz)', status: 400, request: () => ({ method: 'GET', path: '/%zz' }) },
  // Answered by the client-error handler, before a request exists.
  { name: '431 headers over the 128 KiB limit', status: 431, request: () => ({ method: 'GET', path: '/books', headers: [['X-Big', 'a'.repeat(130 * 1024)]] }) },
  { name: '400 malformed request (bad header byte)', status: 400, request: () => ({ method: 'GET', path: '/books', headers: [['X-Bad', 'a\u0001b']] }) },
  { name: '400 malformed request line', status: 400, request: () => ({ method: 'G ET', path: '/books' }) },
  // Node's own answer to an Expect it cannot meet (left out when NODE_HTTP_PARTS turns ignore-unknown-expect off: Node's bare 417).
  ...(machinery.ignoreUnknownExpect ? [{ name: '417 Expect: something-else', status: [417, 200], request: ({ token }) => ({ method: 'GET', path: '/books', headers: [...auth(token), ['Expect', 'something-else']] }) } satisfies Case] : []),
  // Operational routes (docs/operations.md "Health, metrics and the API document").
  { name: 'GET /healthz', status: 200, request: () => ({ method: 'GET', path: '/healthz' }) },
  { name: 'GET /readyz', status: 200, request: () => ({ method: 'GET', path: '/readyz' }) },
  { name: 'GET /metrics', status: 200, json: false, request: () => ({ method: 'GET', path: '/metrics' }) },
  { name: 'GET /openapi.json', status: 200, request: () => ({ method: 'GET', path: '/openapi.json' }) },
  { name: 'GET /docs (HTML, its own policy)', status: 200, json: false, request: () => ({ method: 'GET', path: '/docs' }) },
  { name: '405 POST /healthz', status: 405, request: () => ({ method: 'POST', path: '/healthz' }) },
  { name: '405 POST /docs', status: 405, request: () => ({ method: 'POST', path: '/docs' }) },
  { name: '404 GET /docs/nope', status: 404, request: () => ({ method: 'GET', path: '/docs/nope' }) },
  { name: '404 GET /docsx', status: 404, request: () => ({ method: 'GET', path: '/docsx' }) },
  { name: '404 GET /docs/../../package.json', status: 404, request: () => ({ method: 'GET', path: '/docs/../../package.json' }) },
  { name: '400 GET /docs/%zz', status: 400, request: () => ({ method: 'GET', path: '/docs/%zz' }) },
  // Last: deletes the book the others use.
  { name: 'DELETE /book/:id', status: 200, request: ({ token, bookId }) => ({ method: 'DELETE', path: `/book/${bookId}`, headers: auth(token) }) },
];

forEachStore((kind) => {
  describe('security headers on every response', () => {
    const service = useService(kind, { LOG_LEVEL: 'warn' });
    const ids = { token: '', bookId: 0 };

    beforeAll(async () => {
      ids.token = await service.client.token();
      ids.bookId = (await service.client.createBook(ids.token, { title: 'Headers', author: 'H. Eader', year: 2020 })).id;
    });

    it.each(CASES.map((testCase) => [testCase.name, testCase] as const))('%s: nosniff, Content-Security-Policy, no X-Powered-By', async (_name, testCase) => {
      const exchange = await rawRequest(portOf(service.current.baseUrl), testCase.request(ids));
      expect(exchange.response, `no response: ${exchange.received.toString('latin1').slice(0, 200)}`).toBeDefined();
      const response = exchange.response!;
      expect([testCase.status].flat(), `HTTP ${response.status} ${response.body}`).toContain(response.status);
      expectSecurityHeaders(response, testCase.name, { json: testCase.json ?? true });
    });
  });

  describe('408 written on a request timeout (REQUEST_TIMEOUT=1)', () => {
    const service = useService(kind, { REQUEST_TIMEOUT: '1', LOG_LEVEL: 'warn' });

    it('408: nosniff, Content-Security-Policy, no X-Powered-By', async () => {
      const exchange = await rawExchange(portOf(service.current.baseUrl), (socket) => void socket.write('GET /books HTTP/1.1\r\n'), {
        timeoutMs: 6_000,
        untilClose: true,
      });
      expect(exchange.response, `no response: ${exchange.received.toString('latin1')}`).toBeDefined();
      expect(exchange.response!.status).toBe(408);
      expectSecurityHeaders(exchange.response!, '408');
    });
  });

  describe('POST /token responses are never cached: Cache-Control: no-store', () => {
    const service = useService(kind, { LOGIN_RATE_LIMIT: '2', LOG_LEVEL: 'warn' });

    function login(body: string | undefined, headers: Array<[string, string]> = json): Promise<RawResponse> {
      return rawRequest(portOf(service.current.baseUrl), { method: 'POST', path: '/token', headers, body }).then((exchange) => {
        expect(exchange.response).toBeDefined();
        return exchange.response!;
      });
    }

    function expectNoStore(response: RawResponse, status: number | number[], context: string) {
      expect([status].flat(), `${context}: HTTP ${response.status} ${response.body}`).toContain(response.status);
      expect(response.headers['cache-control'], `${context}: ${JSON.stringify(response.headers)}`).toBe('no-store');
      expectSecurityHeaders(response, context);
    }

    it('200, 400 (malformed, empty, wrong types, poisoned), 413, 415, 401 and then 429 all carry Cache-Control: no-store', async () => {
      expectNoStore(await login(LOGIN), 200, '200');
      expectNoStore(await login('{"username":'), 400, '400 malformed');
      expectNoStore(await login(''), 400, '400 empty');
      expectNoStore(await login(undefined, []), 400, '400 no body at all');
      expectNoStore(await login('{"username":1,"password":2}'), 400, '400 wrong types');
      expectNoStore(await login(`{"__proto__":{"x":1},"username":"${TEST_USERNAME}","password":"${TEST_PASSWORD}"}`), 400, '400 poisoned');
      expectNoStore(await login(JSON.stringify({ username: 'x'.repeat(MIB), password: 'y' })), 413, '413');
      expectNoStore(await login(LOGIN, [['Content-Type', ';;;']]), [415, 200], '415');
      expectNoStore(await login(JSON.stringify({ username: TEST_USERNAME, password: 'wrong-1' })), 401, '401 first failure');
      expectNoStore(await login(JSON.stringify({ username: TEST_USERNAME, password: 'wrong-2' })), 401, '401 second failure');
      const limited = await login(LOGIN);
      expectNoStore(limited, 429, '429');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });
  });
});
