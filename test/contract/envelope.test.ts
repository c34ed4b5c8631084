// The response envelope on every path, including paths that are not API endpoints (README "API at a glance";
// docs/api.md "Errors"): every answer is the JSON envelope with HTTP status == body.status;
// 404 "Route not found", 405 with Allow, 413 over the 1 MiB body limit, an undecodable :id
// after authentication, JSON parsing, and the response headers.
import { beforeAll, describe, expect, it } from 'vitest';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

const MIB = 1024 * 1024;
const VALID_BOOK = { title: 'Dune', author: 'Frank Herbert', year: 1965 };

/** A JSON book body whose title makes the whole text exactly `bytes` long. */
function bookBodyOfLength(bytes: number): string {
  const empty = JSON.stringify({ title: '', author: 'a', year: 1 });
  return JSON.stringify({ title: 'x'.repeat(bytes - empty.length), author: 'a', year: 1 });
}

function allowed(response: ApiResponse): string[] {
  return (response.headers.get('allow') ?? '')
    .split(',')
    .map((method) => method.trim())
    .filter((method) => method !== '')
    .sort();
}

function expectJsonEnvelope(response: ApiResponse) {
  expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  expect(response.body.status).toBe(response.status);
  expect(Object.keys(response.body).sort()).toEqual(['data', 'message', 'status']);
}

