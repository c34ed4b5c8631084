// nginx in front of two instances, from the repository's own configuration
// (deploy/nginx/book-service.conf; docs/scaling-out.md, "A reverse proxy in front: nginx"):
// two services on one PostgreSQL database, sharing the failed-login count in Redis and trusting
// nginx's X-Forwarded-For, behind a real nginx. Through it: a representative run of every
// route's rules, each answer the service's envelope; what nginx answers itself (bodies over
// 1 MiB, headers and URLs over the limit, URIs it refuses, malformed requests), each in the
// envelope the service gives for that request; nothing a client sends takes an instance out;
// the failed-login limit per client address; an instance killed, stopped and started again;
// both down.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ApiClient, type ApiResponse } from '../helpers/client/api-client.js';
import { INVALID_IDS, type Book } from '../helpers/client/books.js';
import { ChangeStream, type Refused } from '../helpers/client/change-stream.js';
import { expectBook, expectEnvelope, expectEnvelopeShape, type AnyResponse } from '../helpers/client/envelope.js';
import {
  INVALID_IDEMPOTENCY_KEY,
  KEY_IN_PROGRESS,
  KEY_USED_FOR_ANOTHER_REQUEST,
  PRECONDITION_FAILED,
  describeAnswer,
  expectAnswer,
  headerOf,
  isReplayed,
  rawRequest as rawKeyedRequest,
  strongEtagOf,
} from '../helpers/client/idempotency.js';
import { halfClosedExchange, rawExchange, rawRequest, requestBytes, type RawExchange, type RawRequest, type RawResponse } from '../helpers/client/raw-http.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { hmacTokenFor, nowSeconds, signHmac, unsecuredToken } from '../helpers/client/tokens.js';
import { startNginx, type PrivateNginx } from '../helpers/infra/nginx.js';
import { createPrivateRedis, type PrivateRedis } from '../helpers/infra/redis-server.js';
import { describeIf } from '../helpers/requirements.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';

const MIB = 1024 * 1024;
const KIB = 1024;
const LOGIN_LIMIT = 10;
const ORIGIN = 'https://books.example';
const NO_BOOK = '/book/9000000000000000000';
/** The instances' REQUEST_TIMEOUT: a client slower than that is nginx's to wait for. */
const REQUEST_TIMEOUT_S = 1;

/** A JSON book body whose title makes the whole text exactly `bytes` long. */
function bookBodyOfLength(bytes: number): string {
  const empty = JSON.stringify({ title: '', author: 'a', year: 1 });
  return JSON.stringify({ title: 'x'.repeat(bytes - empty.length), author: 'a', year: 1 });
}

/** The security headers the service puts on every answer; nginx's own answers carry them too. */
function expectSecurityHeaders(answer: AnyResponse) {
  const header = (name: string) => (answer.headers instanceof Headers ? answer.headers.get(name) : answer.headers[name]) ?? undefined;
  const where = `HTTP ${answer.status} ${JSON.stringify(answer.headers instanceof Headers ? Object.fromEntries(answer.headers) : answer.headers)}`;
  expect(header('x-content-type-options'), where).toBe('nosniff');
  expect(header('content-security-policy'), where).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(header('x-request-id') ?? '', where).toMatch(/^[A-Za-z0-9._:@/+=-]{1,128}$/);
}

/** The one complete answer of a raw exchange. */
function answerOf(exchange: RawExchange): RawResponse {
  if (exchange.response === undefined) {
    throw new Error(`no complete answer (closed: ${exchange.closed}, error: ${exchange.error}): ${JSON.stringify(exchange.received.toString('latin1').slice(0, 300))}`);
  }
  return exchange.response;
}