forEachStore((kind) => {
  describe('response envelope and headers', () => {
    const service = useService(kind);
    let token: string;
    let bookId: string;

    beforeAll(async () => {
      token = await service.client.token();
      bookId = String((await service.client.createBook(token, VALID_BOOK)).id);
    });

    async function bookCount(): Promise<number> {
      const response = await service.client.request('GET', '/books', { token });
      return (response.body.data as unknown[]).length;
    }

    describe('unknown routes → 404 "Route not found"', () => {
      it.each([
        ['GET', '/nope'],
        ['GET', '/books/extra'],
        ['GET', '/'],
        ['POST', '/nope'],
        ['GET', '/book/1/extra'],
        ['GET', '/token/extra'],
      ])('%s %s → 404 {status:404,message:"Route not found",data:null}', async (method, path) => {
        for (const options of [{}, { token }]) {
          const response = await service.client.request(method, path, options);
          expect(response.status).toBe(404);
          expect(response.body).toEqual({ status: 404, message: 'Route not found', data: null });
          expectJsonEnvelope(response);
        }
      });
    });

    describe('a wrong method on an existing path → 405 "Method not allowed" with Allow', () => {
      it.each([
        ['PATCH', '/book/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
        ['POST', '/book/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
        ['DELETE', '/books', ['GET', 'HEAD']],
        ['PUT', '/books', ['GET', 'HEAD']],
        ['POST', '/books', ['GET', 'HEAD']],
        ['GET', '/token', ['POST']],
        ['DELETE', '/token', ['POST']],
        ['GET', '/book', ['POST']],
        ['DELETE', '/book', ['POST']],
      ])('%s %s → 405, Allow: %s', async (method, path, allow) => {
        const response = await service.client.request(method, path, { token });
        expect(response.status).toBe(405);
        expect(response.body).toEqual({ status: 405, message: 'Method not allowed', data: null });
        expect(allowed(response)).toEqual(allow);
        expectJsonEnvelope(response);
      });
    });

    describe('body size limit 1 MiB → 413 "Request body too large"', () => {
      it('POST /book with a body over 1 MiB and a valid token → 413', async () => {
        const before = await bookCount();
        const response = await service.client.request('POST', '/book', {
          token,
          body: bookBodyOfLength(MIB + 1),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(413);
        expect(response.body).toEqual({ status: 413, message: 'Request body too large', data: null });
        expectJsonEnvelope(response);
        expect(await bookCount()).toBe(before);
      });

      it('POST /book with a 5 MiB body → 413', async () => {
        const response = await service.client.request('POST', '/book', {
          token,
          body: bookBodyOfLength(5 * MIB),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.body).toEqual({ status: 413, message: 'Request body too large', data: null });
      });

      it('PUT /book/:id of an existing book with a body over 1 MiB → 413, book unchanged', async () => {
        const response = await service.client.request('PUT', `/book/${bookId}`, {
          token,
          body: bookBodyOfLength(MIB + 1),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(413);
        expect(response.body).toEqual({ status: 413, message: 'Request body too large', data: null });
        const read = await service.client.request('GET', `/book/${bookId}`, { token });
        expect(read.body.data).toMatchObject(VALID_BOOK);
      });

      it('POST /book with a chunked body (no Content-Length) over 1 MiB → 413', async () => {
        const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
        let sent = 0;
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"author":"a","year":1,"title":"'));
          },
          pull(controller) {
            if (sent >= 2 * MIB) {
              controller.enqueue(new TextEncoder().encode('"}'));
              controller.close();
              return;
            }
            sent += chunk.length;
            controller.enqueue(chunk);
          },
        });
        const response = await fetch(`${service.current.baseUrl}/book`, {
          method: 'POST',
          headers: { authorization: token, 'content-type': 'application/json' },
          body: stream,
          duplex: 'half',
        } as RequestInit);
        expect(response.status).toBe(413);
        expect(await response.json()).toEqual({ status: 413, message: 'Request body too large', data: null });
      });

      it('a body of exactly 1 MiB is not too large (it reaches validation: 400 "Invalid input")', async () => {
        const body = bookBodyOfLength(MIB);
        expect(Buffer.byteLength(body)).toBe(MIB);
        const response = await service.client.request('POST', '/book', {
          token,
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.body).toEqual({ status: 400, message: 'Invalid input', data: null });
      });
    });

    describe('every response is the JSON envelope, HTTP status == body.status, nosniff', () => {
      const requests: [string, string, string, () => { token?: string; body?: unknown; headers?: Record<string, string> }, number][] = [
        ['POST /token success', 'POST', '/token', () => ({ body: { username: TEST_USERNAME, password: TEST_PASSWORD } }), 200],
        ['POST /token bad payload', 'POST', '/token', () => ({ body: '{', headers: { 'content-type': 'application/json' } }), 400],
        ['POST /token wrong password', 'POST', '/token', () => ({ body: { username: TEST_USERNAME, password: 'x' } }), 401],
        ['POST /book success', 'POST', '/book', () => ({ token, body: VALID_BOOK }), 201],
        ['POST /book invalid', 'POST', '/book', () => ({ token, body: { title: 'x' } }), 400],
        ['POST /book no token', 'POST', '/book', () => ({ body: VALID_BOOK }), 401],
        ['POST /book bad token', 'POST', '/book', () => ({ token: 'garbage', body: VALID_BOOK }), 401],
        ['GET /books', 'GET', '/books', () => ({ token }), 200],
        ['GET /book/:id', 'GET', '/book/:id', () => ({ token }), 200],
        ['GET /book/:id missing', 'GET', '/book/999999999', () => ({ token }), 404],
        ['GET /book/abc', 'GET', '/book/abc', () => ({ token }), 404],
        ['PUT /book/:id', 'PUT', '/book/:id', () => ({ token, body: { year: 1966 } }), 200],
        ['PUT /book/:id invalid', 'PUT', '/book/:id', () => ({ token, body: { year: 'x' } }), 400],
        ['DELETE /book/missing', 'DELETE', '/book/999999999', () => ({ token }), 404],
        ['unknown route', 'GET', '/nope', () => ({}), 404],
        ['wrong method', 'PATCH', '/books', () => ({ token }), 405],
        ['oversize body', 'POST', '/book', () => ({ token, body: bookBodyOfLength(MIB + 1) }), 413],
      ];

      it.each(requests)('%s', async (_name, method, path, options, status) => {
        const response = await service.client.request(method, path.replace(':id', bookId), options());
        expect(response.status, response.text).toBe(status);
        expectJsonEnvelope(response);
        expect(response.headers.get('x-content-type-options')).toBe('nosniff');
        if (status >= 400) expect(response.body.data).toBeNull();
      });
    });

    describe('X-Request-Id', () => {
      it('is echoed when the client sends one', async () => {
        for (const [method, path, options] of [
          ['GET', '/books', { token }],
          ['GET', '/books', {}],
          ['GET', '/nope', {}],
        ] as const) {
          const response = await service.client.request(method, path, {
            ...options,
            headers: { 'x-request-id': 'req-1234.abc' },
          });
          expect(response.headers.get('x-request-id')).toBe('req-1234.abc');
        }
      });

      it('is generated, and differs per request, when the client sends none', async () => {
        const first = await service.client.request('GET', '/books', { token });
        const second = await service.client.request('GET', '/books');
        const ids = [first.headers.get('x-request-id'), second.headers.get('x-request-id')];
        for (const id of ids) expect(id).toMatch(/^\S{8,}$/);
        expect(ids[0]).not.toBe(ids[1]);
      });
    });

    describe('an undecodable :id (/book/%zz) is authenticated first, then 404', () => {
      it.each(['GET', 'PUT', 'DELETE'])('%s /book/%%zz with a token → 404 "Book not found"', async (method) => {
        const response = await service.client.request(method, '/book/%zz', {
          token,
          body: method === 'PUT' ? VALID_BOOK : undefined,
        });
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ status: 404, message: 'Book not found', data: null });
        expectJsonEnvelope(response);
        expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      });

      it.each(['GET', 'PUT', 'DELETE'])('%s /book/%%zz without a token → 401 "Authorization token required"', async (method) => {
        const response = await service.client.request(method, '/book/%zz', {
          body: method === 'PUT' ? VALID_BOOK : undefined,
        });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ status: 401, message: 'Authorization token required', data: null });
        expectJsonEnvelope(response);
      });

      it('GET /book/%zz with a garbage token → 401 "Invalid token"', async () => {
        const response = await service.client.request('GET', '/book/%zz', { token: 'garbage' });
        expect(response.body).toEqual({ status: 401, message: 'Invalid token', data: null });
      });
    });

    describe('POST /book and PUT /book/:id: prototype-poisoning bodies cannot be read as a book', () => {
      it.each([
        ['__proto__', '{"__proto__":{"x":1},"title":"a","author":"b","year":1}'],
        ['constructor.prototype', '{"constructor":{"prototype":{"x":1}},"title":"a","author":"b","year":1}'],
      ])('POST /book with a %s key → 400 "Invalid input", nothing stored', async (_name, body) => {
        const before = await bookCount();
        const response = await service.client.request('POST', '/book', {
          token,
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(400);
        expect(response.body).toEqual({ status: 400, message: 'Invalid input', data: null });
        expect(await bookCount()).toBe(before);
        expect(({} as Record<string, unknown>).x).toBeUndefined();
      });

      it('PUT /book/:id with a __proto__ key → 400 "Invalid input", book unchanged', async () => {
        const before = await service.client.request('GET', `/book/${bookId}`, { token });
        const response = await service.client.request('PUT', `/book/${bookId}`, {
          token,
          body: '{"__proto__":{"x":1},"title":"changed"}',
          headers: { 'content-type': 'application/json' },
        });
        expect(response.body).toEqual({ status: 400, message: 'Invalid input', data: null });
        const after = await service.client.request('GET', `/book/${bookId}`, { token });
        expect(after.body.data).toEqual(before.body.data);
      });
    });

    describe('HEAD', () => {
      it('HEAD /books with a token → 200, JSON, no body', async () => {
        const response = await fetch(`${service.current.baseUrl}/books`, { method: 'HEAD', headers: { authorization: token } });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        expect(await response.text()).toBe('');
      });

      it('HEAD /books without a token → 401 (authentication as for GET)', async () => {
        const response = await fetch(`${service.current.baseUrl}/books`, { method: 'HEAD' });
        expect(response.status).toBe(401);
      });

      it('HEAD /book/:id of an existing book with a token → 200', async () => {
        const response = await fetch(`${service.current.baseUrl}/book/${bookId}`, { method: 'HEAD', headers: { authorization: token } });
        expect(response.status).toBe(200);
      });
    });
  });
});