// Skipped (with the reason printed) where PostgreSQL, redis-server or nginx is missing; under CI=true it fails instead.
describeIf('postgres', 'redis-server', 'nginx')('nginx in front of two instances (deploy/nginx/book-service.conf)', () => {
  let store: TestStore;
  let redis: PrivateRedis;
  let nginx: PrivateNginx;
  /** The two instances; replaced when a test starts one again. */
  const instances: ChildService[] = [];
  let client: ApiClient;
  let token: string;

  const startInstance = (port?: number) =>
    startService({
      childProcess: true,
      dbUrl: store.url,
      port,
      // As docs/scaling-out.md says for instances behind a balancer: nginx's address trusted,
      // the failed-login count in Redis. A whole request must reach an instance within a
      // second: nginx hands it over whole, however slowly the client sent it.
      env: {
        TRUST_PROXY: '127.0.0.1',
        LOGIN_LIMIT_STORE: redis.url,
        LOGIN_RATE_LIMIT: String(LOGIN_LIMIT),
        CORS_ORIGINS: ORIGIN,
        REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_S),
      },
    });

  /** One request through nginx over a fresh connection, exactly as given. */
  const raw = (request: RawRequest, options: { localAddress?: string; timeoutMs?: number } = {}) => rawRequest(nginx.port, request, options);
  const auth = (): Array<[string, string]> => [['Authorization', token]];

  beforeAll(async () => {
    [store, redis] = await Promise.all([createTestStore('postgres'), createPrivateRedis()]);
    instances.push(...(await Promise.all([startInstance(), startInstance()])));
    nginx = await startNginx({ instances: instances.map((instance) => `127.0.0.1:${instance.port}`) });
    client = new ApiClient(nginx.baseUrl);
    token = await client.token();
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
    await killAllChildServices();
    await redis?.stop();
    await store?.drop();
  }, 60_000);

  afterEach((context) => {
    if (context.task.result?.state === 'fail' && nginx) console.error(`nginx's error log, last lines:\n${nginx.errorLogTail()}`);
  });

  it('POST /token, and every protected route refuses a missing, malformed, forged or expired token, and a 100 KB one', async () => {
    const login = await client.request('POST', '/token', { body: { username: TEST_USERNAME, password: TEST_PASSWORD } });
    expect(expectEnvelope(login, 200, 'Token generated successfully', login.body.data).data).toEqual({ token: expect.any(String) });
    expect(login.headers.get('cache-control')).toBe('no-store');
    expectEnvelope(await client.request('POST', '/token', { body: {} }), 400, 'Invalid request payload', null);
    expectEnvelope(await client.request('POST', '/token', { body: 'not json' }), 400, 'Invalid request payload', null);

    const forged: Array<[string, string]> = [
      ['garbage', 'not.a.token'],
      ['alg none', unsecuredToken({ exp: nowSeconds() + 600 })],
      ['expired', hmacTokenFor('HS256', { exp: nowSeconds() - 10 })],
      ['100 KB', `ey${'A'.repeat(100_000)}`],
    ];
    const routes: Array<[string, string]> = [
      ['GET', '/books'],
      ['POST', '/book'],
      ['GET', '/book/1'],
      ['PUT', '/book/1'],
      ['DELETE', '/book/1'],
    ];
    for (const [method, path] of routes) {
      expectEnvelope(await client.request(method, path), 401, 'Authorization token required', null);
      for (const [, bad] of forged) expectEnvelope(await client.request(method, path, { token: bad }), 401, 'Invalid token', null);
    }
    // Accepted: bare, Bearer, another HMAC of the family.
    for (const good of [token, `Bearer ${token}`, await signHmac({ exp: nowSeconds() + 600 }, 'HS512')]) {
      expectEnvelope(await client.request('GET', '/books', { token: good }), 200, 'Books retrieved successfully', expect.any(Array));
    }
  });

  it('create, read, list, update and delete a book, with ETag, If-None-Match (304) and If-Match (412)', async () => {
    const created = await client.request('POST', '/book', { token, body: { title: 'Dune', author: 'Frank Herbert', year: 1965 } });
    const book = expectBook(expectEnvelope(created, 201, 'Book created successfully', created.body.data).data);
    expectSecurityHeaders(created);
    const etag = strongEtagOf(created);
    expectEnvelope(await client.request('POST', '/book', { token, body: { title: 'Dune', year: 1965 } }), 400, 'Invalid input', null);
    expectEnvelope(await client.request('POST', '/book', { token, body: { title: 'Dune', author: 'F', year: '1965' } }), 400, 'Invalid input', null);
    expectEnvelope(await client.request('POST', '/book', { token, body: '{"title":' }), 400, 'Invalid input', null);

    const read = await client.request('GET', `/book/${book.id}`, { token });
    expectEnvelope(read, 200, 'Book retrieved successfully', book);
    expect(strongEtagOf(read)).toBe(etag);
    // nginx leaves conditional requests to the service: 304 with the ETag and no body.
    const notModified = await client.request('GET', `/book/${book.id}`, { token, headers: { 'if-none-match': etag } });
    expect(notModified.status, describeAnswer(notModified)).toBe(304);
    expect(notModified.text).toBe('');
    expect(headerOf(notModified, 'etag')).toBe(etag);
    expectEnvelope(await client.request('GET', `/book/00${book.id}`, { token }), 200, 'Book retrieved successfully', book);
    expectEnvelope(await client.request('GET', NO_BOOK, { token }), 404, 'Book not found', null);

    const list = await client.request('GET', '/books', { token });
    expect(expectEnvelope(list, 200, 'Books retrieved successfully', list.body.data).data).toContainEqual(book);

    const updated = await client.request('PUT', `/book/${book.id}`, { token, body: { year: 1966 }, headers: { 'if-match': etag } });
    expectEnvelope(updated, 200, 'Book updated successfully', { ...book, year: 1966 });
    expect(strongEtagOf(updated)).not.toBe(etag);
    expectAnswer(await client.request('PUT', `/book/${book.id}`, { token, body: { year: 1967 }, headers: { 'if-match': etag } }), PRECONDITION_FAILED);
    expectAnswer(await client.request('DELETE', `/book/${book.id}`, { token, headers: { 'if-match': etag } }), PRECONDITION_FAILED);
    expectEnvelope(await client.request('PUT', `/book/${book.id}`, { token, body: { year: 'x' } }), 400, 'Invalid input', null);
    expectEnvelope(await client.request('PUT', NO_BOOK, { token, body: { year: 'x' } }), 404, 'Book not found', null);
    expectEnvelope(await client.request('PUT', `/book/${book.id}`, { token, body: {} }), 200, 'Book updated successfully', { ...book, year: 1966 });

    expectEnvelope(await client.request('DELETE', `/book/${book.id}`, { token }), 200, 'Book deleted successfully', null);
    expectEnvelope(await client.request('GET', `/book/${book.id}`, { token }), 404, 'Book not found', null);
    expectEnvelope(await client.request('DELETE', `/book/${book.id}`, { token }), 404, 'Book not found', null);
  });

  it('every value that is not an id answers 404 "Book not found" after the token check, as from the service', async () => {
    const { id } = await client.createBook(token, { title: 'Ids', author: 'I. D.', year: 2001 });
    for (const [name, idOf] of INVALID_IDS) {
      const path = `/book/${idOf(id)}`;
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const answer = await client.request(method, path, { token, body: method === 'PUT' ? { year: 1 } : undefined });
        expect(answer.body, `${method} ${path} (${name})`).toEqual({ status: 404, message: 'Book not found', data: null });
        expectEnvelopeShape(answer, `${method} ${path}`);
      }
    }
  });

  it('404 "Route not found", 405 with Allow, HEAD, CORS, X-Request-Id: the service\'s own answers and headers', async () => {
    for (const [method, path] of [['GET', '/nope'], ['POST', '/nope'], ['GET', '/book/1/extra'], ['GET', '/.nginx/unavailable'], ['GET', '/.nginx/bad-request']] as const) {
      expectEnvelope(await client.request(method, path, { token }), 404, 'Route not found', null);
    }
    for (const [method, path, allow] of [
      ['PATCH', '/book/1', 'DELETE, GET, HEAD, PUT'],
      ['POST', '/book/1', 'DELETE, GET, HEAD, PUT'],
      ['DELETE', '/books', 'GET, HEAD'],
      ['GET', '/token', 'POST'],
    ] as const) {
      const answer = await client.request(method, path, { token });
      expectEnvelope(answer, 405, 'Method not allowed', null);
      expect((answer.headers.get('allow') ?? '').split(',').map((m) => m.trim()).sort().join(', '), `${method} ${path}`).toBe(allow);
    }
    const head = await fetch(`${nginx.baseUrl}/books`, { method: 'HEAD', headers: { authorization: token } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);

    const preflight = await fetch(`${nginx.baseUrl}/books`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, if-none-match' },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers') ?? '').toMatch(/if-none-match/i);
    const cors = await client.request('GET', '/books', { token, headers: { origin: ORIGIN } });
    expect(cors.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(cors.headers.get('access-control-expose-headers') ?? '').toMatch(/etag/i);

    // The client's X-Request-Id reaches the service and comes back; without one, nginx's id does.
    const named = await client.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-42' } });
    expect(named.headers.get('x-request-id')).toBe('trace-42');
    const unnamed = await client.request('GET', '/healthz');
    expect(unnamed.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(nginx.accessLog().some((line) => line.includes(`rid=${unnamed.headers.get('x-request-id')}`))).toBe(true);
    expectSecurityHeaders(unnamed);
  });

  it('GET /books/changes streams through nginx event by event, from either instance; a client that leaves ends the stream at its instance', async () => {
    const cursor = (await client.request('GET', '/books', { token })).headers.get('changes-cursor')!;
    const stream = await ChangeStream.follow(nginx.baseUrl, { token, after: cursor });
    try {
      expect(stream.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      // Each write reaches the stream on its own, well within a second: nothing is held back
      // to fill a buffer (a 1-event write is a few hundred bytes).
      for (let i = 0; i < 3; i++) {
        const sent = Date.now();
        const book = await client.createBook(token, { title: `Streamed ${i}`, author: 'Through nginx', year: 2000 + i });
        await stream.until(() => stream.events.some((event) => event.data.id === book.id), 1_000, `the event of book ${book.id}`);
        expect(Date.now() - sent).toBeLessThan(1_000);
      }
      // The cursor's errors are the service's envelopes.
      const refused = (await ChangeStream.open(nginx.baseUrl, { token, after: 'not-a-cursor' })) as Refused;
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe('Invalid change cursor: not issued by this service');
    } finally {
      stream.close();
    }
    // proxy_ignore_client_abort off for this route: the instance lets go of the stream.
    const streamsOpen = async () => {
      let open = 0;
      for (const instance of instances) {
        const metrics = await (await fetch(`${instance.baseUrl}/metrics`)).text();
        open += Number(/^book_change_streams (\d+)/m.exec(metrics)?.[1] ?? 0);
      }
      return open;
    };
    await expect.poll(streamsOpen, { timeout: 5_000 }).toBe(0);
  });

  it('Idempotency-Key: a repeat gets the stored answer, another request with the key 422, an invalid key 400', async () => {
    const key = `nginx-${randomUUID()}`;
    const body = { title: `Keyed ${key}`, author: 'K. Ey', year: 1999 };
    const first = await client.request('POST', '/book', { token, body, headers: { 'idempotency-key': key } });
    expectEnvelope(first, 201, 'Book created successfully', first.body.data);
    expect(isReplayed(first)).toBe(false);
    const repeat = await client.request('POST', '/book', { token, body, headers: { 'idempotency-key': key } });
    expect(repeat.status).toBe(201);
    expect(repeat.text).toBe(first.text);
    expect(isReplayed(repeat)).toBe(true);
    expect(headerOf(repeat, 'etag')).toBe(headerOf(first, 'etag'));
    expectAnswer(await client.request('POST', '/book', { token, body: { ...body, year: 2000 }, headers: { 'idempotency-key': key } }), KEY_USED_FOR_ANOTHER_REQUEST);
    expectAnswer(await rawKeyedRequest(nginx.baseUrl, 'POST', '/book', { token, keyBytes: Buffer.alloc(0), body: JSON.stringify(body) }), INVALID_IDEMPOTENCY_KEY);
    expectAnswer(await rawKeyedRequest(nginx.baseUrl, 'POST', '/book', { token, keyBytes: Buffer.from('k'.repeat(256)), body: JSON.stringify(body) }), INVALID_IDEMPOTENCY_KEY);
  });

  it('bodies: 1 MiB reaches the service; 1 MiB + 1 is nginx\'s 413 envelope, with Content-Length, chunked, or Expect: 100-continue before the body', async () => {
    // Exactly 1 MiB: the service reads it (a title of a million characters is not a book).
    for (const chunked of [false, true]) {
      expectEnvelope(answerOf(await raw({ method: 'POST', path: '/book', headers: auth(), body: bookBodyOfLength(MIB), chunked })), 400, 'Invalid input', null);
    }
    for (const chunked of [false, true]) {
      const answer = answerOf(await raw({ method: 'POST', path: '/book', headers: auth(), body: bookBodyOfLength(MIB + 1), chunked }));
      expectEnvelope(answer, 413, 'Request body too large', null);
      expectSecurityHeaders(answer);
      expect(answer.headers.connection).toBe('close');
    }
    expectEnvelope(answerOf(await raw({ method: 'PUT', path: '/book/1', headers: auth(), body: 'x'.repeat(2 * MIB) })), 413, 'Request body too large', null);
    expectEnvelope(answerOf(await raw({ method: 'POST', path: '/token', body: 'x'.repeat(MIB + 1) })), 413, 'Request body too large', null);
    // Expect: 100-continue with a Content-Length over the limit: the 413 comes at once, with no
    // 100 Continue, so the client never sends the body.
    const refused = await rawExchange(nginx.port, (socket) => void socket.write(`POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nExpect: 100-continue\r\nContent-Length: ${2 * MIB}\r\n\r\n`));
    expect(refused.received.toString('latin1')).toMatch(/^HTTP\/1\.1 413 /);
    expectEnvelope(answerOf(refused), 413, 'Request body too large', null);
    // Within the limit, nginx answers 100 Continue itself and the service gets the body.
    const body = JSON.stringify({ title: 'Continued', author: 'E. Xpect', year: 100 });
    const continued = await rawExchange(nginx.port, async (socket) => {
      socket.write(`POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
      await waitFor(socket, 'HTTP/1.1 100 Continue\r\n\r\n');
      socket.write(body);
    });
    expect(continued.received.toString('latin1')).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
    expect(expectBook(expectEnvelopeShape(answerOf(continued)).data).title).toBe('Continued');
  });

  it('request headers: 100 KB reach the service (401 "Invalid token"); past 127 KiB in all, nginx answers 431 "Request Header Fields Too Large"', async () => {
    const bigToken = answerOf(await raw({ method: 'GET', path: '/books', headers: [['Authorization', `ey${'A'.repeat(100_000)}`]] }));
    expectEnvelope(bigToken, 401, 'Invalid token', null);
    // Just under nginx's 127 KiB: the service reads it and answers.
    const under = answerOf(await raw({ method: 'GET', path: '/books', headers: [...auth(), ['X-Padding', 'p'.repeat(126 * KIB - token.length)]] }));
    expectEnvelope(under, 200, 'Books retrieved successfully', under.body && JSON.parse(under.body).data);
    for (const headers of [
      [['X-Padding', 'p'.repeat(128 * KIB)]],
      [['X-A', 'a'.repeat(100 * KIB)], ['X-B', 'b'.repeat(100 * KIB)]],
      [['Authorization', `ey${'A'.repeat(200 * KIB)}`]],
    ] as Array<Array<[string, string]>>) {
      const answer = answerOf(await raw({ method: 'GET', path: '/books', headers }));
      expectEnvelope(answer, 431, 'Request Header Fields Too Large', null);
      expectSecurityHeaders(answer);
    }
  });

  it('a long URL: 100 KB reaches the service (404); 200 KB is 431 "Request Header Fields Too Large", as from the service', async () => {
    expectEnvelope(answerOf(await raw({ method: 'GET', path: `/book/${'9'.repeat(100_000)}`, headers: auth() })), 404, 'Book not found', null);
    expectEnvelope(answerOf(await raw({ method: 'GET', path: `/${'a'.repeat(100_000)}` })), 404, 'Route not found', null);
    expectEnvelope(answerOf(await raw({ method: 'GET', path: `/books?${'q'.repeat(100_000)}`, headers: auth() })), 200, 'Books retrieved successfully', expect.any(Array));
    const tooLong = answerOf(await raw({ method: 'GET', path: `/book/${'9'.repeat(200_000)}`, headers: auth() }));
    expectEnvelope(tooLong, 431, 'Request Header Fields Too Large', null);
    expectSecurityHeaders(tooLong);
  });

  it('URIs nginx refuses before reading the headers (/book/%00, %zz, /..): the envelope the service gives a valid token', async () => {
    const cases: Array<[string, string, number, string]> = [
      ['GET', '/book/%00', 404, 'Book not found'],
      ['PUT', '/book/1%00', 404, 'Book not found'],
      ['DELETE', '/book/%zz', 404, 'Book not found'],
      ['HEAD', '/book/%00', 404, ''],
      ['GET', '/book/..%00', 404, 'Book not found'],
      ['POST', '/book/%00', 405, 'Method not allowed'],
      ['GET', '/%00', 404, 'Route not found'],
      ['GET', '/books%00', 404, 'Route not found'],
      ['POST', '/token%00', 404, 'Route not found'],
      ['GET', '/../books', 404, 'Route not found'],
      ['GET', '/%zz', 400, 'Bad request'],
      ['OPTIONS', '*', 404, 'Route not found'],
    ];
    for (const [method, path, status, message] of cases) {
      // With a token (the service's answer to it), and without: nginx has not read the headers
      // when it refuses the URI, so it answers both alike (the service: 401 without a token).
      for (const headers of [auth(), []]) {
        const answer = answerOf(await raw({ method, path, headers }, { timeoutMs: 5_000 }));
        if (method === 'HEAD') {
          expect(answer.status, `${method} ${path}`).toBe(status);
          continue;
        }
        expectEnvelope(answer, status, message, null);
        expectSecurityHeaders(answer);
        if (status === 405) expect(answer.headers.allow).toBe('GET, HEAD, PUT, DELETE');
      }
    }
  });

  it('malformed requests over a raw socket: 400 "Bad request" envelopes, as from the service (but for CONNECT and Host)', async () => {
    const malformed: Array<[string, Buffer]> = [
      ['not HTTP', Buffer.from('GARBAGE\r\n\r\n')],
      ['no Host in HTTP/1.1', Buffer.from('GET /books HTTP/1.1\r\nConnection: close\r\n\r\n')],
      ['two Content-Length', Buffer.from('POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}')],
      ['Content-Length and chunked', Buffer.from('POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')],
      ['unknown Transfer-Encoding', Buffer.from('POST /book HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n')],
      ['a bad chunk size', Buffer.from('POST /book HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n')],
      ['a control character in the request line', Buffer.from('GET /book/1\x01 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
      ['raw UTF-8 in the path', Buffer.from('GET /book/é HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'utf8')],
      ['raw UTF-8 in the query', Buffer.from('GET /books?q=é HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'utf8')],
      ['HTTP/2.0 on the request line', Buffer.from('GET /books HTTP/2.0\r\nHost: x\r\n\r\n')],
      ['more after the version on the request line', Buffer.from('GET /books HTTP/1.1 junk\r\nHost: x\r\n\r\n')],
      ['a header name with a space', Buffer.from('GET /books HTTP/1.1\r\nHost: x\r\nNo Colon: 1\r\n\r\n')],
      ['CONNECT (the service closes without an answer)', Buffer.from('CONNECT books.example:443 HTTP/1.1\r\nHost: books.example:443\r\n\r\n')],
      ['a Host that is no host name (the service does not read Host)', Buffer.from('GET /books HTTP/1.1\r\nHost: a/b\r\n\r\n')],
    ];
    for (const [name, bytes] of malformed) {
      const answer = answerOf(await rawExchange(nginx.port, (socket) => void socket.write(bytes), { timeoutMs: 5_000 }));
      expect(answer.status, name).toBe(400);
      expectEnvelope(answer, 400, 'Bad request', null);
      expectSecurityHeaders(answer);
    }
  });

  it('no request takes an instance out of the rotation: a header the service refuses, 200 KB of headers, raw bytes', async () => {
    // Node's parser refuses a control character in a header value; on a connection that
    // already carried a request the service then closes without an answer. Each time, first
    // warm: nginx keeps a connection open to each instance, and reuses it.
    for (let i = 0; i < 4; i++) {
      for (let warm = 0; warm < 4; warm++) expect((await client.request('GET', '/healthz')).status).toBe(200);
      const answer = answerOf(await raw({ method: 'GET', path: '/books', headers: [...auth(), ['X-Note', Buffer.from('a\x01b', 'latin1')]] }));
      // The service's 400 when an instance got it on a new connection, else 503 once each
      // instance dropped it (docs/scaling-out.md).
      expect([400, 503], describeAnswer(answer)).toContain(answer.status);
      expectEnvelope(answer, answer.status, answer.status === 400 ? 'Bad request' : 'Service unavailable', null);
      expectEnvelope(answerOf(await raw({ method: 'GET', path: '/books', headers: [['X-Big', 'b'.repeat(200 * KIB)]] })), 431, 'Request Header Fields Too Large', null);
      expectEnvelope(answerOf(await raw({ method: 'GET', path: '/book/\xff', headers: auth() })), 400, 'Bad request', null);
    }
    // Both instances still serve: not one request of these is refused.
    const answers = await Promise.all(Array.from({ length: 12 }, () => client.request('GET', '/books', { token })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
  });

  it('keeps connections to the instances open and reuses them (keep-alive): 20 requests close none', async () => {
    const before = instances.map((instance) => closedConnections(instance.port));
    for (let i = 0; i < 20; i++) expect((await client.request('GET', '/healthz')).status).toBe(200);
    // Without keep-alive each request has a connection of its own, closed after its answer:
    // 10 more closed connections (TIME_WAIT) on each instance's port.
    instances.forEach((instance, i) => {
      expect(closedConnections(instance.port) - before[i]!, `connections to 127.0.0.1:${instance.port} closed`).toBeLessThanOrEqual(1);
    });
  });

  it('HTTP/1.0, pipelined requests, a half-closed client and a slow upload: each request answered', async () => {
    const old = answerOf(await rawExchange(nginx.port, (socket) => void socket.write(`GET /books HTTP/1.0\r\nAuthorization: ${token}\r\n\r\n`), { untilClose: true }));
    expectEnvelope(old, 200, 'Books retrieved successfully', expect.any(Array));

    const body = JSON.stringify({ title: 'Pipelined', author: 'P. Ipe', year: 2002 });
    const pipelined = Buffer.concat([
      requestBytes({ method: 'GET', path: '/healthz', headers: [['Connection', 'keep-alive']] }),
      requestBytes({ method: 'POST', path: '/book', headers: [...auth(), ['Connection', 'keep-alive']], body }),
      requestBytes({ method: 'GET', path: '/books', headers: [...auth(), ['Connection', 'keep-alive']] }),
    ]);
    // Sent at once, then the client's FIN: every answer still comes, in order.
    const exchange = await halfClosedExchange(nginx.port, pipelined, { timeoutMs: 10_000 });
    expect(exchange.responses.map((answer) => answer.status), describeAnswer(exchange.responses[0] ?? { status: 0, headers: {}, body: '' })).toEqual([200, 201, 200]);
    for (const answer of exchange.responses) expectEnvelopeShape(answer);
    const stored = JSON.parse(exchange.responses[1]!.body).data as Book;
    expect((JSON.parse(exchange.responses[2]!.body).data as Book[]).map((book) => book.id)).toContain(stored.id);

    // A body trickled in over more than twice the instances' REQUEST_TIMEOUT: nginx buffers it,
    // and the instance gets it whole (unbuffered, the instance would time it out: 408, or
    // nothing on a reused connection).
    const started = Date.now();
    const slow = await rawExchange(nginx.port, async (socket) => {
      socket.write(`POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
      const step = Math.ceil(body.length / 10);
      for (let i = 0; i < body.length; i += step) {
        await sleep((REQUEST_TIMEOUT_S * 250));
        socket.write(body.slice(i, i + step));
      }
    });
    expect(Date.now() - started).toBeGreaterThan(REQUEST_TIMEOUT_S * 2_000);
    expectEnvelope(answerOf(slow), 201, 'Book created successfully', JSON.parse(answerOf(slow).body).data);
  });

  it('the failed-login limit counts per client address across both instances, and X-Forwarded-For cannot choose another', async () => {
    const login = (password: string, localAddress: string, headers: Array<[string, string]> = []) =>
      raw({ method: 'POST', path: '/token', headers: [['Content-Type', 'application/json'], ...headers], body: JSON.stringify({ username: TEST_USERNAME, password }) }, { localAddress }).then(answerOf);
    // Two clients: nginx sees 127.0.0.2 and 127.0.0.3 (both loopback on Linux).
    for (let i = 0; i < LOGIN_LIMIT; i++) expectEnvelope(await login('wrong', '127.0.0.2'), 401, 'Invalid credentials', null);
    const limited = await login('wrong', '127.0.0.2');
    expectEnvelope(limited, 429, 'Too many requests', null);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expectEnvelope(await login(TEST_PASSWORD, '127.0.0.2'), 429, 'Too many requests', null);
    // An X-Forwarded-For sent by a client changes nothing: nginx sends the address it saw. Not
    // to get out of a limit, nor to be counted as another client, even from 127.0.0.1, which
    // the instances trust as nginx's address.
    expectEnvelope(await login(TEST_PASSWORD, '127.0.0.2', [['X-Forwarded-For', '203.0.113.9']]), 429, 'Too many requests', null);
    expectEnvelope(await login('wrong', '127.0.0.1', [['X-Forwarded-For', '127.0.0.2']]), 401, 'Invalid credentials', null);
    expect((await login(TEST_PASSWORD, '127.0.0.1', [['X-Forwarded-For', '127.0.0.2']])).status).toBe(200);
    // The other client is not limited.
    expect((await login(TEST_PASSWORD, '127.0.0.3')).status).toBe(200);
    expectEnvelope(await login('wrong', '127.0.0.3'), 401, 'Invalid credentials', null);
    // Both instances answered 127.0.0.2's logins: the count is one, in Redis.
    const upstreams = new Set(nginx.accessLog().filter((line) => line.startsWith('127.0.0.2 ')).map((line) => /upstream=(\S+)/.exec(line)?.[1]));
    expect(upstreams).toEqual(new Set(instances.map((instance) => `127.0.0.1:${instance.port}`)));
  });

  it('an instance killed and started again, then the other stopped and started again: every read and PUT answered 200, each POST stored at most once', async () => {
    const { id } = await client.createBook(token, { title: 'Failover', author: 'F. Ail', year: 1 });
    let running = true;
    const statuses: Record<string, number[]> = { GET: [], PUT: [], POST: [] };
    const posts = new Map<string, number>();
    const notEnvelopes: string[] = [];
    const record = (method: string, answer: ApiResponse) => {
      statuses[method]!.push(answer.status);
      try {
        expectEnvelopeShape(answer, method, { allowServerError: true });
      } catch {
        notEnvelopes.push(describeAnswer(answer));
      }
    };
    const reads = async () => {
      while (running) {
        record('GET', await client.request('GET', `/book/${id}`, { token }));
        record('GET', await client.request('GET', '/books', { token }));
      }
    };
    const writes = async () => {
      for (let n = 0; running; n++) {
        record('PUT', await client.request('PUT', `/book/${id}`, { token, body: { year: n % 9999 } }));
        const key = `failover-${randomUUID()}`;
        const answer = await client.request('POST', '/book', { token, body: { title: key, author: 'F. Ail', year: 2 }, headers: { 'idempotency-key': key } });
        record('POST', answer);
        posts.set(key, answer.status);
      }
    };
    const load = [reads(), reads(), writes(), writes()];

    await sleep(300);
    const [first, second] = instances as [ChildService, ChildService];
    await first.stop('SIGKILL');
    await sleep(300);
    instances[0] = await startInstance(first.port);
    await sleep(300);
    await second.stop('SIGTERM');
    await sleep(300);
    instances[1] = await startInstance(second.port);
    await sleep(300);
    running = false;
    await Promise.all(load);

    expect(notEnvelopes).toEqual([]);
    // Reads and PUTs (idempotent) that reached a dying instance were sent again to the other.
    expect(statuses.GET!.filter((status) => status !== 200)).toEqual([]);
    expect(statuses.PUT!.filter((status) => status !== 200)).toEqual([]);
    // A POST is never sent twice by nginx: 201, or 503 when the instance died with it.
    expect(statuses.POST!.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    expect(statuses.GET!.length).toBeGreaterThan(20);

    // Sent again with its key, a POST answered 503 is stored once at most: 201 (the first one's
    // answer replayed, or this one's), or 409 while the killed instance's claim on the key lasts.
    const list = await client.request('GET', '/books', { token });
    const titles = (list.body.data as Book[]).map((book) => book.title);
    for (const [key, status] of posts) {
      if (status === 503) {
        const again = await client.request('POST', '/book', { token, body: { title: key, author: 'F. Ail', year: 2 }, headers: { 'idempotency-key': key } });
        if (again.status === 409) expectAnswer(again, KEY_IN_PROGRESS);
        else expect(again.status, describeAnswer(again)).toBe(201);
      }
    }
    const after = ((await client.request('GET', '/books', { token })).body.data as Book[]).map((book) => book.title);
    for (const [key, status] of posts) {
      const stored = after.filter((title) => title === key).length;
      expect(stored, key).toBeLessThanOrEqual(1);
      if (status === 201) expect(titles.filter((title) => title === key).length, key).toBe(1);
    }
  }, 30_000);

  it('both instances down: 503 "Service unavailable" envelope, with the security headers', async () => {
    await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
    for (const [method, path, body] of [['GET', '/books', undefined], ['POST', '/book', { title: 'T', author: 'A', year: 1 }], ['GET', '/healthz', undefined]] as const) {
      const answer = await client.request(method, path, { token, body });
      expectEnvelope(answer, 503, 'Service unavailable', null);
      expectSecurityHeaders(answer);
    }
  });
});

/** How many TCP connections to or from `port` on 127.0.0.1 were closed lately (TIME_WAIT), from /proc/net/tcp. */
function closedConnections(port: number): number {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local, remote, state]) => (local?.endsWith(suffix) || remote?.endsWith(suffix)) && state === '06').length;
}

/** Resolves once `socket` has received `text`. */
function waitFor(socket: Socket, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes(text)) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before "${text.trim()}": ${received}`)));
  });
}
